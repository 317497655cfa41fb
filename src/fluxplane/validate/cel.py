"""CRD validation rules: every ``x-kubernetes-validations`` rule of a kind's schema, run on a document the way
the API server runs it when the object is created.

**Where and on what.** A rule sits on a node of ``openAPIV3Schema`` (the root, an object property, the
items of an array, the values of an ``additionalProperties`` map) and runs once per value at that node,
with ``self`` bound to the value. A node whose value is absent or null runs no rules. The API server
defaults before it validates, so the document is seen with the schema's ``default`` values filled in,
null fields dropped, and fields the schema does not declare pruned. Property names that are not CEL
identifiers are escaped as Kubernetes escapes them (``namespace`` is ``__namespace__``, ``a-b`` is
``a__dash__b``); at the root only ``apiVersion``, ``kind``, ``metadata.name`` and
``metadata.generateName`` are visible. ``type: number`` values are doubles. Strings with a ``format``
(``date-time``, ``duration``, ``byte``) stay strings: the engine cannot be handed timestamps, and no
rule of the CRD corpus reads such a field as one.

**What a failure says.** A rule that is false gives a finding at the node's path, extended by the
rule's ``fieldPath``, whose message is the rule's ``messageExpression`` (when it gives a non-empty line),
else its ``message``, else ``failed rule: RULE``; a ``reason`` of FieldValueRequired, FieldValueForbidden
or FieldValueDuplicate prefixes it as the API server does. A rule whose evaluation errors (``no such key``,
an index out of range) is a finding too: the API server rejects the object with
``ERROR evaluating rule: MESSAGE``.

**What is not evaluated, never passed.** Transition rules (those reading ``oldSelf``) only run on update
and are skipped and counted, except ``optionalOldSelf`` rules, which run on create with ``oldSelf`` empty.
A rule the engine cannot compile (a Kubernetes library function it lacks, such as ``quantity()``), a
runtime type mismatch Kubernetes' typed schemas would have ruled out, or a false rule whose value holds
a Flux post-build variable (``${cluster_name}``, replaced only in the cluster) is counted as not
evaluated and listed with its reason (``CelRules.not_evaluated_lines``).

**Engine.** fluxplane.validate.celengine, the one Flux health checks run too. Each rule is compiled once
per expression and each schema once per kind.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fluxplane.validate.celengine import FLUX, Program, compile_expression, without_literals
from fluxplane.validate.findings import Finding, format_path, short
from fluxplane.validate.schemas import PLACEHOLDER, CrdCorpus, prune_nulls
from fluxplane.validate.tree import Document

# The engine's names stay importable from here, where health checks and tests have taken them.
__all__ = [
    "DEFINITION_KINDS",
    "FLUX",
    "CelCounts",
    "CelRules",
    "Program",
    "Unevaluated",
    "compile_expression",
    "corpus_schema",
    "defined_schemas",
    "escape",
    "without_literals",
]

# Escaping as k8s.io/apiserver/pkg/cel/common escapes property names.
_RESERVED = frozenset(
    {
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    }
)
_ESCAPES = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}
_ESCAPABLE = re.compile(r"^[A-Za-z_./-][A-Za-z0-9_./-]*$")
_TO_ESCAPE = re.compile(r"__|[./-]")
_OLD_SELF = re.compile(r"\boldSelf\b")
_FIELD_STEP = re.compile(r"\.([^.\[\]']+)|\['((?:[^'\\]|\\.)*)'\]")
_REASONS = {
    "FieldValueRequired": "required value: ",
    "FieldValueForbidden": "forbidden: ",
}


def escape(name: str) -> str | None:
    """A property name as a CEL rule reads it (``namespace`` -> ``__namespace__``); None when it cannot."""
    if name in _RESERVED:
        return f"__{name}__"
    if not _ESCAPABLE.match(name):
        return None
    return _TO_ESCAPE.sub(lambda match: _ESCAPES[match.group(0)], name)


# --- schemas as rule trees -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Rule:
    rule: str
    message: str
    reason: str
    field_path: tuple[str, ...]
    transition: bool
    program: Program | None
    message_program: Program | None
    problem: str


@dataclass
class _Node:
    """One schema node: its rules, its children, and whether any rule lies at or below it."""

    path: str
    rules: tuple[_Rule, ...] = ()
    properties: dict[str, _Node] | None = None
    names: dict[str, str] = field(default_factory=dict)
    defaults: tuple[tuple[str, Any], ...] = ()
    items: _Node | None = None
    additional: _Node | None = None
    keep_unknown: bool = False
    number: bool = False
    active: bool = False


def _field_path(text: str) -> tuple[str, ...] | None:
    """``.spec.a['b.c']`` as ("spec", "a", "b.c"); None when it is not a field path the API server accepts."""
    steps: list[str] = []
    position = 0
    while position < len(text):
        match = _FIELD_STEP.match(text, position)
        if match is None:
            return None
        steps.append(match.group(1) if match.group(1) is not None else re.sub(r"\\(.)", r"\1", match.group(2)))
        position = match.end()
    return tuple(steps)


def _compile_rule(source: Mapping[str, Any]) -> _Rule:
    text = str(source.get("rule") or "").strip()
    message = str(source.get("message") or "").strip()
    reason = str(source.get("reason") or "")
    field_path = _field_path(str(source.get("fieldPath") or "")) or ()
    transition = bool(_OLD_SELF.search(without_literals(text)))
    optional_old = source.get("optionalOldSelf") is True
    if transition and not optional_old:
        return _Rule(text, message, reason, field_path, True, None, None, "")

    def wrap(expression: str) -> str:
        return f"cel.bind(oldSelf, optional.none(), {expression})" if optional_old else expression

    compiled = compile_expression(wrap(text))
    program, problem = compiled.program, compiled.error
    if program is not None and program.returns not in ("bool", "dyn"):
        problem = f"returns {program.returns}, not bool"
        program = None
    message_program = None
    expression = str(source.get("messageExpression") or "").strip()
    if expression:
        message_program = compile_expression(wrap(expression)).program
    return _Rule(text, message, reason, field_path, False, program, message_program, problem)


def _build(schema: Any, path: str) -> _Node:
    node = _Node(path)
    if not isinstance(schema, dict):
        return node
    node.rules = tuple(_compile_rule(rule) for rule in schema.get("x-kubernetes-validations") or [] if rule)
    node.keep_unknown = schema.get("x-kubernetes-preserve-unknown-fields") is True
    node.number = schema.get("type") == "number"
    active = bool(node.rules)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        node.properties = {}
        defaults: list[tuple[str, Any]] = []
        for name, sub in properties.items():
            child = _build(sub, f"{path}.{name}" if path else name)
            node.properties[name] = child
            escaped = escape(name)
            if escaped is not None:
                node.names[name] = escaped
            if isinstance(sub, dict) and "default" in sub and sub["default"] is not None:
                defaults.append((name, sub["default"]))
            active = active or child.active
        node.defaults = tuple(defaults)
    items = schema.get("items")
    if isinstance(items, dict):
        node.items = _build(items, f"{path}[*]")
        active = active or node.items.active
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        node.additional = _build(additional, f"{path}[*]")
        active = active or node.additional.active
    node.active = active
    return node


# --- running the rules ----------------------------------------------------------------------------------


@dataclass
class CelCounts:
    """Rule runs over every document checked: one per rule and value it applies to."""

    evaluated: int = 0
    failed: int = 0
    not_evaluated: int = 0
    transition_skipped: int = 0


@dataclass(frozen=True, order=True)
class Unevaluated:
    """A rule that was not evaluated, where it sits and why."""

    api_version: str
    kind: str
    path: str
    rule: str
    reason: str


def _has_placeholder(value: Any) -> bool:
    if isinstance(value, str):
        return bool(PLACEHOLDER.search(value))
    if isinstance(value, dict):
        return any(_has_placeholder(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_placeholder(item) for item in value)
    return False


def _message(rule: _Rule, value: Any, converted: Any) -> str:
    detail = ""
    if rule.message_program is not None:
        outcome = rule.message_program.run({"self": converted})
        if not outcome.error and isinstance(outcome.value, str):
            text = outcome.value.strip()
            if text and "\n" not in text:
                detail = text
    if not detail:
        detail = rule.message or f"failed rule: {rule.rule}"
    if rule.reason == "FieldValueDuplicate":
        return f"duplicate value: {short(value)}"
    return _REASONS.get(rule.reason, "") + detail


@dataclass
class _Run:
    document: Document
    api_version: str
    kind: str
    findings: list[Finding]


class CelRules:
    """The ``x-kubernetes-validations`` rules of every kind a schema lookup knows, run document by document.

    ``schema_of(group, version, kind)`` gives the served version's ``openAPIV3Schema`` or None. Use
    ``from_corpus`` for the CRD corpus validate reads (plus the tree's own CRDs and XRDs).
    """

    def __init__(self, schema_of: Callable[[str, str, str], Any]) -> None:
        self._schema_of = schema_of
        self._roots: dict[tuple[str, str, str], _Node | None] = {}
        self.counts = CelCounts()
        #: Rules not evaluated, with the number of values each was not evaluated on.
        self.not_evaluated: dict[Unevaluated, int] = {}

    @classmethod
    def from_corpus(cls, corpus: CrdCorpus, definitions: Iterable[Document] = ()) -> CelRules:
        """Rules of the corpus's CRDs, and of the CRDs and XRDs among ``definitions`` for groups it lacks."""
        own = defined_schemas(definitions)

        def schema_of(group: str, version: str, kind: str) -> Any:
            if corpus.covers(group):
                return corpus_schema(corpus, group, version, kind)
            return own.get((group, version, kind))

        return cls(schema_of)

    def check(self, document: Document) -> list[Finding]:
        """Findings of the rules of ``document``'s kind that do not hold; counts and skips are recorded."""
        body = document.body
        if not isinstance(body, dict):
            return []
        api_version, kind = body.get("apiVersion"), body.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str) or api_version.count("/") != 1:
            return []
        group, version = api_version.split("/")
        root = self._root(group, version, kind)
        if root is None or not root.active:
            return []
        run = _Run(document, api_version, kind, [])
        self._visit(root, prune_nulls(body), [], False, run)
        return run.findings

    def check_all(self, documents: Iterable[Document]) -> list[Finding]:
        """``check`` over ``documents``, findings in tree order."""
        return sorted(finding for document in documents for finding in self.check(document))

    def not_evaluated_lines(self) -> list[str]:
        """One line per rule that was not evaluated, for a flag that lists them."""
        lines = []
        for entry, count in sorted(self.not_evaluated.items()):
            noun = "value" if count == 1 else "values"
            lines.append(
                f"{entry.api_version} {entry.kind} {entry.path or '(root)'}: rule not evaluated "
                f"({entry.reason}; {count} {noun}): {entry.rule}"
            )
        return lines

    def _root(self, group: str, version: str, kind: str) -> _Node | None:
        key = (group, version, kind)
        if key not in self._roots:
            schema = self._schema_of(group, version, kind)
            self._roots[key] = _build(schema, "") if isinstance(schema, dict) else None
        return self._roots[key]

    def _visit(self, node: _Node, value: Any, parts: list[str | int], need: bool, run: _Run) -> Any:
        """Run the rules at and below ``node``; the value as CEL sees it when ``need`` (a rule above reads it)."""
        want = need or bool(node.rules)
        if not want and not node.active:
            return None
        converted: Any = value
        if isinstance(value, dict) and node.properties is not None:
            converted = self._visit_object(node, value, parts, want, run)
        elif isinstance(value, dict) and node.additional is not None:
            converted = {
                key: self._visit(node.additional, item, [*parts, key], want, run) for key, item in value.items()
            }
        elif isinstance(value, list) and node.items is not None:
            converted = [self._visit(node.items, item, [*parts, index], want, run) for index, item in enumerate(value)]
        elif node.number and isinstance(value, int) and not isinstance(value, bool):
            converted = float(value)
        if node.rules:
            self._evaluate(node, value, converted, parts, run)
        return converted if need else None

    def _visit_object(
        self, node: _Node, value: dict[str, Any], parts: list[str | int], want: bool, run: _Run
    ) -> dict[str, Any]:
        assert node.properties is not None
        present = dict(value)
        for name, default in node.defaults:
            if name not in present:
                present[name] = copy.deepcopy(default)
        converted: dict[str, Any] = {}
        for key, item in present.items():
            if not parts and key in ("apiVersion", "kind", "metadata"):
                if want and key == "metadata" and isinstance(item, dict):
                    converted[key] = {name: item[name] for name in ("name", "generateName") if name in item}
                elif want:
                    converted[key] = item
                continue
            child = node.properties.get(key)
            if child is None:
                if want and node.keep_unknown:
                    converted[key] = item
                continue
            sub = self._visit(child, item, [*parts, key], want, run)
            escaped = node.names.get(key)
            if want and escaped is not None:
                converted[escaped] = sub
        return converted

    def _evaluate(self, node: _Node, value: Any, converted: Any, parts: list[str | int], run: _Run) -> None:
        counts = self.counts
        for rule in node.rules:
            if rule.transition:
                counts.transition_skipped += 1
                continue
            if rule.program is None:
                self._skip(run, node, rule, rule.problem)
                continue
            outcome = rule.program.run({"self": converted})
            if not outcome.error and outcome.value is True:
                counts.evaluated += 1
                continue
            if _has_placeholder(value):
                self._skip(run, node, rule, "the value holds a Flux post-build variable")
                continue
            if outcome.error.startswith("No matching overloads"):
                self._skip(run, node, rule, f"a type the typed schema would rule out: {outcome.error}")
                continue
            if not outcome.error and not isinstance(outcome.value, bool):
                self._skip(run, node, rule, f"returned {short(outcome.value)}, not a bool")
                continue
            counts.evaluated += 1
            counts.failed += 1
            if outcome.error:
                detail = rule.message or rule.rule
                run.findings.append(
                    run.document.finding(format_path(parts), f"{outcome.error} evaluating rule: {detail}")
                )
            else:
                path = format_path([*parts, *rule.field_path])
                run.findings.append(run.document.finding(path, _message(rule, value, converted)))

    def _skip(self, run: _Run, node: _Node, rule: _Rule, reason: str) -> None:
        self.counts.not_evaluated += 1
        entry = Unevaluated(run.api_version, run.kind, node.path, rule.rule, reason)
        self.not_evaluated[entry] = self.not_evaluated.get(entry, 0) + 1


