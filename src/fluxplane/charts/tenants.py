"""TenantsChart: ``clusters/<cluster>/`` in the workloads repository, one tenant per app on the cluster.

The seeds' gitops-workloads repository, generated: per app, a folder with

- ``tenant.yaml``: the app's Namespace, its two ServiceAccounts, and a namespaced Role and RoleBinding
  that let the deployer account manage workloads in its own namespace only (never cluster-admin);
- ``sync.yaml``: the app's GitRepository and a Flux Kustomization that impersonates the deployer
  (``serviceAccountName``), deploys into the namespace (``targetNamespace``), prunes, waits for what it
  applied to be healthy, and starts only after the cluster's infrastructure add-ons are Ready;
- ``<secret>.yaml``: the sealed secrets of the app's namespace (environments/secrets/<cluster>/<namespace>/),
  its Git credentials among them when its repository needs them.

The two accounts keep deploying apart from running. ``<app>-deployer`` is the Role's only subject and the
account Flux applies the app's manifests as; it runs no pod. ``<app>`` is the account the app's pods run
as: it carries the app's AWS identity (the hub's AppIdentity binds its IAM role to ``<app>`` through EKS
Pod Identity) and no Role, so a compromised pod can neither read the namespace's Secrets nor rewrite its
RBAC. Both names fit: a ServiceAccount's name is a DNS-1123 subdomain (up to 253 characters) and an app's
name at most 63, and no label carries the deployer's name.

Flux on the spoke runs locked down (no cross-namespace references, impersonation of the namespace's
``default`` account when a Kustomization names none), so an app can only ever act as its own deployer.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from typing import Any

from fluxplane.charts.base import FleetChart
from fluxplane.charts.layout import RepositoryLayout, cluster_dir
from fluxplane.config.apps import Placement
from fluxplane.config.models import FluxSettings
from fluxplane.config.secrets import SealedFile
from fluxplane.constructs.base import Construct
from fluxplane.constructs.git_repository import GitRepository
from fluxplane.constructs.kustomization import Kustomization
from fluxplane.constructs.namespace import Namespace
from fluxplane.constructs.props import TENANT_LABEL
from fluxplane.constructs.raw import RawObject
from fluxplane.constructs.rbac import Role, RoleBinding
from fluxplane.constructs.service_account import ServiceAccount

#: The annotation naming the team that owns a tenant (its CODEOWNERS entry).
TEAM_ANNOTATION = "fluxplane.io/team"
#: The file of a tenant folder holding its Namespace, accounts, Role and RoleBinding: its privilege.
TENANT_FILE = "tenant.yaml"
#: Appended to an app's name for the account Flux deploys it as.
DEPLOYER_SUFFIX = "-deployer"


def deployer_account(app: str) -> str:
    """The account the app's Flux Kustomization impersonates, the only one its Role is bound to."""
    return f"{app}{DEPLOYER_SUFFIX}"


#: Reading an object: what Flux's health checks and a team's kubectl need.
READ = ("get", "list", "watch")
#: Managing an object: reading it, and what Flux's apply and prune do. The verbs are listed, never ``*``: a
#: wildcard would also grant RBAC's ``escalate`` and ``bind`` (a tenant could write itself any Role) and
#: ``impersonate`` (it could act as any account of its namespace), and every verb Kubernetes adds later.
MANAGE = (*READ, "create", "update", "patch", "delete", "deletecollection")

#: What a tenant may manage in its own namespace. Everything a typical app deploys; not its own
#: ResourceQuota or LimitRange (set by the platform), nor anything cluster-scoped. Roles and
#: RoleBindings are allowed without ``escalate`` and ``bind``, so the API server refuses any that grant
#: more than the tenant holds. Pods' logs are read-only; no other pod subresource (exec, attach,
#: port-forward) is granted.
TENANT_RULES: tuple[dict[str, Any], ...] = (
    {
        "apiGroups": [""],
        "resources": [
            "configmaps",
            "endpoints",
            "events",
            "persistentvolumeclaims",
            "pods",
            "secrets",
            "serviceaccounts",
            "services",
        ],
        "verbs": list(MANAGE),
    },
    {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]},
    {
        "apiGroups": ["apps", "batch", "autoscaling", "policy", "networking.k8s.io", "discovery.k8s.io"],
        "resources": ["*"],
        "verbs": list(MANAGE),
    },
    {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"], "verbs": list(MANAGE)},
    {"apiGroups": ["bitnami.com"], "resources": ["sealedsecrets"], "verbs": list(MANAGE)},
    {"apiGroups": ["external-secrets.io"], "resources": ["externalsecrets"], "verbs": list(MANAGE)},
    {"apiGroups": ["helm.toolkit.fluxcd.io"], "resources": ["helmreleases"], "verbs": list(MANAGE)},
    {"apiGroups": ["source.toolkit.fluxcd.io"], "resources": ["*"], "verbs": list(MANAGE)},
)


