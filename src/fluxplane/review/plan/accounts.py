"""The AWS account a managed resource lives in, read from the tree: its provider config on its cluster.

A managed resource names a provider config (``default`` when it names none). On the cluster whose Crossplane
manages it, that config is the cluster's own overlay's (a cluster that makes its apps' resources patches the
catalogue's, fluxplane.validate.compose.overlays), else the catalogue's. A config with an ``assumeRoleChain``
works in the account of the last role it assumes; one without works in the account of the cluster itself:
the hub's is the account of the role its AWS providers run with (their DeploymentRuntimeConfig's IRSA
annotation), a workload cluster's is the account its ``EKSCluster`` is made in on the hub. What the tree does
not say reads ``provider config <name>``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from fluxplane.core.layout import cluster_of
from fluxplane.synth.hazards import field
from fluxplane.validate.tree import Document

#: The kinds of the AWS providers' configs, in either family.
CONFIG_KINDS = ("ProviderConfig", "ClusterProviderConfig")
CONFIG_GROUPS = ("aws.upbound.io", "aws.m.upbound.io")
#: The annotation IRSA reads a service account's role from.
IRSA_ROLE = "eks.amazonaws.com/role-arn"
_ACCOUNT = re.compile(r"^arn:[^:]+:iam::(\d{12}):")


def account_of_arn(arn: Any) -> str | None:
    """The account id of an IAM ARN, None for anything else."""
    found = _ACCOUNT.match(arn) if isinstance(arn, str) else None
    return found.group(1) if found else None


def is_config(body: Mapping[str, Any]) -> bool:
    api = str(body.get("apiVersion") or "")
    return body.get("kind") in CONFIG_KINDS and api.rpartition("/")[0] in CONFIG_GROUPS


class Accounts:
    """The accounts of one tree (module docstring).

    ``configs`` are the tree's AWS provider configs, the clusters' overlays' among them; ``roles`` the role ARNs
    the hub's AWS providers run with; ``clusters`` each workload cluster's provider config on the hub (its
    ``EKSCluster``'s ``providerConfigName``).
    """

    def __init__(self, configs: Iterable[Document], roles: Iterable[str], clusters: Mapping[str, str], hub: str):
        self.configs: dict[tuple[str | None, str], dict[str, Any]] = {}
        for document in configs:
            name = field(document.body, ("metadata", "name"))
            if isinstance(name, str):
                self.configs.setdefault((cluster_of(document.file), name), document.body)
        self.hub_account = next((found for role in roles if (found := account_of_arn(role))), None)
        self.clusters = clusters
        self.hub = hub

    def account(self, cluster: str, config: str, seen: frozenset[str] = frozenset()) -> str:
        """The account a resource naming provider config ``config`` lives in when ``cluster`` manages it."""
        body = self.configs.get((cluster, config)) or self.configs.get((None, config))
        if body is not None:
            chain = field(body, ("spec", "assumeRoleChain"))
            if isinstance(chain, list) and chain:
                last = chain[-1] if isinstance(chain[-1], dict) else {}
                found = account_of_arn(last.get("roleARN"))
                if found:
                    return found
            else:
                own = self.own(cluster, seen)
                if own:
                    return own
        return f"provider config {config}"

    def own(self, cluster: str, seen: frozenset[str] = frozenset()) -> str | None:
        """The account ``cluster`` itself lives in, when the tree says it."""
        if cluster == self.hub:
            return self.hub_account
        config = self.clusters.get(cluster)
        if config is None or cluster in seen:
            return None
        found = self.account(self.hub, config, seen | {cluster})
        return None if found.startswith("provider config ") else found
