"""The Python construct tree: ids, paths, children, walks, Resources and props validation."""

from __future__ import annotations

import sys
from typing import Any, ClassVar

import pytest

from fluxplane.constructs import Construct, Resource, Root, TypedResource, node_of, resources_below
from fluxplane.constructs.base import compact, validate_props, validating
from fluxplane.constructs.props import Label, Name, Props
from fluxplane.errors import ConstructError


class Widget(Resource):
    api_version = "example.com/v1"
    kind = "Widget"


class ClusterWidget(Resource):
    api_version = "example.com/v1"
    kind = "ClusterWidget"
    namespaced = False


class SizedWidget(Resource):
    api_version = "example.com/v1"
    kind = "SizedWidget"

    def spec_dict(self) -> dict[str, Any]:
        return {"size": 3}


class GadgetProps(Props):
    name: Name
    namespace: Label
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    size: int
    color_name: str | None = None


class Gadget(TypedResource[GadgetProps]):
    api_version = "example.com/v1"
    kind = "Gadget"
    props_class = GadgetProps


class FakeJsiiNode:
    """Stands in for a cdk8s/constructs ``node``: only ``id`` and ``path`` are read."""

    id = "chart"
    path = "app/chart"


class FakeJsiiScope:
    """A jsii construct used as a scope; counts how often its ``node`` is read (each read is a bridge "
    "call)."""

    reads: ClassVar[int] = 0

    @property
    def node(self) -> FakeJsiiNode:
        type(self).reads += 1
        return FakeJsiiNode()


def widget(scope: Any, construct_id: str, name: str = "w") -> Widget:
    return Widget(scope, construct_id, name=name, namespace="apps")


# Root and Node paths


def test_root_has_default_id_and_path_root() -> None:
    # GIVEN / WHEN a root without an id
    root = Root()

    # THEN its id and path are "root" and it has no scope
    assert (root.node.id, root.node.path, root.node.scope) == ("root", "root", None)


def test_root_takes_its_id_as_path() -> None:
    # GIVEN / WHEN a root named "fleet"
    root = Root("fleet")

    # THEN its path is that id
    assert root.node.path == "fleet"


def test_child_path_joins_ancestor_ids_with_slashes() -> None:
    # GIVEN a root, a group and a leaf below the group
    root = Root("fleet")
    group = Construct(root, "cluster-hub")

    # WHEN a construct is added below the group
    leaf = Construct(group, "sync")

    # THEN its path is every id from the root down, and its scope is the group
    assert leaf.node.path == "fleet/cluster-hub/sync"
    assert leaf.node.id == "sync"
    assert leaf.node.scope is group


def test_children_are_kept_in_creation_order_not_sorted() -> None:
    # GIVEN a root
    root = Root()

    # WHEN children are created in the order b, a, c
    b, a, c = Construct(root, "b"), Construct(root, "a"), Construct(root, "c")

    # THEN children lists them in that order
    assert root.node.children == (b, a, c)


def test_try_find_child_returns_child_or_none() -> None:
    # GIVEN a root with one child
    root = Root()
    child = Construct(root, "child")

    # WHEN / THEN the child is found by id, an unknown id gives None
    assert root.node.try_find_child("child") is child
    assert root.node.try_find_child("other") is None


def test_walk_is_depth_first_in_creation_order() -> None:
    # GIVEN a tree a(a1(a1x), a2), b
    root = Root()
    a = Construct(root, "a")
    a1 = Construct(a, "a1")
    a1x = Construct(a1, "a1x")
    a2 = Construct(a, "a2")
    b = Construct(root, "b")

    # WHEN the tree is walked
    walked = list(root.node.walk())

    # THEN each construct comes before its children, siblings in creation order, the root excluded
    assert walked == [a, a1, a1x, a2, b]


def test_walk_of_a_subtree_stays_inside_it() -> None:
    # GIVEN two sibling groups with children
    root = Root()
    a = Construct(root, "a")
    a_child = Construct(a, "child")
    Construct(Construct(root, "b"), "child")

    # WHEN only "a" is walked
    # THEN only a's descendants are visited
    assert list(a.node.walk()) == [a_child]


