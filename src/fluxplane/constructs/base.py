"""The construct model for fluxplane's own objects.

cdk8s's App and Chart are jsii objects: every construct created in Python is mirrored in a Node.js
process, at about 0.5 ms a crossing. A fleet has tens of thousands of leaf objects, so fluxplane's
leaves (:class:`Resource`) live in a Python tree *below* each chart instead. The tree keeps the
constructs programming model (``Thing(scope, construct_id, props)``, ids unique among siblings,
stable ``node.path`` such as ``fleet/cluster-hub/sync/flux-system``) and is rendered by fluxplane
directly; a chart's jsii children (anything a user builds with cdk8s itself) are still synthesized by
cdk8s. This module never imports cdk8s.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any, ClassVar, Generic, TypeVar, cast

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel

from fluxplane.errors import ConstructError

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_NODE_ATTR = "_fluxplane_node"

P = TypeVar("P", bound=BaseModel)
T = TypeVar("T")


class Node:
    """Position of a construct in the tree: its scope, id, path and children."""

    __slots__ = ("_children", "construct", "id", "path", "scope")

    def __init__(self, construct: Any, scope: Any, construct_id: str, path: str) -> None:
        self.construct = construct
        self.scope = scope
        self.id = construct_id
        self.path = path
        self._children: dict[str, Any] = {}

    @property
    def children(self) -> tuple[Any, ...]:
        """Direct children in creation order."""
        return tuple(self._children.values())

    def try_find_child(self, construct_id: str) -> Any | None:
        return self._children.get(construct_id)

    def walk(self) -> Iterator[Any]:
        """Every construct below this node, depth first, in creation order."""
        # One generator with a stack of the levels being listed: a nested generator per construct would
        # cost a frame per level for every construct yielded, and most constructs are leaves.
        levels = [iter(self._children.values())]
        while levels:
            for child in levels[-1]:
                yield child
                children = node_of(child)._children
                if children:
                    levels.append(iter(children.values()))
                    break
            else:
                levels.pop()

    def remove(self, construct_id: str) -> None:
        """Take a child, and everything below it, out of the tree (it renders nothing)."""
        del self._children[construct_id]

    def add(self, construct_id: str, child: Any) -> Node:
        if not isinstance(construct_id, str) or not _ID.fullmatch(construct_id):
            raise ConstructError(
                f"{self.path}: construct id {construct_id!r} must start with a letter or digit and use only "
                "letters, digits, '.', '_' and '-'"
            )
        if construct_id in self._children:
            raise ConstructError(f"{self.path}: there is already a construct with id {construct_id!r}")
        node = Node(child, self.construct, construct_id, f"{self.path}/{construct_id}")
        self._children[construct_id] = child
        return node


class _ScopeNode(Node):
    """The node of a jsii construct (a cdk8s App, Chart or a user's Construct) used as a scope.

    cdk8s synthesizes only what its own tree holds: the first fluxplane construct put under such a scope
    hands the scope to :mod:`fluxplane.constructs.cdk8s_bridge`, which gives cdk8s the scope's fluxplane
    objects in one crossing when the app is synthesized, or refuses a scope where they would be written
    nowhere (directly under an App, outside any Chart).
    """

    __slots__ = ("adopted",)

    def __init__(self, construct: Any, scope: Any, construct_id: str, path: str) -> None:
        super().__init__(construct, scope, construct_id, path)
        self.adopted = False

    def add(self, construct_id: str, child: Any) -> Node:
        if not self.adopted:
            # Imported here: the bridge loads cdk8s, which importing this module must not (the pack registry,
            # the CLI); by now cdk8s is loaded anyway, the scope being one of its objects.
            from fluxplane.constructs.cdk8s_bridge import adopt

            construct = self.construct
            adopt(construct, self.path, lambda: [resource.to_dict() for resource in resources_below(construct)])
            self.adopted = True
        return super().add(construct_id, child)


def node_of(scope: Any) -> Node:
    """The fluxplane node of ``scope``: a fluxplane construct, or any cdk8s/constructs Construct."""
    node = getattr(scope, _NODE_ATTR, None)
    if node is None:
        jsii_node = getattr(scope, "node", None)
        if jsii_node is None:
            raise ConstructError(f"scope {scope!r} is not a construct")
        # A jsii construct (App, Chart or a user's Construct) used as a scope: one bridge call, once.
        node = _ScopeNode(scope, None, jsii_node.id, jsii_node.path)
        setattr(scope, _NODE_ATTR, node)
    return node


class Construct:
    """A construct in fluxplane's Python tree. Groups other constructs; renders nothing itself."""

    def __init__(self, scope: Any, construct_id: str) -> None:
        setattr(self, _NODE_ATTR, node_of(scope).add(construct_id, self))

    @property
    def node(self) -> Node:
        return getattr(self, _NODE_ATTR)  # type: ignore[no-any-return]

    def find_ancestor(self, kind: type[T]) -> T | None:
        scope = self.node.scope
        while scope is not None:
            if isinstance(scope, kind):
                return scope
            scope = node_of(scope).scope
        return None


def validate_props(construct_path: str, model: type[P], props: P | dict[str, Any]) -> P:
    """Validate props eagerly; errors name the construct path and the field."""
    if isinstance(props, model):
        return props
    try:
        return model.model_validate(props)
    except ValidationError as exc:
        raise props_error(construct_path, exc) from None


@contextlib.contextmanager
def validating(scope: Any, construct_id: str) -> Iterator[None]:
    """Props models built in the block for the construct ``construct_id`` under ``scope`` that refuse a value are a
    ConstructError naming the construct and the field, as :func:`validate_props` reports props given as data.

    For props whose values come from outside the definition's checks (a pack's own), built before the construct.
    """
    with props_problems(f"{node_of(scope).path}/{construct_id}"):
        yield


@contextlib.contextmanager
def props_problems(path: str) -> Iterator[None]:
    """Props models built in the block that refuse a value are a ConstructError under ``path`` (:func:`props_error`)."""
    try:
        yield
    except ValidationError as exc:
        raise props_error(path, exc) from None


def props_error(construct_path: str, exc: ValidationError) -> ConstructError:
    """The problems of props that failed validation, one line each: the construct path, the model and the field."""
    lines = []
    errors = exc.errors(include_url=False)
    # Pydantic counts only the valid items of a sequence against its min_length, so one bad
    # item also reports the sequence as too short; the item's own error is the one that helps.
    deeper = {error["loc"][:depth] for error in errors for depth in range(len(error["loc"]))}
    errors = [e for e in errors if not (e["type"] == "too_short" and e["loc"] in deeper)]
    for error in errors:
        # Upstream (camelCase) names, whether the caller passed snake_case or camelCase keys.
        loc = ".".join(to_camel(part) if isinstance(part, str) else str(part) for part in error["loc"]) or "(props)"
        message = str(error["ctx"]["error"]) if error["type"] == "value_error" else error["msg"]
        lines.append(f"{construct_path}: {exc.title}.{loc}: {message[:1].lower()}{message[1:]}")
    return ConstructError(lines)


class Root(Construct):
    """A tree root without cdk8s: for rendering constructs on their own (tests, scripts)."""

    def __init__(self, construct_id: str = "root") -> None:
        if not isinstance(construct_id, str) or not _ID.fullmatch(construct_id):
            raise ConstructError(
                f"root id {construct_id!r} must start with a letter or digit and use only letters, digits, "
                "'.', '_' and '-'"
            )
        setattr(self, _NODE_ATTR, Node(self, None, construct_id, construct_id))


class Resource(Construct):
    """A Kubernetes object rendered by fluxplane (a leaf of the tree).

    Subclasses set ``api_version`` and ``kind`` and implement :meth:`spec_dict` (or override
    :meth:`to_dict`). ``name`` and ``namespace`` are resolved once in ``__init__``.
    """

    api_version: str
    kind: str
    namespaced: bool = True
    #: False for objects written as given (their metadata is the document's own).
    builds_metadata: ClassVar[bool] = True

    def __init__(
        self,
        scope: Any,
        construct_id: str,
        *,
        name: str,
        namespace: str | None,
        labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None,
    ) -> None:
        if self.namespaced and not namespace:
            raise ConstructError(f"{node_of(scope).path}/{construct_id}: {self.kind} {name!r} needs a namespace")
        if not self.namespaced and namespace:
            raise ConstructError(
                f"{node_of(scope).path}/{construct_id}: {self.kind} is cluster-scoped; do not set a namespace"
            )
        super().__init__(scope, construct_id)
        self.name = name
        self.namespace = namespace
        self.labels = dict(sorted((labels or {}).items()))
        self.annotations = dict(sorted((annotations or {}).items()))

    @property
    def ref(self) -> tuple[str, str, str | None, str]:
        """(apiVersion, kind, namespace, name): identifies the object in a cluster."""
        return (self.api_version, self.kind, self.namespace, self.name)

    def metadata_dict(self) -> dict[str, Any]:
        metadata: dict[str, Any] = {"name": self.name}
        if self.namespace:
            metadata["namespace"] = self.namespace
        if self.labels:
            metadata["labels"] = dict(self.labels)
        if self.annotations:
            metadata["annotations"] = dict(self.annotations)
        return metadata

    def spec_dict(self) -> dict[str, Any] | None:
        return None

    def to_dict(self) -> dict[str, Any]:
        """The manifest, as plain dicts and lists in Kubernetes' conventional key order."""
        doc: dict[str, Any] = {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "metadata": self.metadata_dict(),
        }
        spec = self.spec_dict()
        if spec is not None:
            doc["spec"] = spec
        return doc


def resources_below(scope: Any) -> Iterator[Resource]:
    """Every Resource below ``scope``, in creation order."""
    return (construct for construct in node_of(scope).walk() if isinstance(construct, Resource))


def annotate(scope: Any, annotations: dict[str, str]) -> None:
    """Add ``annotations`` to every object built below ``scope`` (documents carried as given keep theirs)."""
    for resource in resources_below(scope):
        if resource.builds_metadata:
            resource.annotations = dict(sorted({**resource.annotations, **annotations}.items()))


def compact(mapping: dict[str, Any]) -> dict[str, Any]:
    """Drop keys whose value is None, keeping order: unset optional fields are not written."""
    return {key: value for key, value in mapping.items() if value is not None}


METADATA_FIELDS = ("name", "namespace", "labels", "annotations")


class TypedResource(Resource, Generic[P]):
    """A Resource whose props model holds its metadata and spec fields, in upstream order.

    ``name``, ``namespace``, ``labels`` and ``annotations`` props become metadata; every other set
    field becomes ``spec`` under its upstream name. Relationship verbs keep their additions on the
    construct (props are frozen) and :meth:`spec_dict` merges them in.

    ``props`` is the props model, which a type checker checks where it is built; upstream-named data (a mapping)
    is still validated into one at run time, for code written before the models were typed.
    """

    props_class: ClassVar[type[BaseModel]]

    def __init__(self, scope: Any, construct_id: str, props: P) -> None:
        validated = cast(P, validate_props(f"{node_of(scope).path}/{construct_id}", self.props_class, props))
        fields: Any = validated
        super().__init__(
            scope,
            construct_id,
            name=fields.name,
            namespace=getattr(fields, "namespace", None),
            labels=getattr(fields, "labels", None),
            annotations=getattr(fields, "annotations", None),
        )
        self.props: P = validated

    def spec_dict(self) -> dict[str, Any] | None:
        spec = self.props.model_dump(mode="json", by_alias=True, exclude_none=True, exclude=set(METADATA_FIELDS))
        return spec
