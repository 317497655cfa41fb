"""AddonIdentitiesChart: ``addon-identities/<cluster>/``, the IAM roles of the add-ons, made on the hub.

A pack whose add-on calls AWS declares a Pod Identity for its service account
(:meth:`fluxplane.packs.api.PackContext.add_pod_identity`). For every cluster that runs the pack,
the hub writes an ``AddonIdentity`` in the cluster's hub namespace: an IAM role that EKS Pod Identity
lets exactly that service account of that cluster assume, with the pack's policies, and the Pod
Identity association. The add-on's pods need no annotation; the Pod Identity Agent (an EKS add-on
on every cluster) hands them the role's credentials.

Each cluster's roles are a folder of their own, applied by that cluster's chain on the hub
(fluxplane.charts.spokes) once the cluster is Ready; the management cluster's own by the hub's
Kustomization ``addon-identities``. Both apply it with Flux's post-build substitution, so the cluster's
tags are escaped for it.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fluxplane.charts.base import FleetChart
from fluxplane.config.hub import applied_by, cluster_namespace
from fluxplane.constructs.base import Construct, validating
from fluxplane.constructs.kustomization import escape_variables, escaped
from fluxplane.constructs.namespace import Namespace, NamespaceProps
from fluxplane.core.layout import RepositoryLayout
from fluxplane.errors import ConfigError
from fluxplane.kinds.app_identity import AddonIdentity, AddonIdentityProps, InlinePolicy

DIRECTORY = "addon-identities"
FILE = "addon-identities.yaml"
PACK_LABEL = "fluxplane.io/pack"
CLUSTER_LABEL = "fluxplane.io/cluster"


@dataclass(frozen=True)
class AddonRole:
    """One pack's Pod Identity (fluxplane.packs.api.PodIdentity) on one cluster."""

    pack: str
    name: str
    namespace: str
    service_account: str
    managed_policies: tuple[str, ...] = ()
    policy: dict[str, Any] | None = None


@dataclass(frozen=True)
class ClusterIdentities:
    """One cluster's add-on roles, where the cluster is, and the values its policies substitute."""

    cluster: str
    region: str
    variables: Mapping[str, str]
    tags: Mapping[str, str]
    identities: tuple[AddonRole, ...]
    #: The Flux Kustomization that applies the cluster's folder, as (namespace, name).
    applier: tuple[str, str]
    #: The management cluster's hub namespace is not made by a cluster's chain: this file makes it.
    own_namespace: bool = False
    #: The account the cluster is in (its provider config), or None for the hub's own.
    account: str | None = None


#: In a pack's policy: the escape ``$$``, or ``${name}``.
_POLICY_TOKEN = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def policy_text(policy: dict[str, Any], variables: Mapping[str, str]) -> str:
    """The inline policy for one cluster: its variables filled in, other ``${...}`` kept from Flux's substitution.

    The policy reads as the pack's other objects do (fluxplane.packs.api.PodIdentity): ``$$`` is one ``$``
    and ``${name}`` a cluster variable; other ``${...}`` are IAM policy variables such as ``${aws:username}``.
    The hub applies this folder with Flux's post-build substitution, which would empty those, so the
    text is escaped for it.
    """

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return "$"
        return variables.get(name, match.group(0))

    return escape_variables(_POLICY_TOKEN.sub(fill, json.dumps(policy, indent=2))) + "\n"


def composite_name(pack: str, identity: str) -> str:
    return identity if identity == pack else f"{pack}-{identity}"


class AddonIdentitiesChart(FleetChart):
    """The add-on identities of every cluster, one folder per cluster."""

    def __init__(
        self, scope: Any, construct_id: str, *, layout: RepositoryLayout, clusters: Iterable[ClusterIdentities]
    ) -> None:
        super().__init__(scope, construct_id, layout=layout, directory=DIRECTORY)
        #: Per cluster with roles: its folder and its composites (for its Kustomization's health checks).
        self.folders: dict[str, str] = {}
        self.composites: dict[str, list[AddonIdentity]] = {}
        for item in sorted(clusters, key=lambda item: item.cluster):
            if item.identities:
                self._cluster(item)

    def _cluster(self, item: ClusterIdentities) -> None:
        folder = posixpath.join(self.directory, item.cluster)
        scope = Construct(self, item.cluster)
        manifest = self.add_manifest("identities", posixpath.join(folder, FILE), scope)
        self.add_kustomization_file("kustomization", folder, scope=scope).config.add_resource(FILE)
        self.folders[item.cluster] = folder
        composites = self.composites.setdefault(item.cluster, [])
        namespace = cluster_namespace(item.cluster)
        annotations = applied_by(*item.applier)
        if item.own_namespace:
            Namespace(manifest, "namespace", NamespaceProps(name=namespace, annotations=annotations))
        for identity in sorted(item.identities, key=lambda role: (role.pack, role.name)):
            pack, name = identity.pack, composite_name(identity.pack, identity.name)
            if len(name) > 63:
                raise ConfigError(
                    f"pack {pack!r}: pod identity {identity.name!r}: the AddonIdentity name {name!r} is longer "
                    "than 63 characters; the pack must use a shorter identity name"
                )
            # The pack's own values (its policies, account and namespace) meet their checks here.
            with validating(manifest, name):
                props = AddonIdentityProps(
                    name=name,
                    namespace=namespace,
                    labels={PACK_LABEL: pack, CLUSTER_LABEL: item.cluster},
                    annotations=annotations,
                    region=item.region,
                    provider_config_name=item.account,
                    tags=escaped(dict(item.tags)),
                    cluster_name=item.cluster,
                    service_account_namespace=identity.namespace,
                    service_account=identity.service_account,
                    managed_policy_arns=identity.managed_policies,
                    inline_policies=(
                        (InlinePolicy(name=name, policy=policy_text(identity.policy, item.variables)),)
                        if identity.policy
                        else ()
                    ),
                )
            composites.append(AddonIdentity(manifest, name, props))