class TenantsChart(FleetChart):
    """The tenants of one workload cluster, under ``clusters/<cluster>/`` of the workloads repository."""

    def __init__(
        self,
        scope: Any,
        construct_id: str,
        *,
        layout: RepositoryLayout,
        cluster: str,
        placements: Iterable[Placement],
        flux: FluxSettings,
        sealed: Iterable[SealedFile] = (),
        infrastructure: Iterable[Kustomization] = (),
    ) -> None:
        super().__init__(scope, construct_id, layout=layout, directory=cluster_dir(cluster))
        self.cluster = cluster
        self.flux = flux
        self._infrastructure = tuple(infrastructure)
        self._sealed = {(item.namespace, item.name): item for item in sealed}
        #: Per app: its Flux Kustomization on this cluster.
        self.syncs: dict[str, Kustomization] = {}
        #: Per app: the account its pods run as, which carries its AWS identity and holds no Role.
        self.runtime_accounts: dict[str, ServiceAccount] = {}
        #: Per app: the account Flux applies its manifests as, bound to its Role.
        self.deployers: dict[str, ServiceAccount] = {}
        listing = self.add_kustomization_file("kustomization", self.directory).config
        for placement in sorted(placements, key=lambda placement: placement.app.name):
            self._tenant(placement)
            listing.add_resource(placement.app.name)

    def _tenant(self, placement: Placement) -> None:
        app, namespace = placement.app, placement.app.target_namespace
        directory = posixpath.join(self.directory, app.name)
        scope = Construct(self, app.name)
        listing = self.add_kustomization_file("kustomization", directory, scope=scope).config
        labels = {TENANT_LABEL: app.name}
        annotations = {TEAM_ANNOTATION: app.team} if app.team else None

        tenant = self.add_manifest("tenant", posixpath.join(directory, TENANT_FILE), scope)
        Namespace(tenant, "namespace", {"name": namespace, "labels": labels, "annotations": annotations})
        runtime = ServiceAccount(
            tenant, "service-account", {"name": app.name, "namespace": namespace, "labels": labels}
        )
        # Flux impersonates the deployer without a token; no pod should get one for it by default.
        deployer = ServiceAccount(
            tenant,
            "deployer",
            {
                "name": deployer_account(app.name),
                "namespace": namespace,
                "labels": labels,
                "automount_service_account_token": False,
            },
        )
        Role(tenant, "role", {"name": app.name, "namespace": namespace, "labels": labels, "rules": TENANT_RULES})
        RoleBinding(
            tenant,
            "role-binding",
            {
                "name": app.name,
                "namespace": namespace,
                "labels": labels,
                "roleRef": {"kind": "Role", "name": app.name},
                "subjects": [{"kind": "ServiceAccount", "name": deployer.name, "namespace": namespace}],
            },
        )
        listing.add_resource(TENANT_FILE)
        self.runtime_accounts[app.name] = runtime
        self.deployers[app.name] = deployer

        secret = app.repository.secret_ref
        # The app's sealed secrets (its Git credentials, and any others sealed into its namespace).
        for item in sorted(
            (item for item in self._sealed.values() if item.namespace == namespace), key=lambda item: item.name
        ):
            manifest = self.add_manifest(f"secret-{item.name}", posixpath.join(directory, f"{item.name}.yaml"), scope)
            RawObject(manifest, "sealed-secret", item.document)
            listing.add_resource(f"{item.name}.yaml")

        sync = self.add_manifest("sync", posixpath.join(directory, "sync.yaml"), scope)
        GitRepository(
            sync,
            "source",
            {
                "name": app.name,
                "namespace": namespace,
                "interval": "5m",
                "url": app.repository.url,
                "ref": app.repository.ref.flux(),
                "secretRef": {"name": secret} if secret else None,
            },
        )
        kustomization = Kustomization(
            sync,
            "kustomization",
            {
                "name": app.name,
                "namespace": namespace,
                "labels": labels,
                "interval": self.flux.interval,
                "retryInterval": self.flux.retry_interval,
                "timeout": self.flux.timeout,
                "path": app.manifests_path(placement.cluster, placement.environment),
                "sourceRef": {"kind": "GitRepository", "name": app.name},
                "prune": True,
                "wait": True,
                "serviceAccountName": deployer.name,
                "targetNamespace": namespace,
            },
        )
        for dependency in self._infrastructure:
            kustomization.depends_on(dependency)
        listing.add_resource("sync.yaml")
        self.syncs[app.name] = kustomization
