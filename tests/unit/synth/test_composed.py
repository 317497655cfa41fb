"""Tests for fluxplane.synth.composed: what a composite composes, compared between two trees."""

from __future__ import annotations

import copy
from typing import Any

from fluxplane.synth.composed import ChangedTrees, Rendering, Texts, changed_kinds, compare
from fluxplane.validate.compose.composer import ComposedResources
from fluxplane.validate.tree import Document
from tests.conftest import ROOT


def composition(kind: str, name: str = "c") -> Document:
    body = {
        "apiVersion": "apiextensions.crossplane.io/v1",
        "kind": "Composition",
        "metadata": {"name": name},
        "spec": {"compositeTypeRef": {"apiVersion": "platform.fluxplane.io/v1alpha1", "kind": kind}},
    }
    return Document("platform/infrastructure/configs/x/base/x.yaml", 1, body)


def test_changed_kinds_are_those_whose_definitions_differ() -> None:
    table, queue = composition("AppTable"), composition("AppQueue", "q")
    changed = copy.deepcopy(table)
    changed.body["spec"]["mode"] = "Pipeline"
    assert changed_kinds([table, queue], [changed, queue]) == {"AppTable"}
    assert changed_kinds([table], [table]) == frozenset()
    function = Document(
        "f.yaml", 1, {"apiVersion": "pkg.crossplane.io/v1", "kind": "Function", "metadata": {"name": "f"}}
    )
    assert changed_kinds([table], [table, function]) == {"*"}


def test_texts_find_files_by_their_top_level_kinds() -> None:
    texts = Texts({"a.yaml": "kind: A\n---\nkind: B\n", "b.yaml": "  kind: A\n", "c.txt": "kind: A\n"})
    assert texts.holding(["A"]) == ["a.yaml"]
    assert texts.objects(["B"], lambda body: True)[0].index == 2
    assert texts.objects(["A"], lambda body: True, ["nowhere"]) == []


class FixedComposer:
    """A Composer that composes the same resources, or says why it cannot, for any composite."""

    def __init__(self, resources: dict[str, dict[str, Any]], reason: str = "") -> None:
        self.composed = ComposedResources("c", resources, reason)

    def compose(self, body: dict[str, Any], cluster: str | None) -> ComposedResources:
        return self.composed


def managed(api: str, kind: str, **given: Any) -> dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "spec": {"forProvider": {"region": "us-east-1", **given}}}


COMPOSITE = {"apiVersion": "platform.fluxplane.io/v1alpha1", "kind": "AppDatabase", "metadata": {"name": "d"}}
INSTANCE = managed("rds.aws.m.upbound.io/v1beta1", "Instance", engine="postgres")
SECRET = {"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", "kind": "Object", "spec": {"forProvider": {}}}


def test_each_managed_resource_a_composite_composes_is_judged_by_its_name_in_the_composition() -> None:
    # GIVEN a composite whose Composition composes an instance with another engine, a new role, and an object on the
    # cluster, which is no AWS resource
    old = FixedComposer({"db": INSTANCE, "secret": SECRET})
    mysql = managed("rds.aws.m.upbound.io/v1beta1", "Instance", engine="mysql")
    new = FixedComposer({"db": mysql, "secret": SECRET, "role": managed("iam.aws.m.upbound.io/v1beta1", "Role")})
    # WHEN compared
    rendering = compare(old, new, None, COMPOSITE, COMPOSITE)
    # THEN the instance is replaced and the role made, in the Composition's order; the object is not judged
    assert [(change.name, change.verdict.action) for change in rendering.changes] == [
        ("db", "replace"),
        ("role", "create"),
    ]
    assert rendering.rendered == 2
    assert rendering.changes[0].verdict.reasons == ("engine changed from postgres to mysql",)


def test_another_kind_under_one_name_is_the_old_resource_deleted_and_a_new_one_made() -> None:
    cluster = managed("rds.aws.m.upbound.io/v1beta1", "Cluster", engine="aurora-postgresql")
    rendering = compare(FixedComposer({"db": INSTANCE}), FixedComposer({"db": cluster}), None, COMPOSITE, COMPOSITE)
    assert [(change.verdict.action, change.body["kind"]) for change in rendering.changes] == [
        ("delete", "Instance"),
        ("create", "Cluster"),
    ]


def test_a_side_that_cannot_be_rendered_compares_nothing_and_says_why() -> None:
    rendering = compare(FixedComposer({"db": INSTANCE}), FixedComposer({}, "no XRD"), None, COMPOSITE, COMPOSITE)
    assert rendering == Rendering(rendered=2, reasons=("no XRD",))
    # AND a side without the composite is not rendered
    assert compare(FixedComposer({}), FixedComposer({}), None, None, COMPOSITE).rendered == 1


ORDERS = "platform/cloud/production-use1/orders.yaml"
APP_COMPOSITIONS = "platform/infrastructure/configs/app-compositions/base/app-compositions.yaml"


def example_files() -> dict[str, str]:
    return {path.relative_to(ROOT / "dist").as_posix(): path.read_text() for path in (ROOT / "dist").rglob("*.yaml")}


def test_changed_trees_pair_the_changed_composites_with_one_composer_when_no_definition_changes() -> None:
    # GIVEN the example's files, the production-use1 orders app's database with a larger instance
    old = example_files()
    files = {**old, ORDERS: old[ORDERS].replace("instanceClass: db.t4g.micro", "instanceClass: db.t4g.small")}
    trees = ChangedTrees(files, {ORDERS: old[ORDERS]}, definitions_changed=False)
    # WHEN its composites are paired THEN only the changed one is, rendered with one Composer for both trees
    [pair] = trees.pairs()
    assert (pair.path, pair.key) == (
        ORDERS,
        ("platform.fluxplane.io", "AppDatabase", "production-use1", "orders-database-main"),
    )
    before, after = trees.composers
    assert before is after
    [change] = trees.compare(pair).changes
    assert (change.name, change.verdict.action, change.verdict.fields) == ("instance", "update", ("instanceClass",))


def test_changed_trees_pair_every_composite_of_a_kind_whose_definition_changes() -> None:
    # GIVEN the example's files, and the database Composition changed (its instances' storage type)
    old = example_files()
    files = {**old, APP_COMPOSITIONS: old[APP_COMPOSITIONS].replace("storageType: gp3", "storageType: gp2")}
    assert files != old
    trees = ChangedTrees(files, {APP_COMPOSITIONS: old[APP_COMPOSITIONS]}, definitions_changed=True)
    # WHEN its composites are paired THEN every database is, unchanged itself, rendered with each tree's definitions
    assert trees.kinds == {"AppDatabase"}
    assert [pair.path for pair in trees.pairs()] == [
        f"platform/cloud/{c}/orders.yaml" for c in ("production-euw1", "production-use1", "production-usw2")
    ]
    before, after = trees.composers
    assert before is not after
    for pair in trees.pairs():
        assert [(c.name, c.verdict.fields) for c in trees.compare(pair).changes] == [("instance", ("storageType",))]
