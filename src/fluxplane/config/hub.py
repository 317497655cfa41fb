"""Where the hub keeps each workload cluster: its namespace and its kubeconfig Secret.

Everything that refers to a workload cluster from the management cluster (the composite resource,
the Flux objects that target the spoke, provider configs) takes the names from here, so the
composition that writes the kubeconfig and the objects that read it cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The namespace Flux's controllers and their objects live in, on the hub and on every workload cluster.
FLUX_NAMESPACE = "flux-system"
#: Where the spoke bootstrap (fluxplane.charts.spokes) installs External Secrets on every workload cluster.
EXTERNAL_SECRETS_NAMESPACE = "external-secrets"
#: Where it installs the Sealed Secrets controller, next to the fleet's sealing key (Secret sealed-secrets-key).
SEALED_SECRETS_NAMESPACE = "kube-system"
#: The service account External Secrets runs as on every workload cluster (namespace:name).
EXTERNAL_SECRETS_SERVICE_ACCOUNT = f"{EXTERNAL_SECRETS_NAMESPACE}:external-secrets"

#: Key of the bootstrap ConfigMap that holds the ARN of External Secrets' IAM role.
EXTERNAL_SECRETS_ROLE_ARN_KEY = "external-secrets-role-arn"
#: Name of the provider-kubernetes ProviderConfig in each workload cluster's hub namespace, through which the hub
#: writes objects on that cluster (fluxplane.packs.workload_clusters makes it).
SPOKE_PROVIDER_CONFIG = "spoke"

#: Namespaces the platform itself runs in, on the hub or on a workload cluster: Kubernetes' default, Flux's,
#: Crossplane's and the spoke bootstrap's. Whoever may write in one of them holds the platform (the sealing
#: key sits in kube-system), so no app runs in one and no workload cluster is named after one (a cluster's
#: name is its hub namespace). The add-ons' namespaces are the packs' own (Pack.namespaces), which the config
#: layer does not know; fluxplane.synth.plan checks those.
PLATFORM_NAMESPACES = frozenset(
    {"default", FLUX_NAMESPACE, "crossplane-system", EXTERNAL_SECRETS_NAMESPACE, SEALED_SECRETS_NAMESPACE}
)
#: Kubernetes keeps every kube-* namespace for itself (kube-system, kube-public, kube-node-lease).
PLATFORM_PREFIX = "kube-"


@dataclass(frozen=True)
class KubeconfigSecret:
    """The Secret holding a workload cluster's kubeconfig, and the key Flux reads by default."""

    namespace: str
    name: str
    key: str = "value"


def cluster_namespace(cluster: str) -> str:
    """The hub namespace of ``cluster``: its composite resource, managed resources and kubeconfig."""
    return cluster


def kubeconfig_secret(cluster: str) -> KubeconfigSecret:
    return KubeconfigSecret(namespace=cluster_namespace(cluster), name=f"{cluster}-kubeconfig")


def platform_namespace(namespace: str) -> bool:
    """True when ``namespace`` is one the platform runs in: no app's, and no workload cluster's name."""
    return namespace in PLATFORM_NAMESPACES or namespace.startswith(PLATFORM_PREFIX)


def kubernetes_namespace(namespace: str) -> bool:
    """True for the namespaces Kubernetes itself makes on every cluster and keeps: default and every kube-*."""
    return namespace == "default" or namespace.startswith(PLATFORM_PREFIX)


def platform_namespaces_text() -> str:
    """The platform namespaces as messages list them: the names, then the prefix."""
    names = sorted(name for name in PLATFORM_NAMESPACES if not name.startswith(PLATFORM_PREFIX))
    return ", ".join(repr(name) for name in names) + f" or any {PLATFORM_PREFIX + '*'!r}"


@dataclass(frozen=True)
class BootstrapValues:
    """The ConfigMap the composition writes with what the spoke bootstrap needs from AWS (role ARNs)."""

    namespace: str
    name: str
    external_secrets_role_arn_key: str = EXTERNAL_SECRETS_ROLE_ARN_KEY


def bootstrap_values(cluster: str) -> BootstrapValues:
    return BootstrapValues(namespace=cluster_namespace(cluster), name=f"{cluster}-bootstrap")


#: The first Flux minor version whose kubeConfig.configMapRef reaches a cluster with cloud identity.
KEYLESS_FLUX = (2, 7)


def hub_access_config_map(cluster: str) -> str:
    """Name of the ConfigMap (in the cluster's hub namespace) that keyless Flux access reads."""
    return f"{cluster}-hub-access"


#: Annotation on the hub's objects whose deletion deletes something live (a cluster, its cloud resources,
#: what a Kustomization or HelmRelease installed): the Flux Kustomization that applies it, as
#: ``namespace/name``. When that changes, Flux prunes the object from the old Kustomization, possibly
#: before the new one adopts it; synth refuses such a move unless it is allowed (fluxplane.synth.guard).
#: On a workload cluster's hub namespace: the account it is in (its provider config), when not the hub's own.
ACCOUNT_LABEL = "fluxplane.io/account"
APPLIED_BY = "fluxplane.io/applied-by"


def applied_by(namespace: str, name: str) -> dict[str, str]:
    """The annotations that say which Flux Kustomization applies an object."""
    return {APPLIED_BY: f"{namespace}/{name}"}


#: The Kustomizations of a workload cluster's chain on the hub (in its hub namespace) that build it,
#: make its add-ons' IAM roles and its apps' AWS resources; the bootstrap steps follow them.
BUILD_STEP = "cluster"
IDENTITIES_STEP = "addon-identities"
RESOURCES_STEP = "app-resources"
#: The bootstrap steps every workload cluster's chain shares, in ``spokes/steps/<step>/`` (fluxplane.charts.spokes):
#: the chart's objects for them are named after the step, as a cluster's are after the cluster.
SHARED_STEPS = ("secret-store", "sealing-key")
#: The bootstrap steps that install a chart on the cluster, in ``spokes/<cluster>/<step>/``: the chart's objects
#: for them are named ``<cluster>-<step>``.
RELEASE_STEPS = ("external-secrets", "sealed-secrets", "flux")
