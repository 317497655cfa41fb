"""A composite resource rendered through its Composition as Crossplane's function-patch-and-transform would, and
what the tests of the EKS composite API render: the shapes, the example fleet's composites and observed status.

Crossplane is not run: ``render`` applies each composed resource's patches to its base, for the patch types the
Compositions use, and fails on any other.
"""

from __future__ import annotations

import copy
import re
from functools import cache
from itertools import pairwise
from typing import Any

from fluxplane.config.models import Fleet, WorkloadCluster
from fluxplane.constructs import Manifest, Root
from fluxplane.kinds import eks_api as eks
from fluxplane.kinds.eks_cluster import EKSCluster
from fluxplane.synth import load_plan
from tests.conftest import ROOT

#: Where the example's synthesized tree holds its composite resources.
CLOUD = ROOT / "dist" / "platform" / "cloud"
LABEL = "platform.fluxplane.io"

THREE_ZONES = eks.Shape(zones=3, node_groups=1)
TWO_ZONES = eks.Shape(zones=2, node_groups=1)
SINGLE_NAT = eks.Shape(zones=3, node_groups=1, nat_gateways="Single")
TWO_GROUPS = eks.Shape(zones=3, node_groups=2)
KEYLESS = eks.Shape(zones=3, node_groups=1, keyless=True)
AUTO_MODE = eks.Shape(zones=3, node_groups=0, auto_mode=True)
SHAPES = [
    THREE_ZONES,
    TWO_ZONES,
    SINGLE_NAT,
    TWO_GROUPS,
    KEYLESS,
    eks.Shape(zones=6, node_groups=3, nat_gateways="Single", keyless=True),
    AUTO_MODE,
    eks.Shape(zones=2, node_groups=0, nat_gateways="Single", keyless=True, auto_mode=True),
]


#: What Crossplane would have written back into the composite's status by the time everything exists.
OBSERVED_STATUS = {
    "vpcId": "vpc-0123456789abcdef0",
    "clusterArn": "arn:aws:eks:us-west-2:111122223333:cluster/example",
    "endpoint": "https://EXAMPLE.gr7.us-west-2.eks.amazonaws.com",
    "oidcIssuer": "https://oidc.eks.us-west-2.amazonaws.com/id/EXAMPLE",
    "oidcIssuerHost": "oidc.eks.us-west-2.amazonaws.com/id/EXAMPLE",
    "oidcProviderArn": "arn:aws:iam::111122223333:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/EXAMPLE",
    "externalSecretsRoleArn": "arn:aws:iam::111122223333:role/example-external-secrets",
    "nodeRoleArn": "arn:aws:iam::111122223333:role/example-node",
}


@cache
def example_fleet() -> Fleet:
    return load_plan(ROOT).fleet


def composite(cluster: WorkloadCluster, fleet: Fleet) -> dict[str, Any]:
    """The EKSCluster document of ``cluster``, as the workload-clusters pack writes it."""
    props = eks.composite_props(cluster, fleet.sealing_key, fleet.management.flux_role_arn)
    return EKSCluster(Manifest(Root(), "m", path="x.yaml"), cluster.name, props).to_dict()


def by_name(shape: eks.Shape) -> dict[str, dict[str, Any]]:
    return {resource["name"]: resource for resource in eks.composed_resources(shape)}


_SEGMENT = re.compile(r"([^.\[\]]+)|\[([^\]]+)\]")


def segments(path: str) -> list[str | int]:
    """``a.b[0].c`` → ['a', 'b', 0, 'c']; ``metadata.annotations[x.io/y]`` → ['metadata', 'annotations', 'x.io/y']."""
    found: list[str | int] = []
    for name, bracket in _SEGMENT.findall(path):
        if name:
            found.append(name)
        else:
            found.append(int(bracket) if bracket.isdigit() else bracket)
    return found


_MISSING = object()