# --- where schemas come from ---------------------------------------------------------------------------


def corpus_schema(corpus: CrdCorpus, group: str, version: str, kind: str) -> Any:
    """The ``openAPIV3Schema`` of a served version in ``corpus``, or None."""
    return corpus.schema(group, version, kind)  # parses the group's CRD files once, shared with the schema check


DEFINITION_KINDS = frozenset({"CustomResourceDefinition", "CompositeResourceDefinition"})


def defined_schemas(documents: Iterable[Document]) -> dict[tuple[str, str, str], Any]:
    """(group, version, kind) -> ``openAPIV3Schema`` of every served version a CRD or XRD of the tree defines."""
    out: dict[tuple[str, str, str], Any] = {}
    for document in documents:
        body = document.body
        if not isinstance(body, dict) or body.get("kind") not in DEFINITION_KINDS:
            continue
        spec: dict[str, Any] = body["spec"] if isinstance(body.get("spec"), dict) else {}
        kind = (spec.get("names") or {}).get("kind")
        group = spec.get("group")
        if not isinstance(group, str) or not isinstance(kind, str):
            continue
        for version in spec.get("versions") or []:
            if not isinstance(version, dict) or version.get("served", True) is False:
                continue
            schema = (version.get("schema") or {}).get("openAPIV3Schema")
            if isinstance(schema, dict):
                out[(group, str(version.get("name")), kind)] = schema
    return out
