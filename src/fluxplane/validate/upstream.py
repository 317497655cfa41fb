"""Where ``fluxplane schemas pull`` downloads the CRDs of every API fluxplane emits, pinned.

One table, one URL per upstream file: the Flux v2.9 controllers (source v1.9.4, kustomize v1.9.4, helm v1.6.3,
notification v1.9.3), Sealed Secrets v0.36.6, Gateway API v1.6.1 and Kyverno v1.19.0 (chart 3.9.0), pinned here;
Crossplane, the crossplane-contrib AWS family, provider-kubernetes, External Secrets, Karpenter, cert-manager, Envoy
Gateway and the Flux Operator's FluxInstance at the versions fluxplane.packs.versions pins, so that upgrading one of
those packs there moves its URL too.

:data:`SHIPPED` names the CRDs fluxplane carries in the package (fluxplane/validate/data/crds, converted by
``scripts/build_crds.py`` from the upstream files of the shared CRD corpus, which also records their sources and
licences).
"""

from __future__ import annotations

from fluxplane.packs import versions
from fluxplane.packs.managed_resources import AWS_MANAGED_RESOURCES, NAMESPACED_GROUP

_GITHUB = "https://github.com"
_RAW = "https://raw.githubusercontent.com"
_FLUX = {"source": "v1.9.4", "kustomize": "v1.9.4", "helm": "v1.6.3", "notification": "v1.9.3"}
_CROSSPLANE = f"{_RAW}/crossplane/crossplane/v{versions.CROSSPLANE.version}/cluster/crds"
_AWS = f"{_RAW}/crossplane-contrib/provider-upjet-aws/{versions.PROVIDER_AWS}/package/crds"
_KUBERNETES = f"{_RAW}/crossplane-contrib/provider-kubernetes/{versions.PROVIDER_KUBERNETES}/package/crds"
_KARPENTER = f"{_RAW}/aws/karpenter-provider-aws/v{versions.KARPENTER.version}/pkg/apis/crds"

#: The provider configs (group ``aws.m.upbound.io``), and every managed resource fluxplane composes
#: (fluxplane.packs.managed_resources).
_AWS_KINDS = ("aws_providerconfigs", "aws_clusterproviderconfigs", *AWS_MANAGED_RESOURCES)


def _aws_group(service: str, family: str = NAMESPACED_GROUP) -> str:
    """``<service>.aws.m.upbound.io``; the family's own kinds (service ``aws``) are in ``aws.m.upbound.io``."""
    return family if service == "aws" else f"{service}.{family}"


def _aws(kind: str, family: str = NAMESPACED_GROUP) -> str:
    service, plural = kind.split("_", 1)
    return f"{_AWS}/{_aws_group(service, family)}_{plural}.yaml"


def _aws_shipped() -> dict[str, tuple[str, ...]]:
    """{group: plurals} of the managed resources fluxplane composes."""
    groups: dict[str, tuple[str, ...]] = {}
    for kind in AWS_MANAGED_RESOURCES:
        service, plural = kind.split("_", 1)
        groups[_aws_group(service)] = (*groups.get(_aws_group(service), ()), plural)
    return groups