def test_walk_goes_deeper_than_the_interpreter_s_recursion_limit() -> None:
    # GIVEN a chain of constructs deeper than Python's recursion limit, a resource at the bottom
    root = Root()
    scope: Any = root
    depth = sys.getrecursionlimit() + 100
    for level in range(depth):
        scope = Construct(scope, f"level-{level}")
    bottom = widget(scope, "bottom", "bottom")

    # WHEN it is walked and its resources listed
    walked = list(root.node.walk())

    # THEN every construct is found, in order, without a RecursionError
    assert len(walked) == depth + 1
    assert walked[-1] is bottom
    assert list(resources_below(root)) == [bottom]


def test_resources_below_yields_only_resources_in_creation_order() -> None:
    # GIVEN resources mixed with plain groups, at several depths
    root = Root()
    first = widget(root, "first", "first")
    group = Construct(root, "group")
    nested = widget(group, "nested", "nested")
    last = widget(root, "last", "last")

    # WHEN the resources below the root are listed
    found = list(resources_below(root))

    # THEN plain groups are skipped and the order is the creation (walk) order
    assert found == [first, nested, last]


# Construct ids


@pytest.mark.parametrize("construct_id", ["a", "A", "0", "cluster-hub", "v1.2_beta", "x--y"])
def test_valid_ids_are_accepted(construct_id: str) -> None:
    # GIVEN a root
    root = Root()

    # WHEN a construct is created with a valid id
    child = Construct(root, construct_id)

    # THEN the id is kept as given
    assert child.node.id == construct_id


@pytest.mark.parametrize("construct_id", ["", "-a", ".a", "_a", "a/b", "a b", "ä", "a\n"])
def test_invalid_id_is_rejected_with_the_scope_path(construct_id: str) -> None:
    # GIVEN a group below a root
    group = Construct(Root(), "group")

    # WHEN / THEN an id that does not start with a letter or digit, or has other characters, is refused
    with pytest.raises(
        ConstructError,
        match=r"^root/group: construct id .* must start with a letter or digit and use only letters, "
        r"digits, '\.', '_' and '-'$",
    ):
        Construct(group, construct_id)


def test_non_string_id_is_rejected() -> None:
    # GIVEN a root
    root = Root()

    # WHEN / THEN an integer id is refused, showing the bad value
    with pytest.raises(ConstructError, match=r"^root: construct id 7 must start with a letter or digit"):
        Construct(root, 7)  # type: ignore[arg-type]


def test_duplicate_id_among_siblings_is_rejected() -> None:
    # GIVEN a root with a child "apps"
    root = Root()
    Construct(root, "apps")

    # WHEN / THEN a second child "apps" is refused
    with pytest.raises(ConstructError, match=r"^root: there is already a construct with id 'apps'$"):
        Construct(root, "apps")


def test_same_id_under_different_parents_is_allowed() -> None:
    # GIVEN two groups
    root = Root()
    a, b = Construct(root, "a"), Construct(root, "b")

    # WHEN each gets a child with the same id
    in_a, in_b = Construct(a, "apps"), Construct(b, "apps")

    # THEN both exist with distinct paths
    assert (in_a.node.path, in_b.node.path) == ("root/a/apps", "root/b/apps")


# node_of and jsii scopes


def test_node_of_rejects_an_object_that_is_not_a_construct() -> None:
    # GIVEN / WHEN / THEN a plain object is not a scope
    with pytest.raises(ConstructError, match=r"^scope 'not a scope' is not a construct$"):
        node_of("not a scope")


def test_jsii_scope_path_prefixes_children_and_is_read_once() -> None:
    # GIVEN a jsii-like scope (a cdk8s Chart) whose node has not been read yet
    FakeJsiiScope.reads = 0
    chart = FakeJsiiScope()

    # WHEN two fluxplane constructs are created below it
    first = Construct(chart, "first")
    second = Construct(chart, "second")

    # THEN their paths continue the jsii path, and the jsii node was read only once
    assert (first.node.path, second.node.path) == ("app/chart/first", "app/chart/second")
    assert FakeJsiiScope.reads == 1
    assert node_of(chart).children == (first, second)


def test_find_ancestor_returns_nearest_scope_of_the_kind() -> None:
    # GIVEN a Widget below two nested groups of a Construct subclass
    class Group(Construct):
        pass

    root = Root()
    outer = Group(root, "outer")
    inner = Group(outer, "inner")
    leaf = widget(inner, "leaf")

    # WHEN / THEN the nearest Group is found, and a kind with no ancestor gives None
    assert leaf.find_ancestor(Group) is inner
    assert leaf.find_ancestor(Widget) is None


