"""app-compositions (fluxplane.packs.app_compositions): what it binds, and where the example's composites live."""

from __future__ import annotations

from collections import Counter

import yaml

from fluxplane.kinds import PLURALS
from fluxplane.packs import app_compositions as pack
from fluxplane.testing import bind_pack
from tests.support.compositions import CLOUD


def test_bind_writes_an_xrd_and_a_composition_per_kind_gated_on_the_xrds() -> None:
    ctx = bind_pack(pack.PACK)
    kinds = Counter(doc["kind"] for doc in ctx.objects)
    assert kinds == {
        "CompositeResourceDefinition": 6,
        # one per kind, and the identity of apps whose clusters make their resources
        "Composition": 7,
        "ValidatingAdmissionPolicy": 1,
        "ValidatingAdmissionPolicyBinding": 1,
    }
    assert [check.name for check in ctx.health_checks] == [
        f"{plural}.platform.fluxplane.io" for plural in PLURALS.values()
    ]
    (expr,) = ctx.health_check_exprs
    assert "Established" in expr.current and "Offered" not in expr.current
    assert expr.failed is not None and "Established" in expr.failed


def test_every_example_composite_lives_in_its_clusters_hub_namespace() -> None:
    for path in sorted(CLOUD.rglob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        cluster = path.parent.name
        for doc in yaml.safe_load_all(path.read_text()):
            assert doc["metadata"]["namespace"] == cluster
            if doc["apiVersion"].startswith("platform.fluxplane.io/"):
                assert doc["metadata"]["labels"]["fluxplane.io/cluster"] == cluster
