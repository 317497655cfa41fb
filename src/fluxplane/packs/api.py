"""The pack API: how an add-on plugs into fluxplane.

A pack is a module exporting ``PACK``, a :class:`Pack`. It is found through the ``fluxplane.packs``
entry-point group (built-in packs use the same group), configured by a typed section of the fleet
definition (``packs: {<name>: {...}}``) and bound once per distinct configuration: ``bind`` adds
constructs under :attr:`PackContext.scope` and declares the pack's health gates.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from typing_extensions import TypeVar

from fluxplane.config.merge import quoted
from fluxplane.config.models import Fleet, WorkloadCluster
from fluxplane.constructs.base import Resource, node_of, props_problems, resources_below
from fluxplane.constructs.kustomization import SUBSTITUTED as SUBSTITUTED
from fluxplane.constructs.manifest import Manifest
from fluxplane.constructs.props import CustomHealthCheck, NamespacedObjectKindReference

Layer = Literal["controllers", "configs", "apps"]
#: Where a pack can run: the management cluster, the workload clusters, or either.
RunsOn = Literal["management", "workload", "any"]
#: The two kinds of cluster of a fleet.
ClusterKind = Literal["management", "workload"]

#: What a cluster can offer the packs that run on it (Pack.needs), and what each means.
FLUXPLANE_NETWORK = "fluxplane-network"
CAPABILITIES: dict[str, str] = {
    FLUXPLANE_NETWORK: "the VPC, subnets, security group and node role that fluxplane's EKS composition makes, "
    "tagged for discovery (karpenter.sh/discovery, the VPC's Name), which only the workload clusters the hub "
    "builds have",
}
#: What each kind of cluster offers: the hub is made by hand, the workload clusters by fluxplane's composition.
OFFERS: dict[ClusterKind, frozenset[str]] = {
    "management": frozenset(),
    "workload": frozenset({FLUXPLANE_NETWORK}),
}


#: What a pack can provide fluxplane's own features (Pack.provides), and what each means. synth switches a
#: feature on for the pack that provides it on a cluster, whatever the pack is called.
APP_RESOURCES = "app-resources"
AWS_PROVIDERS = "aws-providers"
PROVIDES: dict[str, str] = {
    APP_RESOURCES: "the Crossplane kinds of fluxplane.kinds (AppIdentity, AddonIdentity, "
    "AppDatabase and the rest) that apps' AWS resources and add-ons' IAM roles are made of; what synth makes of "
    "them is applied after the pack, on the hub or on a cluster that makes its apps' resources",
    AWS_PROVIDERS: "the Crossplane AWS provider family members its config's `services` lists, and "
    "provider-kubernetes when its `kubernetes` is true; synth checks that the kinds apps ask for have theirs",
}


#: A version's -prerelease and +build (semver.org 2.0.0).
_PRERELEASE_BUILD = (
    r"(-(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*)?"
    r"(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?"
)
#: A semantic version (semver.org 2.0.0), with the ``v`` prefix Helm and Crossplane packages also take.
SEMVER = r"v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)" + _PRERELEASE_BUILD

#: A semver range as Flux reads one (Masterminds/semver v3, for a HelmChart's version and an OCIRepository's
#: ref.semver), or rather the part of that grammar a person writes: comparisons (an operator and a version that
#: may leave out its patch or minor number, or give ``x``, ``X`` or ``*`` for it) joined by spaces or commas
#: (and), groups of them joined by ``||`` (or), and hyphen ranges ``1.2 - 1.4.5``. Masterminds/semver also takes
#: leading zeros, ``|`` inside a version and other whitespace; these are refused here.
_PARTIAL = r"v?(0|[1-9][0-9]*|[xX*])(\.(0|[1-9][0-9]*|[xX*])){0,2}" + _PRERELEASE_BUILD
_TERM = rf"({_PARTIAL} +- +{_PARTIAL}|((!=|>=|=>|<=|=<|~>|[=<>~^]) *)?{_PARTIAL})"
_GROUP = rf" *{_TERM}(( *, *| +){_TERM})* *"
SEMVER_RANGE = rf"{_GROUP}(\|\|{_GROUP})*"
#: The longest range accepted: real ones are a few comparisons long.
_RANGE_LENGTH = 100


def exact_version(value: Any) -> Any:
    """``value`` when it is a semver version; a pack's chart or package version is exact, not a range: the
    fields say "chart version", and a pinned fleet is reviewable (only a chart file may take a range,
    version_or_range). Anything else (a range, a newline followed by more YAML) would reach Flux as written."""
    if isinstance(value, str) and re.fullmatch(SEMVER, value) is None:
        raise ValueError(
            f"expected a semver version such as 1.2.3 or v1.2.3 (MAJOR.MINOR.PATCH, optionally -prerelease "
            f"and +build), got {quoted(value, 80)}"
        )
    return value


def is_exact(version: str) -> bool:
    """Whether ``version`` is one version (semver), not a range."""
    return re.fullmatch(SEMVER, version) is not None


def version_or_range(value: Any) -> Any:
    """``value`` when it is a semver version, or a semver range as Flux reads one (SEMVER_RANGE), such as
    ``6.7.x``, ``~6.7.1`` or ``>=6.7.0 <6.8.0``: Flux then installs the newest version of the chart in the
    range, and a new one when it is published."""
    if not isinstance(value, str) or is_exact(value):
        return value
    if len(value) > _RANGE_LENGTH or re.fullmatch(SEMVER_RANGE, value) is None:
        raise ValueError(
            f"expected a semver version such as 6.7.1, or a range Flux reads, such as 6.7.x, ~6.7.1 or "
            f">=6.7.0 <6.8.0 (comparisons joined by spaces or commas, alternatives by ||), got {quoted(value, 80)}"
        )
    return value


class PackConfig(BaseModel):
    """Base of every pack's config model: one section of ``packs:`` in the definition.

    What a pack binds is applied by a Flux Kustomization with post-build substitution, which expands
    ``${cluster_name}`` and the other cluster variables on each cluster. ``bind`` gets the config with
    every string escaped for it (``$${cluster_name}``), so the user's text reaches the cluster as written,
    except in fields annotated :data:`SUBSTITUTED` (``Annotated[str, SUBSTITUTED]``), where the cluster
    variables are meant to be expanded; say so in the field's description.

    A field named ``version`` is the version of the chart or package the pack installs (a HelmRelease's
    ``spec.chart.spec.version``, an OCI tag, a Crossplane package tag): it must be a semver version such as
    1.2.3 or v1.2.3, checked here for every pack (a chart file's pack checks it as a version or a range).

    A config model builds its validator when it first validates (``defer_build``): a fleet runs some of the
    installed packs, not all of them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=False, defer_build=True)

    enabled: bool = Field(True, description="Set to false to switch the pack off here (e.g. for one cluster).")

    @field_validator("version", check_fields=False)
    @classmethod
    def _semver(cls, value: Any) -> Any:
        return exact_version(value)