def test_find_ancestor_stops_at_a_jsii_scope() -> None:
    # GIVEN a construct directly below a jsii-like scope
    leaf = Construct(FakeJsiiScope(), "leaf")

    # WHEN / THEN looking for an ancestor kind ends at the jsii scope without error
    assert leaf.find_ancestor(Root) is None
    assert leaf.find_ancestor(FakeJsiiScope) is not None


# Resource


def test_resource_to_dict_without_spec_has_only_header_and_metadata() -> None:
    # GIVEN a namespaced resource without a spec
    resource = Widget(Root(), "w", name="web", namespace="apps")

    # WHEN / THEN it renders apiVersion, kind and metadata, in that order, and no spec
    assert resource.to_dict() == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "web", "namespace": "apps"},
    }
    assert list(resource.to_dict()) == ["apiVersion", "kind", "metadata"]


def test_resource_spec_comes_after_metadata() -> None:
    # GIVEN a resource with a spec
    resource = SizedWidget(Root(), "w", name="web", namespace="apps")

    # WHEN it is rendered
    doc = resource.to_dict()

    # THEN spec follows metadata
    assert list(doc) == ["apiVersion", "kind", "metadata", "spec"]
    assert doc["spec"] == {"size": 3}


def test_resource_metadata_sorts_labels_and_annotations_and_orders_keys() -> None:
    # GIVEN labels and annotations given out of order
    resource = Widget(
        Root(),
        "w",
        name="web",
        namespace="apps",
        labels={"tier": "web", "app": "shop"},
        annotations={"z.io/b": "2", "a.io/a": "1"},
    )

    # WHEN the metadata is rendered
    metadata = resource.to_dict()["metadata"]

    # THEN keys are name, namespace, labels, annotations and label/annotation keys are sorted
    assert list(metadata) == ["name", "namespace", "labels", "annotations"]
    assert list(metadata["labels"]) == ["app", "tier"]
    assert list(metadata["annotations"]) == ["a.io/a", "z.io/b"]


def test_resource_keeps_its_own_copy_of_labels() -> None:
    # GIVEN a labels dict passed to a resource
    labels = {"app": "shop"}
    resource = Widget(Root(), "w", name="web", namespace="apps", labels=labels)

    # WHEN the caller changes the dict afterwards
    labels["app"] = "changed"

    # THEN the resource is not affected
    assert resource.to_dict()["metadata"]["labels"] == {"app": "shop"}


def test_resource_ref_identifies_the_object() -> None:
    # GIVEN a resource
    resource = Widget(Root(), "w", name="web", namespace="apps")

    # WHEN / THEN its ref is (apiVersion, kind, namespace, name)
    assert resource.ref == ("example.com/v1", "Widget", "apps", "web")


def test_cluster_scoped_resource_has_no_namespace_in_metadata() -> None:
    # GIVEN a cluster-scoped resource
    resource = ClusterWidget(Root(), "w", name="global", namespace=None)

    # WHEN / THEN metadata carries only the name, and the ref has no namespace
    assert resource.to_dict()["metadata"] == {"name": "global"}
    assert resource.ref == ("example.com/v1", "ClusterWidget", None, "global")


@pytest.mark.parametrize("namespace", [None, ""])
def test_namespaced_resource_without_namespace_is_rejected(namespace: str | None) -> None:
    # GIVEN a root
    root = Root()

    # WHEN / THEN a namespaced kind without a namespace is refused, naming the path, kind and name
    with pytest.raises(ConstructError, match=r"^root/w: Widget 'web' needs a namespace$"):
        Widget(root, "w", name="web", namespace=namespace)


def test_cluster_scoped_resource_with_namespace_is_rejected() -> None:
    # GIVEN a root
    root = Root()

    # WHEN / THEN a cluster-scoped kind given a namespace is refused
    with pytest.raises(ConstructError, match=r"^root/w: ClusterWidget is cluster-scoped; do not set a namespace$"):
        ClusterWidget(root, "w", name="global", namespace="apps")


# TypedResource and validate_props


def test_typed_resource_puts_metadata_props_in_metadata_and_the_rest_in_spec() -> None:
    # GIVEN props with metadata fields, a spec field and an unset optional field
    gadget = Gadget(Root(), "g", {"name": "g1", "namespace": "apps", "labels": {"a": "b"}, "size": 2})

    # WHEN / THEN metadata fields are not repeated in spec, unset fields are left out
    assert gadget.to_dict() == {
        "apiVersion": "example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": "g1", "namespace": "apps", "labels": {"a": "b"}},
        "spec": {"size": 2},
    }


