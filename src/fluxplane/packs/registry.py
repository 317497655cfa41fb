"""The pack registry: every installed pack, found through the ``fluxplane.packs`` entry points.

The registry is an object, not global state: synth builds one, tests build their own. It is sorted
by name and refuses duplicates, requirements on packs that are not installed, and requirement cycles,
with messages that list what is installed; and needs no cluster offers, and features fluxplane does not
have in ``provides`` (a misspelt one would switch nothing on), with messages that list the known ones.
A third party's pack whose module does not import is bad input too (its distribution is to fix or
uninstall), one line each; a built-in one is a bug.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterable, Iterator
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from pydantic import ValidationError

from fluxplane.config.merge import Origins
from fluxplane.config.models import is_dns_label
from fluxplane.config.problems import closest, describe_validation_error
from fluxplane.errors import PackError
from fluxplane.packs.api import CAPABILITIES, PROVIDES, Pack, PackConfig

ENTRY_POINT_GROUP = "fluxplane.packs"
#: The distribution of the built-in packs: an error importing one of them is a bug, not bad input.
DISTRIBUTION = "fluxplane"


def find_cycle(graph: dict[str, tuple[str, ...]]) -> list[str] | None:
    """A dependency cycle in ``graph`` as [a, b, ..., a], or None. Deterministic: nodes in sorted order."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt in graph and state.get(nxt) is None:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if state.get(node) is None:
            found = visit(node)
            if found:
                return found
    return None


def _origin(entry: EntryPoint) -> str:
    """Where an entry point comes from: its distribution and object. Asked only of a name claimed twice: a
    distribution's name is read from its metadata file."""
    return f"{entry.dist.name if entry.dist else '?'} ({entry.value})"


def _unloadable(entry: EntryPoint, exc: Exception) -> str:
    """One line for an entry point whose module cannot be imported: the distribution to fix or remove,
    the entry point, and the error's first line (``--debug`` shows the traceback)."""
    distribution = entry.dist.name if entry.dist else "an unknown distribution"
    lines = str(exc).strip().splitlines()
    message = f"{type(exc).__name__}: {lines[0]}{' ...' if len(lines) > 1 else ''}" if lines else type(exc).__name__
    return (
        f"pack {entry.name!r} of distribution {distribution!r} cannot be loaded: entry point "
        f"'{entry.name} = {entry.value}' raised {message}; fix or uninstall that distribution "
        "(fluxplane --debug shows the traceback)"
    )


def declaration_problems(pack: Pack) -> list[str]:
    """Why the registry refuses ``pack`` as declared, one line each (``[]``: it does not): a name that is no
    DNS-1123 label (it names folders and objects), namespaces that are none, a need no cluster offers, a
    feature fluxplane does not have. fluxplane.testing.check_pack reports the same lines."""
    problems: list[str] = []
    if not is_dns_label(pack.name):
        problems.append(f"pack {pack.name!r}: name must be a DNS-1123 label")
    if bad := [namespace for namespace in pack.namespaces if not is_dns_label(namespace)]:
        problems.append(f"pack {pack.name!r}: namespaces must be DNS-1123 labels, got {', '.join(map(repr, bad))}")
    if unknown := [need for need in pack.needs if need not in CAPABILITIES]:
        problems.append(
            f"pack {pack.name!r}: needs {', '.join(map(repr, unknown))}, which no cluster offers "
            f"(known: {', '.join(CAPABILITIES)})"
        )
    if unknown := [feature for feature in pack.provides if feature not in PROVIDES]:
        problems.append(
            f"pack {pack.name!r}: provides {', '.join(map(repr, unknown))}, which is not a fluxplane feature "
            f"(known: {', '.join(PROVIDES)})"
        )
    return problems


def section_key(name: str, section: Any) -> tuple[str, bytes] | None:
    """What pack ``name``'s config is validated from, as a key: equal only for sections of the same values of the
    same types (``true`` is not ``1``), in the same order; None for a value marshal does not take (then it is
    validated each time)."""
    try:
        return name, marshal.dumps(section, 2)
    except ValueError:
        return None