@dataclass(frozen=True)
class PodIdentity:
    """An IAM role for one service account of an add-on, bound to it through EKS Pod Identity.

    The hub makes the role for every cluster that runs the pack (an ``AddonIdentity`` in the cluster's
    hub namespace): trusted by Pod Identity for exactly this namespace and service account of that
    cluster, with the AWS managed policies and the inline policy given. ``${cluster_name}``,
    ``${cluster_region}`` and ``${environment}`` in the inline policy are the cluster's values, and
    ``$$`` is one ``$``, as in the pack's other objects (config text arrives escaped); any other ``${...}``,
    such as IAM's ``${aws:username}``, is kept as written.
    """

    name: str
    namespace: str
    service_account: str
    managed_policies: tuple[str, ...] = ()
    policy: dict[str, Any] | None = None


@dataclass
class PackContext:
    """What ``bind`` works with: the output file to add objects to, the fleet, and the pack's health gates.

    ``fleet`` is the whole definition, for packs whose output follows from it (the Compositions of
    the cluster shapes the fleet uses); most packs need only their config. ``cluster`` is set when a
    pack that builds clusters is bound for one of them. Like the config, ``cluster`` comes with its
    strings escaped for Flux's post-build substitution (see PackConfig); ``fleet`` is as written, so
    text a pack copies from it into its objects goes through fluxplane.constructs.kustomization.escaped.
    ``timeout`` lengthens the Flux Kustomization's wait for packs whose objects take long to become
    healthy.
    """

    manifest: Manifest
    fleet: Fleet | None = None
    #: The workload cluster being built, for a pack that builds clusters (Pack.builds_clusters).
    cluster: WorkloadCluster | None = None
    health_checks: list[NamespacedObjectKindReference] = field(default_factory=list)
    health_check_exprs: list[CustomHealthCheck] = field(default_factory=list)
    timeout: str | None = None
    pod_identities: list[PodIdentity] = field(default_factory=list)

    @property
    def scope(self) -> Manifest:
        return self.manifest

    def add_health_check(self, target: Resource) -> NamespacedObjectKindReference:
        """Gate the pack's Flux Kustomization on a kstatus-compatible object (HelmRelease, Deployment)."""
        ref = NamespacedObjectKindReference(
            api_version=target.api_version, kind=target.kind, name=target.name, namespace=target.namespace
        )
        self.health_checks.append(ref)
        return ref

    def add_health_check_expr(self, check: CustomHealthCheck) -> CustomHealthCheck:
        """Say how to judge objects of a custom kind (CEL, see fluxplane.constructs.health).

        Flux evaluates the expressions for the objects given to :meth:`add_health_check`; a pack that
        lists none is waited for as a whole (``wait: true``), and the expressions then apply to every
        object of their kind.
        """
        self.health_check_exprs.append(check)
        return check

    def add_pod_identity(
        self,
        name: str,
        *,
        namespace: str,
        service_account: str,
        managed_policies: tuple[str, ...] = (),
        policy: dict[str, Any] | None = None,
    ) -> PodIdentity:
        """Give ``namespace/service_account`` an IAM role on every cluster that runs the pack (see PodIdentity).

        ``name`` tells the pack's roles apart (the role is ``<cluster>-<pack>-<name>``); the add-on's pods
        need no annotation: the EKS Pod Identity Agent hands them the role's credentials.
        """
        if not managed_policies and not policy:
            raise ValueError(f"pod identity {name!r}: give managed_policies, a policy, or both")
        identity = PodIdentity(name, namespace, service_account, tuple(managed_policies), policy)
        if any(existing.name == name for existing in self.pod_identities):
            raise ValueError(f"pod identity {name!r} is declared twice")
        self.pod_identities.append(identity)
        return identity