def get_path(obj: Any, path: str) -> Any:
    for segment in segments(path):
        if isinstance(segment, int):
            if not isinstance(obj, list) or segment >= len(obj):
                return _MISSING
            obj = obj[segment]
        else:
            if not isinstance(obj, dict) or segment not in obj:
                return _MISSING
            obj = obj[segment]
    return obj


def set_path(obj: dict[str, Any], path: str, value: Any) -> None:
    parts = segments(path)
    node: Any = obj
    for segment, following in pairwise(parts):
        empty: Any = [] if isinstance(following, int) else {}
        if isinstance(segment, int):
            node.extend([None] * (segment + 1 - len(node)))
            if node[segment] is None:
                node[segment] = empty
        elif segment not in node:
            node[segment] = empty
        node = node[segment]
    last = parts[-1]
    if isinstance(last, int):
        node.extend([None] * (last + 1 - len(node)))
    node[last] = value


def _transform(value: Any, transforms: list[dict[str, Any]]) -> Any:
    for transform in transforms:
        assert transform["type"] == "string" and transform["string"]["type"] == "Format", transform
        value = transform["string"]["fmt"] % value
    return value


def apply_patch(patch: dict[str, Any], xr: dict[str, Any], target: dict[str, Any]) -> None:
    """Apply one patch of function-patch-and-transform from composite ``xr`` to composed ``target``."""
    required = patch.get("policy", {}).get("fromFieldPath") == "Required"
    if patch["type"] == "PatchSet":
        patch_sets: list[dict[str, Any]] = eks.PATCH_SETS
        (patch_set,) = [s for s in patch_sets if s["name"] == patch["patchSetName"]]
        for inner in patch_set["patches"]:
            apply_patch(inner, xr, target)
    elif patch["type"] == "FromCompositeFieldPath":
        value = get_path(xr, patch["fromFieldPath"])
        if value is _MISSING:
            assert not required, f"required {patch['fromFieldPath']} is missing from the composite"
            return
        value = _transform(copy.deepcopy(value), patch.get("transforms", []))
        existing = get_path(target, patch["toFieldPath"])
        if patch.get("policy", {}).get("toFieldPath") == "MergeObjects" and isinstance(existing, dict):
            value = {**value, **existing}
        set_path(target, patch["toFieldPath"], value)
    elif patch["type"] == "CombineFromComposite":
        combine = patch["combine"]
        values = [get_path(xr, variable["fromFieldPath"]) for variable in combine["variables"]]
        if _MISSING in values:
            assert not required, f"a required variable of {patch['toFieldPath']} is missing from the composite"
            return
        assert combine["strategy"] == "string"
        set_path(target, patch["toFieldPath"], combine["string"]["fmt"] % tuple(values))
    elif patch["type"] != "ToCompositeFieldPath":
        raise AssertionError(f"the renderer does not know patches of type {patch['type']!r}")


def render(xr: dict[str, Any], composition: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Composed resource name → the object P&T makes of its base for ``xr``."""
    resources_input = composition["pipeline"][0]["input"]
    assert resources_input["patchSets"] == eks.PATCH_SETS
    rendered = {}
    for resource in resources_input["resources"]:
        target = copy.deepcopy(resource["base"])
        target.setdefault("metadata", {}).update(
            name=f"{xr['metadata']['name']}-{resource['name']}", namespace=xr["metadata"]["namespace"]
        )
        for patch in resource["patches"]:
            apply_patch(patch, xr, target)
        rendered[resource["name"]] = target
    return rendered


def observed(xr: dict[str, Any]) -> dict[str, Any]:
    return {**xr, "status": dict(OBSERVED_STATUS)}


def workload_cluster(**fields: Any) -> WorkloadCluster:
    """A workload cluster in eu-central-1 with a VPC CIDR, as the loader allocates one; ``fields`` over it."""
    data = {"name": "a", "region": "eu-central-1", "network": {"cidr": "10.20.0.0/16", "availabilityZones": 2}}
    return WorkloadCluster.model_validate({**data, **fields})
