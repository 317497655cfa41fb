"""The CEL engine that CRD validation rules (fluxplane.validate.cel), admission policies
(fluxplane.validate.admission) and Flux health checks (fluxplane.validate.health) run: three dialects, each
expression compiled once, and a run that gives a value or the engine's error.

cel-expr-python, Google's binding of cel-cpp, with the CEL standard library, the optional types (``a.?b``,
``orValue``), the string, encoder and binding extensions, and in Python the parts of the Kubernetes
libraries the corpus uses or that cost a few lines: regex ``find``/``findAll``, the list functions
(``isSorted``, ``sum``, ``min``, ``max``, ``indexOf``, ``lastIndexOf``), ``isIP``, ``isCIDR`` and the
``sets`` extension.
"""

from __future__ import annotations

import functools
import ipaddress
import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cel_expr_python import cel  # type: ignore[import-untyped]
from cel_expr_python.ext import (  # type: ignore[import-untyped]
    ext_bindings,
    ext_encoders,
    ext_optional,
    ext_strings,
)

#: The CEL dialect of CRD validation rules: ``self`` and ``oldSelf``, type-checked at compile time.
KUBERNETES = "kubernetes"
#: The CEL dialect of ValidatingAdmissionPolicy expressions: ``object``, ``oldObject``, ``request``,
#: ``namespaceObject``, ``params`` and ``variables``, type-checked at compile time.
ADMISSION = "admission"
#: The CEL dialect of Flux ``healthCheckExprs``: parsed, not checked; the object's top-level fields are
#: the variables (kustomize-controller builds its environment without declarations).
FLUX = "flux"

#: String literals of a rule, removed before looking for ``oldSelf``.
_STRINGS = re.compile(r"""[rRbB]*(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')""")
_STATUS_PREFIX = re.compile(r"^[A-Z_]+: ")
_COMPILE_PREFIX = re.compile(r"^(?:[A-Z_]+: )?ERROR: <input>:\d+:\d+: ")
_MISSING_KEY = re.compile(r'^Key not found in map : "(.*)"$')


def without_literals(expression: str) -> str:
    """``expression`` with its string literals emptied, to look for identifiers in it."""
    return _STRINGS.sub("''", expression)


@dataclass(frozen=True)
class CelResult:
    """What an expression gave: a value, or the engine's error (then ``value`` is None)."""

    value: Any = None
    error: str = ""


class Program:
    """One compiled expression, ready to run on any number of activations."""

    def __init__(self, expression: Any) -> None:
        self._expression = expression
        #: The type the checker gives the result (``bool``, ``string``, ``dyn``...); ``dyn`` when unchecked.
        self.returns: str = expression.return_type().name().lower()

    def run(self, data: Mapping[str, Any], *, plain: bool = False) -> CelResult:
        """The expression's value on ``data``; ``plain`` gives maps and lists as Python's own, to feed to another run
        (an admission policy's variables)."""
        try:
            result = self._expression.eval(data=dict(data))
        except Exception as exc:  # the binding raises for a value it cannot convert
            return CelResult(error=_error_text(str(exc)))
        if result.type() == cel.Type.ERROR:
            return CelResult(error=_error_text(str(result.value())))
        return CelResult(result.plain_value() if plain else result.value())


@dataclass(frozen=True)
class Compiled:
    """A compiled expression, or why it does not compile."""

    program: Program | None
    error: str = ""