#: A pack's config model. Covariant, so that ``Pack[KarpenterConfig]`` is a ``Pack`` (``Pack[PackConfig]``, the
#: default) and one registry holds packs of every config: ``bind`` is only ever called with an instance of
#: the pack's own ``config``, which is what validates its section (PackRegistry.configure). The default
#: (typing_extensions' TypeVar, PEP 696, for Python 3.11) keeps a bare ``Pack`` meaning any pack.
C = TypeVar("C", bound=PackConfig, default=PackConfig, covariant=True)


@dataclass(frozen=True)
class Pack(Generic[C]):
    """An add-on: what it is, how it is configured, where it sits and what it needs first.

    Generic in its config model: ``bind`` takes the pack's own ``config`` class, so a pack's code reads
    its fields typed, without a cast.
    """

    name: str
    version: str
    description: str
    config: type[C]
    layer: Layer
    bind: Callable[[PackContext, C], None]
    requires: tuple[str, ...] = ()
    #: Of the API groups of the CRDs the pack installs (``crds``), those whose objects ``bind`` also emits (a
    #: Karpenter NodePool, a cert-manager ClusterIssuer): they cannot be applied with the controllers, so
    #: synth moves them to ``<pack>-configs`` in the configs layer, after the pack is Ready. They count as
    #: installed whether ``crds`` lists them or not.
    crd_groups: tuple[str, ...] = ()
    #: A hub pack that builds the workload clusters: ``bind`` runs once per workload cluster
    #: (``ctx.cluster``), and what it emits is applied by that cluster's own chain on the hub (its
    #: Kustomization ``cluster`` in the cluster's hub namespace), so one cluster never waits for another.
    builds_clusters: bool = False
    #: What the pack provides fluxplane's own features (keys of PROVIDES): synth switches them on for the
    #: pack that provides them, so a third-party pack can stand in for a built-in one.
    provides: tuple[str, ...] = ()
    #: The namespaces the pack's objects and charts install into on a cluster: its Namespace objects,
    #: its HelmReleases' targetNamespace, its namespaced objects' and its pods' (a controller's
    #: workloads where the controller puts them), besides flux-system for its Flux sources and releases.
    #: They hold the add-on's service accounts, roles and secrets, so no app runs in one and no workload
    #: cluster is named after one (its hub namespace), whether or not the pack is enabled there:
    #: enabling it later must not hand a tenant the add-on (fluxplane.synth.plan).
    namespaces: tuple[str, ...] = ()
    #: Where the pack can work at all: the hub's own machinery (Crossplane, the Compositions, the
    #: clusters it builds) runs on the management cluster only.
    runs_on: RunsOn = "any"
    #: What the pack needs from the cluster it runs on (keys of CAPABILITIES): a pack that finds the
    #: cluster's network by fluxplane's tags cannot work on a hub made by hand.
    needs: tuple[str, ...] = ()
    #: What EKS Auto Mode does itself of the pack's work ("node autoscaling", "load balancing"), for a pack it
    #: stands in for: on an Auto Mode cluster the pack is refused where the cluster's own entry enables it, and left
    #: off, with a note, where the cluster inherits it (fluxplane.synth.plan).
    replaced_by_auto_mode: str = ""
    #: The API groups of every CRD the pack installs (its charts', its Crossplane packages'); ``*.example.com``
    #: stands for every group under example.com (a provider family's members). A Flux Kustomization waits
    #: for the pack only when it requires it or applies objects of one of these groups (fluxplane.synth.order),
    #: so an add-on's trouble holds up nothing else.
    crds: tuple[str, ...] = ()

    def apply(self, ctx: PackContext, config: Any) -> None:
        """``bind``, with props the pack builds from a value its config let through and its constructs refuse
        reported as a ConstructError under the pack's scope, as a construct reports its own props, not a traceback.
        """
        with props_problems(node_of(ctx.scope).path):
            self.bind(ctx, config)

    @property
    def installed_groups(self) -> tuple[str, ...]:
        """The API groups (and ``*.`` patterns) of the CRDs the pack installs: ``crds`` and ``crd_groups``."""
        return tuple(dict.fromkeys((*self.crds, *self.crd_groups)))

    def can_run_on(self, kind: ClusterKind) -> bool:
        """Whether the pack can work on a cluster of ``kind``."""
        return self.runs_on in (kind, "any") and set(self.needs) <= OFFERS[kind]

    def placement(self) -> str:
        """Where the pack runs, for people: ``workload clusters (needs fluxplane-network)``."""
        kinds = tuple(kind for kind in OFFERS if self.can_run_on(kind))
        where = {
            ("management",): "the management cluster only",
            ("workload",): "workload clusters only",
            ("management", "workload"): "any cluster",
        }.get(kinds, "no cluster")
        return where + (f" (needs {', '.join(self.needs)})" if self.needs else "")


