"""Turn pydantic validation errors into one readable line per problem.

A line reads ``environments/production.yaml: clusters[1].nodeGroups[0].desiredSize: expected an
integer >= 1, got 0``: the file, the field path, what is allowed and what was found.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from fluxplane.config import models
from fluxplane.config.merge import Loc, Origins, quoted
from fluxplane.config.yamlfile import read_yaml
from fluxplane.errors import ConfigError

PATTERN_HELP = {
    models.DNS_LABEL: "expected a DNS-1123 label (lower-case letters, digits and '-', "
    "starting and ending with a letter or digit)",
    models.DURATION: "expected a duration such as 30s, 5m or 1h30m",
    models.GIT_URL: "expected an ssh:// or https:// Git URL",
    models.AWS_REGION: "expected an AWS region such as us-west-2",
    models.KUBERNETES_VERSION: 'expected a Kubernetes minor version such as "1.33" (quoted)',
    models.GIT_BRANCH: "expected a Git branch name",
    models.RELATIVE_PATH: "expected a relative path such as dist/platform (no leading '/', no '..')",
    models.INSTANCE_TYPE: "expected an EC2 instance type such as m7i.large",
    models.AVAILABILITY_ZONE: "expected an availability zone name such as us-west-2a",
    models.OWNER: "expected a code owner such as @example-org/team or someone@example.com",
    models.GIT_REF: "expected a Git ref name (no spaces or any of ~^:?*[\\)",
}


#: How alike a name must be to a known one to be offered as what was meant (difflib's ratio).
CLOSE = 0.75


def closest(value: str, known: Iterable[str]) -> str | None:
    """The name of ``known`` closest to ``value``, when one is close enough to be what a typo meant: what every
    "did you mean" of fluxplane offers (a field, a pack, a region, an instance type). Close is three quarters
    alike (difflib's ratio): a letter dropped, doubled or swapped, a case or a separator changed, but not
    ``size`` for ``diskSize``."""
    close = difflib.get_close_matches(value, sorted(known), n=1, cutoff=CLOSE)
    return close[0] if close else None


def show(value: Any) -> str:
    """A short, unambiguous rendering of a value found in the input."""
    if isinstance(value, str):
        return quoted(value, 80)
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    return text if len(text) <= 80 else text[:77] + "..."


def show_url(value: str) -> str:
    """A URL found in the input as :func:`show` renders it, its credentials hidden (:func:`hide_credentials`): a
    credential written into a URL is a secret all the same, and a problem line reaches logs and CI output."""
    return show(hide_credentials(value))


def hide_credentials(value: str) -> str:
    """``value``, a URL, with its credentials hidden: anything before an '@' (``user:token@``, or a token alone;
    the last '@', as a token may hold a '/') shown as ``***``, and so are the query (``?access_token=...``) and the
    fragment. The login of an SSH URL (``git@host:org/repo``, ``ssh://git@host/...``) is only a name, and stays:
    SSH takes no password in a URL."""
    scheme, separator, rest = value.partition("://")
    if not separator or not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", scheme):
        scheme, separator, rest = "", "", value
    if "@" in rest:
        login, host = rest.rsplit("@", 1)
        ssh = scheme.lower() in ("", "ssh", "git+ssh", "ssh+git") and not re.search(r"[:/]", login)
        rest = rest if ssh else "***@" + host
    for mark in "?#":
        rest, found, _ = rest.partition(mark)
        rest += f"{mark}***" if found else ""
    return scheme + separator + rest


def _unwrap(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [t for arg in typing.get_args(annotation) for t in _unwrap(arg)]
    return [annotation]


def allowed_keys(model: type[BaseModel], loc: Loc) -> list[str]:
    """The keys a mapping at ``loc`` (relative to ``model``) accepts, or [] when unknown."""
    candidates: list[Any] = [model]
    for part in loc:
        following: list[Any] = []
        for candidate in candidates:
            if isinstance(part, str) and isinstance(candidate, type) and issubclass(candidate, BaseModel):
                for name, field in candidate.model_fields.items():
                    if (field.alias or name) == part:
                        following.extend(_unwrap(field.annotation))
            elif isinstance(part, int) and typing.get_origin(candidate) in (list, tuple):
                following.extend(t for arg in typing.get_args(candidate) for t in _unwrap(arg))
        candidates = [c for c in following if c is not type(None) and c is not Ellipsis]
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return [field.alias or name for name, field in candidate.model_fields.items()]
    return []


def _message(error: Any, model: type[BaseModel], loc: Loc) -> str:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    found = error.get("input")
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        allowed = allowed_keys(model, loc[:-1])
        guess = closest(str(loc[-1]), allowed) if loc else None
        hint = f'; did you mean "{guess}"?' if guess else ""
        if allowed:
            hint += f"{' ' if guess else '; '}allowed: {', '.join(allowed)}"
        return f"unknown field{hint}"
    if kind == "string_pattern_mismatch":
        pattern = ctx.get("pattern", "")
        help_text = PATTERN_HELP.get(pattern, f"expected a value matching {pattern}")
        return f"{help_text}, got {show_url(found) if pattern == models.GIT_URL else show(found)}"
    if kind == "string_too_long":
        return f"expected at most {ctx.get('max_length')} characters, got {len(found)}: {show(found)}"
    if kind == "too_long":
        return f"expected at most {ctx.get('max_length')} item(s), got {ctx.get('actual_length')}"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        op = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}[kind]
        bound = ctx.get({"greater_than_equal": "ge", "greater_than": "gt"}.get(kind, "le" if "equal" in kind else "lt"))
        return f"expected an integer {op} {bound}, got {show(found)}"
    if kind == "literal_error":
        return f"expected one of {ctx.get('expected')}, got {show(found)}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"expected an integer, got {show(found)}"
    if kind in ("string_type",):
        return f"expected a string, got {show(found)}"
    if kind in ("bool_type", "bool_parsing"):
        return f"expected true or false, got {show(found)}"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"expected a mapping, got {show(found)}"
    if kind in ("list_type", "tuple_type"):
        return f"expected a list, got {show(found)}"
    if kind == "too_short":
        return f"expected at least {ctx.get('min_length')} item(s), got {ctx.get('actual_length', 0)}"
    if kind in ("ip_v4_network", "ip_v4_address"):
        return f"expected an IPv4 network such as 10.20.0.0/16 (no host bits set), got {show(found)}"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    text = str(error["msg"])
    return f"{text[:1].lower()}{text[1:]}, got {show(found)}"


def describe_validation_error(
    exc: ValidationError, model: type[BaseModel], origins: Origins, mount: Loc = ()
) -> list[str]:
    """One line per error in ``exc`` raised validating ``model`` at ``mount`` of the merged document."""
    lines = []
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        # pydantic marks a mapping key that fails with a last "[key]"; the line names the key itself.
        where = loc[:-1] if loc and loc[-1] == "[key]" else loc
        lines.append(f"{origins.describe(mount + where)}: {_message(error, model, loc)}")
    return lines


class ProblemList:
    """Problem lines collected across a load, so that one run reports all of them."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def validate(self, model: type[BaseModel], data: Any, origins: Origins, mount: Loc = ()) -> Any:
        """``model`` validated from ``data``, or None with its problems recorded. Fields are read by their names in
        the files only (their aliases), also in a construct's props a file holds (a chart file's ``install``),
        which Python code may give by their Python names."""
        try:
            return model.model_validate(data, by_name=False)
        except ValidationError as exc:
            self.lines.extend(describe_validation_error(exc, model, origins, mount))
            return None


def read_mapping(path: Path, display: str, problems: ProblemList) -> dict[str, Any] | None:
    """The mapping at the top of a YAML file ({} when empty), or None with the problem recorded."""
    try:
        data = read_yaml(path, display)
    except ConfigError as exc:
        problems.lines.extend(exc.problems)
        return None
    if data is None:
        return {}
    if not isinstance(data, dict):
        problems.lines.append(f"{display}: expected a mapping at the top level, got {show(data)}")
        return None
    return data
