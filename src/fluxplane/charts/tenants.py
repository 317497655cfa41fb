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

On a cluster that makes its apps' resources itself (``appResources: spoke``), a tenant's Role also manages
the app kinds AppTable, AppQueue and AppBucket in its namespace (the ``app-compositions`` pack's admission
policy keeps them to the app's own names); the resources the app's definition names are written under
``clusters/<cluster>/app-resources/``, in the app's namespace, for the cluster's Kustomization
``app-resources``; and an app with ``aws.path`` gets a second Kustomization, ``<app>-cloud``, that applies
that folder of its repository as the deployer.

Flux on the spoke runs locked down (no cross-namespace references, impersonation of the namespace's
``default`` account when a Kustomization names none), so an app can only ever act as its own deployer.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from typing import Any

from fluxplane.charts.base import FleetChart
from fluxplane.charts.cloud import (
    APP_LABEL,
    CLUSTER_LABEL,
    CompositeFields,
    app_source,
    requests_kustomization,
    resource_composites,
)
from fluxplane.config.apps import SPOKE_RESOURCES_DIR, Placement, requests_name
from fluxplane.config.models import FluxSettings
from fluxplane.config.secrets import SealedFile
from fluxplane.constructs.base import Construct, TypedResource
from fluxplane.constructs.kustomization import Kustomization, KustomizationProps
from fluxplane.constructs.namespace import Namespace, NamespaceProps
from fluxplane.constructs.props import TENANT_LABEL, CrossNamespaceSourceReference
from fluxplane.constructs.raw import RawObject
from fluxplane.constructs.rbac import PolicyRule, Role, RoleBinding, RoleBindingProps, RoleProps, RoleRef, Subject
from fluxplane.constructs.service_account import ServiceAccount, ServiceAccountProps
from fluxplane.core.layout import RepositoryLayout, cluster_dir
from fluxplane.kinds import REQUESTABLE
from fluxplane.kinds.app import GROUP

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
#: port-forward) is granted. Endpoints and EndpointSlices are read-only too, as Kubernetes' own ``edit``
#: and ``admin`` roles keep them since CVE-2021-25740: a Service's endpoints written by hand can point at
#: any address, another namespace's pods among them, which an ingress controller or a load balancer then
#: reaches on the tenant's behalf.
TENANT_RULES: tuple[PolicyRule, ...] = (
    PolicyRule(
        api_groups=("",),
        resources=(
            "configmaps",
            "events",
            "persistentvolumeclaims",
            "pods",
            "secrets",
            "serviceaccounts",
            "services",
        ),
        verbs=MANAGE,
    ),
    PolicyRule(api_groups=("",), resources=("pods/log",), verbs=("get",)),
    PolicyRule(api_groups=("",), resources=("endpoints",), verbs=READ),
    PolicyRule(api_groups=("discovery.k8s.io",), resources=("endpointslices",), verbs=READ),
    PolicyRule(
        api_groups=("apps", "batch", "autoscaling", "policy", "networking.k8s.io"),
        resources=("*",),
        verbs=MANAGE,
    ),
    PolicyRule(api_groups=("rbac.authorization.k8s.io",), resources=("roles", "rolebindings"), verbs=MANAGE),
    PolicyRule(api_groups=("bitnami.com",), resources=("sealedsecrets",), verbs=MANAGE),
    PolicyRule(api_groups=("external-secrets.io",), resources=("externalsecrets",), verbs=MANAGE),
    PolicyRule(api_groups=("helm.toolkit.fluxcd.io",), resources=("helmreleases",), verbs=MANAGE),
    PolicyRule(api_groups=("source.toolkit.fluxcd.io",), resources=("*",), verbs=MANAGE),
)


#: What a tenant may also manage on a cluster that makes its apps' resources: the requestable app kinds.
APP_RESOURCE_RULE = PolicyRule(api_groups=(GROUP,), resources=tuple(REQUESTABLE.values()), verbs=MANAGE)
#: The folder of a cluster's folder in the workloads repository with the apps' resources (appResources: spoke).
APP_RESOURCES_DIR = SPOKE_RESOURCES_DIR


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
        app_resources: bool = False,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(scope, construct_id, layout=layout, directory=cluster_dir(cluster))
        self.cluster = cluster
        self.flux = flux
        #: Whether the cluster makes its apps' resources itself (appResources: spoke), and its AWS tags.
        self._app_resources = app_resources
        self._tags = dict(tags or {})
        #: With app_resources: the folder of the apps' resources, and the composites in it (for health checks).
        self.resources_directory: str | None = None
        self.composites: list[TypedResource[Any]] = []
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
        if app_resources:
            self._resources(sorted(placements, key=lambda placement: placement.app.name))

    def _resources(self, placements: list[Placement]) -> None:
        """The resources the apps' definitions name, one file per app, in their namespaces."""
        directory = posixpath.join(self.directory, APP_RESOURCES_DIR)
        scope = Construct(self, APP_RESOURCES_DIR)
        listing: Any = None
        for placement in placements:
            app = placement.app
            if not (app.aws.tables or app.aws.queues or app.aws.buckets):
                continue
            common = CompositeFields(
                namespace=app.target_namespace,
                labels={APP_LABEL: app.name, CLUSTER_LABEL: self.cluster},
                region=placement.region,
                tags={**self._tags, "app": app.name},
            )
            manifest = self.add_manifest(f"resources-{app.name}", posixpath.join(directory, f"{app.name}.yaml"), scope)
            made = resource_composites(manifest, placement, common)
            if listing is None:
                listing = self.add_kustomization_file("resources-kustomization", directory, scope=scope).config
                self.resources_directory = directory
            listing.add_resource(f"{app.name}.yaml")
            self.composites.extend(made)

    def _tenant(self, placement: Placement) -> None:
        app, namespace = placement.app, placement.app.target_namespace
        directory = posixpath.join(self.directory, app.name)
        scope = Construct(self, app.name)
        listing = self.add_kustomization_file("kustomization", directory, scope=scope).config
        labels = {TENANT_LABEL: app.name}
        annotations = {TEAM_ANNOTATION: app.team} if app.team else None

        tenant = self.add_manifest("tenant", posixpath.join(directory, TENANT_FILE), scope)
        Namespace(tenant, "namespace", NamespaceProps(name=namespace, labels=labels, annotations=annotations))
        runtime = ServiceAccount(
            tenant, "service-account", ServiceAccountProps(name=app.name, namespace=namespace, labels=labels)
        )
        # Flux impersonates the deployer without a token; no pod should get one for it by default.
        deployer = ServiceAccount(
            tenant,
            "deployer",
            ServiceAccountProps(
                name=deployer_account(app.name),
                namespace=namespace,
                labels=labels,
                automount_service_account_token=False,
            ),
        )
        rules = (*TENANT_RULES, APP_RESOURCE_RULE) if self._app_resources else TENANT_RULES
        Role(tenant, "role", RoleProps(name=app.name, namespace=namespace, labels=labels, rules=rules))
        RoleBinding(
            tenant,
            "role-binding",
            RoleBindingProps(
                name=app.name,
                namespace=namespace,
                labels=labels,
                role_ref=RoleRef(kind="Role", name=app.name),
                subjects=(Subject(kind="ServiceAccount", name=deployer.name, namespace=namespace),),
            ),
        )
        listing.add_resource(TENANT_FILE)
        self.runtime_accounts[app.name] = runtime
        self.deployers[app.name] = deployer

        # The app's sealed secrets (its Git credentials, and any others sealed into its namespace).
        for item in sorted(
            (item for item in self._sealed.values() if item.namespace == namespace), key=lambda item: item.name
        ):
            manifest = self.add_manifest(f"secret-{item.name}", posixpath.join(directory, f"{item.name}.yaml"), scope)
            RawObject(manifest, "sealed-secret", item.document)
            listing.add_resource(f"{item.name}.yaml")

        sync = self.add_manifest("sync", posixpath.join(directory, "sync.yaml"), scope)
        app_source(sync, "source", placement, namespace)
        kustomization = Kustomization(
            sync,
            "kustomization",
            KustomizationProps(
                name=app.name,
                namespace=namespace,
                labels=labels,
                interval=self.flux.interval,
                retry_interval=self.flux.retry_interval,
                timeout=self.flux.timeout,
                path=app.manifests_path(placement.cluster, placement.environment),
                source_ref=CrossNamespaceSourceReference(kind="GitRepository", name=app.name),
                prune=True,
                wait=True,
                service_account_name=deployer.name,
                target_namespace=namespace,
            ),
        )
        for dependency in self._infrastructure:
            kustomization.depends_on(dependency)
        if self._app_resources and app.aws.path is not None:
            self._requests(sync, placement, deployer.name)
        listing.add_resource("sync.yaml")
        self.syncs[app.name] = kustomization

    def _requests(self, scope: Any, placement: Placement, deployer: str) -> None:
        """The app's own requests (``aws.path`` of its repository), applied as its deployer once the kinds are
        served."""
        app = placement.app
        requests = requests_kustomization(
            scope,
            "requests",
            placement,
            self.flux,
            name=requests_name(app.name),
            namespace=app.target_namespace,
            labels={TENANT_LABEL: app.name},
            account=deployer,
        )
        for dependency in self._infrastructure:
            requests.depends_on(dependency)
