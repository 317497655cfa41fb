"""Where the hub keeps each workload cluster: its namespace and its kubeconfig Secret.

Everything that refers to a workload cluster from the management cluster (the composite resource,
the Flux objects that target the spoke, provider configs) takes the names from here, so the
composition that writes the kubeconfig and the objects that read it cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Namespaces a workload cluster may not be named after: its hub namespace would collide with them.
RESERVED_NAMESPACES = frozenset({"default", "flux-system", "crossplane-system"})
RESERVED_PREFIX = "kube-"


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


def reserved_name(cluster: str) -> bool:
    """True when ``cluster`` cannot be used as a hub namespace."""
    return cluster in RESERVED_NAMESPACES or cluster.startswith(RESERVED_PREFIX)