#: Suffix of the pack that applies a pack's custom resources (Pack.crd_groups).
CONFIGS_SUFFIX = "-configs"


def covers(pattern: str, group: str) -> bool:
    """Whether ``pattern``, an API group of Pack.crds (``*.example.com`` for every group under example.com),
    covers the API group ``group``."""
    return group == pattern or (pattern.startswith("*.") and group.endswith(pattern[1:]))


def _group(api_version: str | None) -> str:
    return api_version.split("/")[0] if api_version and "/" in api_version else ""


def split_pack(pack: Pack) -> tuple[Pack, ...]:
    """``pack`` as synth applies it: with ``crd_groups``, its controllers and ``<name>-configs``.

    Both halves bind the pack with the same config; each keeps only its own objects and health
    gates. ``<name>-configs`` sits in the configs layer and requires the pack, so Flux applies the
    custom resources once the controllers that serve their kinds are Ready; the CRDs stay the pack's.
    """
    if not pack.crd_groups:
        return (pack,)
    groups = frozenset(pack.crd_groups)

    def half(custom: bool) -> Callable[[PackContext, Any], None]:
        def bind(ctx: PackContext, config: Any) -> None:
            pack.bind(ctx, config)
            for resource in list(resources_below(ctx.manifest)):
                if (_group(resource.api_version) in groups) != custom:
                    node = node_of(resource)
                    if node_of(node.scope).try_find_child(node.id) is resource:
                        node_of(node.scope).remove(node.id)
            ctx.health_checks[:] = [c for c in ctx.health_checks if (_group(c.api_version) in groups) == custom]
            if custom:
                ctx.pod_identities.clear()

        return bind

    configs = replace(
        pack,
        name=f"{pack.name}{CONFIGS_SUFFIX}",
        description=f"{pack.description}: its {', '.join(pack.crd_groups)} objects",
        layer="configs",
        bind=half(True),
        requires=(pack.name,),
        crd_groups=(),
        crds=(),
    )
    return replace(pack, bind=half(False)), configs