class PackRegistry:
    """Installed packs by name."""

    def __init__(self, packs: Iterable[Pack]) -> None:
        problems: list[str] = []
        by_name: dict[str, Pack] = {}
        for pack in packs:
            if refused := declaration_problems(pack):
                problems.extend(refused)
            elif pack.name in by_name:
                problems.append(f"pack {pack.name!r} is registered twice")
            else:
                by_name[pack.name] = pack
        self._packs = dict(sorted(by_name.items()))
        for pack in self._packs.values():
            for required in pack.requires:
                if required not in self._packs:
                    problems.append(
                        f"pack {pack.name!r} requires {required!r}, which is not installed "
                        f"(installed: {', '.join(self._packs)})"
                    )
        cycle = find_cycle({name: pack.requires for name, pack in self._packs.items()})
        if cycle:
            problems.append(f"packs require each other in a cycle: {' -> '.join(cycle)}")
        if problems:
            raise PackError(problems)

    @classmethod
    def from_entry_points(cls, group: str = ENTRY_POINT_GROUP) -> PackRegistry:
        """Load every pack registered in ``group``; two distributions claiming one name is an error."""
        packs: list[Pack] = []
        claimed: dict[str, EntryPoint] = {}
        problems: list[str] = []
        failures: list[Exception] = []
        for entry in sorted(entry_points(group=group), key=lambda e: (e.name, e.value)):
            if entry.name in claimed:
                first, origin = _origin(claimed[entry.name]), _origin(entry)
                if first != origin:
                    problems.append(f"pack {entry.name!r} is registered by two distributions: {first} and {origin}")
                continue
            claimed[entry.name] = entry
            try:
                pack = entry.load()
            except Exception as exc:
                if entry.dist is not None and entry.dist.name == DISTRIBUTION:
                    raise  # a built-in pack that does not import is fluxplane's bug
                problems.append(_unloadable(entry, exc))
                failures.append(exc)
                continue
            if not isinstance(pack, Pack):
                problems.append(f"entry point {entry.name!r} ({entry.value}) is not a fluxplane Pack")
                continue
            if pack.name != entry.name:
                problems.append(f"entry point {entry.name!r} ({entry.value}) names a pack called {pack.name!r}")
                continue
            packs.append(pack)
        if problems:
            # The import errors stay attached for ``fluxplane --debug``, which prints their tracebacks.
            cause: BaseException | None = None
            if len(failures) == 1:
                cause = failures[0]
            elif failures:
                cause = ExceptionGroup("packs that cannot be loaded", failures)
            raise PackError(problems) from cause
        return cls(packs)

    def _installed(self) -> str:
        return ", ".join(self._packs) or "none"

    def _unknown(self, name: str) -> str:
        """``unknown pack 'x'``, with the installed pack it is likely a typo of, and every installed pack."""
        guess = closest(name, self._packs)
        hint = f"; did you mean {guess!r}?" if guess else ""
        return f"unknown pack {name!r}{hint} (installed: {self._installed()})"

    def __iter__(self) -> Iterator[Pack]:
        return iter(self._packs.values())

    def __contains__(self, name: object) -> bool:
        return name in self._packs

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._packs)

    def get(self, name: str) -> Pack:
        try:
            return self._packs[name]
        except KeyError:
            raise PackError(self._unknown(name)) from None

    def configure(
        self, sections: dict[str, Any], origins: Origins, known: dict[tuple[str, bytes], PackConfig] | None = None
    ) -> tuple[dict[str, PackConfig], list[str]]:
        """Validate ``packs:`` sections; returns the enabled packs' configs and the problems found.

        ``known`` keeps the configs validated so far, by pack and section (:func:`section_key`), for the next call
        to take: a fleet's clusters repeat the same few sections, and a config is a frozen value.
        """
        configs: dict[str, PackConfig] = {}
        problems: list[str] = []
        for name in sorted(sections):
            raw = sections[name]
            if name not in self._packs:
                problems.append(f"{origins.describe((name,))}: {self._unknown(name)}")
                continue
            pack = self._packs[name]
            value = {} if raw is None else raw
            key = section_key(name, value) if known is not None else None
            config = known.get(key) if known is not None and key is not None else None
            if config is None:
                try:
                    config = pack.config.model_validate(value)
                except ValidationError as exc:
                    problems.extend(describe_validation_error(exc, pack.config, origins, (name,)))
                    continue
                if known is not None and key is not None:
                    known[key] = config
            if config.enabled:
                configs[name] = config
        for name in configs:
            missing = [required for required in self._packs[name].requires if required not in configs]
            for required in missing:
                if required in sections:
                    # Switched off somewhere: point at the switch, which is what has to change.
                    problems.append(
                        f"{origins.describe((required, 'enabled'))}: pack {required!r} is switched off here, "
                        f"but pack {name!r} requires it"
                    )
                else:
                    problems.append(
                        f"{origins.describe((name,))}: pack {name!r} requires {required!r}, which is not enabled "
                        f"here; add {required!r} to packs"
                    )
        return configs, problems