def test_typed_resource_spec_uses_upstream_camel_case_names() -> None:
    # GIVEN a snake_case field set from Python
    gadget = Gadget(Root(), "g", {"name": "g1", "namespace": "apps", "size": 2, "color_name": "red"})

    # WHEN / THEN it is written under its camelCase alias
    assert gadget.to_dict()["spec"] == {"size": 2, "colorName": "red"}


def test_typed_resource_keeps_a_props_instance_as_given() -> None:
    # GIVEN an already validated props instance
    props = GadgetProps(name="g1", namespace="apps", size=1)

    # WHEN a construct is created from it
    gadget = Gadget(Root(), "g", props)

    # THEN the same object is kept (no second validation)
    assert gadget.props is props


def test_typed_resource_props_are_frozen() -> None:
    # GIVEN a construct
    gadget = Gadget(Root(), "g", {"name": "g1", "namespace": "apps", "size": 1})

    # WHEN / THEN its props cannot be changed in place
    with pytest.raises(ValueError, match="frozen"):
        gadget.props.size = 2  # type: ignore[misc]


def test_typed_resource_with_bad_props_is_not_added_to_the_tree() -> None:
    # GIVEN a root
    root = Root()

    # WHEN a construct fails props validation
    with pytest.raises(ConstructError):
        Gadget(root, "g", {"name": "g1", "namespace": "apps", "size": "big"})

    # THEN the id is still free
    assert root.node.try_find_child("g") is None
    assert Gadget(root, "g", {"name": "g1", "namespace": "apps", "size": 1}).node.path == "root/g"


def test_validate_props_reports_every_problem_with_path_model_and_field() -> None:
    # GIVEN props with a wrong type, a missing field and an unknown field
    props = {"name": "Bad_Name", "namespace": "apps", "size": "big", "colour": "red"}

    # WHEN they are validated
    with pytest.raises(ConstructError) as caught:
        validate_props("root/g", GadgetProps, props)

    # THEN each problem is one line naming the construct path, the model and the field
    problems = caught.value.problems
    assert len(problems) == 3
    assert problems[0].startswith("root/g: GadgetProps.name: string should match pattern")
    assert problems[1] == (
        "root/g: GadgetProps.size: input should be a valid integer, unable to parse string as an integer"
    )
    assert problems[2] == "root/g: GadgetProps.colour: extra inputs are not permitted"


def test_validate_props_reports_missing_required_field() -> None:
    # GIVEN props without the required "size"
    # WHEN / THEN the error names the field and says it is required (first letter lower-cased)
    with pytest.raises(ConstructError, match=r"^root/g: GadgetProps\.size: field required$"):
        validate_props("root/g", GadgetProps, {"name": "g1", "namespace": "apps"})


def test_validate_props_accepts_camel_case_and_snake_case_names() -> None:
    # GIVEN the same field under its Python and its upstream name
    # WHEN both are validated
    snake = validate_props("p", GadgetProps, {"name": "g", "namespace": "n", "size": 1, "color_name": "red"})
    camel = validate_props("p", GadgetProps, {"name": "g", "namespace": "n", "size": 1, "colorName": "red"})

    # THEN they give equal props
    assert snake == camel
    assert snake.color_name == "red"


def test_validate_props_rejects_a_non_mapping() -> None:
    # GIVEN / WHEN / THEN props that are not a mapping are reported against "(props)"
    with pytest.raises(ConstructError, match=r"^root/g: GadgetProps\.\(props\): input should be a valid dictionary"):
        validate_props("root/g", GadgetProps, ["not", "a", "mapping"])  # type: ignore[arg-type]


def test_validating_reports_a_props_model_built_in_it_as_validate_props_does() -> None:
    # GIVEN a props model built for a construct, with a bad value
    # WHEN / THEN the error is one line naming the construct's path, the model and the field
    with (
        pytest.raises(ConstructError, match=r"^root/g: GadgetProps\.size: input should be a valid integer"),
        validating(Root(), "g"),
    ):
        GadgetProps(name="g1", namespace="apps", size="big")


def test_compact_drops_none_values_and_keeps_order() -> None:
    # GIVEN a mapping with None values between set ones, including falsy non-None values
    mapping: dict[str, Any] = {"b": 1, "a": None, "c": False, "d": "", "e": None, "f": []}

    # WHEN / THEN only None values are dropped and the key order is unchanged
    assert list(compact(mapping).items()) == [("b", 1), ("c", False), ("d", ""), ("f", [])]