def _error_text(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else "unknown error"
    first = _STATUS_PREFIX.sub("", first)
    missing = _MISSING_KEY.match(first)
    return f"no such key: {missing.group(1)}" if missing else first


@functools.cache
def _environment(dialect: str) -> Any:
    extensions = [ext_strings.ExtStrings(), ext_optional.ExtOptional(), ext_encoders.ExtEncoders(), _library()]
    if dialect == KUBERNETES:
        return cel.NewEnv(
            variables={"self": cel.Type.DYN, "oldSelf": cel.Type.DYN},
            extensions=[*extensions, ext_bindings.ExtBindings()],
        )
    if dialect == ADMISSION:
        names = ("object", "oldObject", "request", "namespaceObject", "params", "variables")
        return cel.NewEnv(
            variables=dict.fromkeys(names, cel.Type.DYN), extensions=[*extensions, ext_bindings.ExtBindings()]
        )
    return cel.NewEnv(extensions=extensions)


@functools.cache
def compile_expression(expression: str, dialect: str = KUBERNETES) -> Compiled:
    """``expression`` compiled once for ``dialect`` (KUBERNETES, ADMISSION or FLUX); the same text is compiled once."""
    environment = _environment(dialect)
    try:
        compiled = environment.compile(expression, disable_check=dialect == FLUX)
    except Exception as exc:  # the binding reports every compile error as RuntimeError
        text = str(exc).strip().splitlines()
        return Compiled(None, _COMPILE_PREFIX.sub("", text[0]) if text else "does not compile")
    return Compiled(Program(compiled))


# --- the Kubernetes CEL libraries, in Python -----------------------------------------------------------


def _find(text: str, pattern: str) -> str:
    match = re.search(pattern, text)
    return match.group(0) if match else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    found = [match.group(0) for match in re.finditer(pattern, text)]
    return found if limit < 0 else found[:limit]


def _is_sorted(items: list[Any]) -> bool:
    return all(left <= right for left, right in itertools.pairwise(items))


def _least(items: list[Any]) -> Any:
    if not items:
        raise ValueError("min called on empty list")
    return min(items)


def _greatest(items: list[Any]) -> Any:
    if not items:
        raise ValueError("max called on empty list")
    return max(items)


def _index_of(items: list[Any], value: Any) -> int:
    return next((index for index, item in enumerate(items) if item == value), -1)


def _last_index_of(items: list[Any], value: Any) -> int:
    return next((index for index in range(len(items) - 1, -1, -1) if items[index] == value), -1)


def _is_ip(text: str) -> bool:
    """An IPv4 or IPv6 address, as ``isIP`` reads it: no zone, no IPv4-mapped IPv6, no leading zeros."""
    if "%" in text:
        return False
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    return not (isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None)


def _is_cidr(text: str) -> bool:
    address, slash, bits = text.partition("/")
    if not slash or not bits.isdigit() or not _is_ip(address):
        return False
    return int(bits) <= (32 if "." in address and ":" not in address else 128)


def _sets_contains(items: list[Any], wanted: list[Any]) -> bool:
    return all(item in items for item in wanted)


def _sets_intersects(items: list[Any], others: list[Any]) -> bool:
    return any(item in items for item in others)


def _sets_equivalent(items: list[Any], others: list[Any]) -> bool:
    return _sets_contains(items, others) and _sets_contains(others, items)


def _overload(name: str, result: Any, params: Sequence[Any], impl: Callable[..., Any], member: bool) -> Any:
    return cel.Overload(name, result, list(params), is_member=member, impl=impl)


def _library() -> Any:
    string, boolean, integer, dyn = cel.Type.STRING, cel.Type.BOOL, cel.Type.INT, cel.Type.DYN
    items = cel.Type.List(dyn)
    functions = {
        "find": [_overload("string_find_string", string, [string, string], _find, True)],
        "findAll": [
            _overload("string_find_all_string", cel.Type.List(string), [string, string], _find_all, True),
            _overload("string_find_all_string_int", cel.Type.List(string), [string, string, integer], _find_all, True),
        ],
        "isSorted": [_overload("list_is_sorted", boolean, [items], _is_sorted, True)],
        "sum": [_overload("list_sum", dyn, [items], sum, True)],
        "min": [_overload("list_min", dyn, [items], _least, True)],
        "max": [_overload("list_max", dyn, [items], _greatest, True)],
        "indexOf": [_overload("list_index_of", integer, [items, dyn], _index_of, True)],
        "lastIndexOf": [_overload("list_last_index_of", integer, [items, dyn], _last_index_of, True)],
        "isIP": [_overload("is_ip_string", boolean, [string], _is_ip, False)],
        "isCIDR": [_overload("is_cidr_string", boolean, [string], _is_cidr, False)],
        "sets.contains": [_overload("sets_contains", boolean, [items, items], _sets_contains, False)],
        "sets.intersects": [_overload("sets_intersects", boolean, [items, items], _sets_intersects, False)],
        "sets.equivalent": [_overload("sets_equivalent", boolean, [items, items], _sets_equivalent, False)],
    }
    return cel.CelExtension("fluxplane-kubernetes", [cel.FunctionDecl(name, ovl) for name, ovl in functions.items()])