URLS: tuple[str, ...] = (
    *(
        f"{_GITHUB}/fluxcd/{name}-controller/releases/download/{tag}/{name}-controller.crds.yaml"
        for name, tag in _FLUX.items()
    ),
    *(
        f"{_CROSSPLANE}/{file}.yaml"
        for file in (
            "apiextensions.crossplane.io_compositeresourcedefinitions",
            "apiextensions.crossplane.io_compositions",
            "apiextensions.crossplane.io_compositionrevisions",
            "apiextensions.crossplane.io_environmentconfigs",
            "apiextensions.crossplane.io_managedresourcedefinitions",
            "apiextensions.crossplane.io_managedresourceactivationpolicies",
            "pkg.crossplane.io_providers",
            "pkg.crossplane.io_functions",
            "pkg.crossplane.io_configurations",
            "pkg.crossplane.io_deploymentruntimeconfigs",
            "pkg.crossplane.io_imageconfigs",
            "protection.crossplane.io_usages",
            "protection.crossplane.io_clusterusages",
        )
    ),
    *(_aws(kind) for kind in _AWS_KINDS),
    _aws("aws_providerconfigs", "aws.upbound.io"),
    f"{_KUBERNETES}/kubernetes.m.crossplane.io_objects.yaml",
    f"{_KUBERNETES}/kubernetes.m.crossplane.io_providerconfigs.yaml",
    f"{_KUBERNETES}/kubernetes.m.crossplane.io_clusterproviderconfigs.yaml",
    f"{_RAW}/external-secrets/external-secrets/v{versions.EXTERNAL_SECRETS.version}/deploy/crds/bundle.yaml",
    f"{_RAW}/bitnami-labs/sealed-secrets/v0.36.6/helm/sealed-secrets/crds/bitnami.com_sealedsecrets.yaml",
    f"{_KARPENTER}/karpenter.sh_nodepools.yaml",
    f"{_KARPENTER}/karpenter.sh_nodeclaims.yaml",
    f"{_KARPENTER}/karpenter.k8s.aws_ec2nodeclasses.yaml",
    f"{_GITHUB}/cert-manager/cert-manager/releases/download/{versions.CERT_MANAGER.version}/cert-manager.crds.yaml",
    f"{_GITHUB}/kubernetes-sigs/gateway-api/releases/download/v1.6.1/standard-install.yaml",
    f"{_RAW}/envoyproxy/gateway/{versions.ENVOY_GATEWAY.version}/charts/gateway-helm/charts/crds/crds/generated/"
    "gateway.envoyproxy.io_envoyproxies.yaml",
    f"{_RAW}/kyverno/kyverno/v1.19.0/config/crds/kyverno/kyverno.io_clusterpolicies.yaml",
    f"{_RAW}/kyverno/kyverno/v1.19.0/config/crds/kyverno/kyverno.io_policies.yaml",
    f"{_RAW}/kyverno/kyverno/v1.19.0/config/crds/policies.kyverno.io/policies.kyverno.io_validatingpolicies.yaml",
    f"{_RAW}/controlplaneio-fluxcd/flux-operator/v{versions.FLUX_OPERATOR.version}/config/crd/bases/"
    "fluxcd.controlplane.io_fluxinstances.yaml",
)

#: The CRDs fluxplane ships, by API group: ``None`` for every CRD of the group, else the plurals of the kinds
#: fluxplane emits (a group shipped in part is partial: validate leaves its other kinds unchecked, with a warning).
#: Every group of URLS that the corpus holds, but the ones fluxplane emits nothing of (``aws.upbound.io``, the
#: cluster-scoped provider configs; External Secrets' generators, cert-manager's ACME orders and challenges).
SHIPPED: dict[str, tuple[str, ...] | None] = {
    "source.toolkit.fluxcd.io": None,
    "kustomize.toolkit.fluxcd.io": None,
    "helm.toolkit.fluxcd.io": None,
    "notification.toolkit.fluxcd.io": None,
    "apiextensions.crossplane.io": None,
    "pkg.crossplane.io": None,
    "protection.crossplane.io": None,
    NAMESPACED_GROUP: None,
    **_aws_shipped(),
    "kubernetes.m.crossplane.io": None,
    "external-secrets.io": None,
    "bitnami.com": None,
    "karpenter.sh": None,
    "karpenter.k8s.aws": None,
    "cert-manager.io": None,
    "gateway.networking.k8s.io": None,
    "gateway.envoyproxy.io": ("envoyproxies",),
    "kyverno.io": ("clusterpolicies", "policies"),
    "policies.kyverno.io": ("validatingpolicies",),
}
