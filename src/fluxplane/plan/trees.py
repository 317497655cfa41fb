"""The two trees a plan compares, and reading a tree's files only where a question needs them.

**Base.** The dist/ committed at the base ref, read from Git byte for byte (fluxplane.git.files_at): that is
what Flux applies, whatever fluxplane version wrote it. When the ref has no dist/ in the project's place, its
definition is synthesized in a temporary worktree as ``fluxplane diff`` does (fluxplane.diff); a ref with neither
is an empty tree.

**Head.** What synth would write now: the definition loaded and rendered in memory, the clusters whose inputs did
not change taken from the synth cache (read only: the plan writes nothing), with the folders another tool owns
as they are in dist/ (fluxplane.synth.with_kept).

``Texts`` reads one tree's files: those holding a top-level ``kind:`` of the kinds asked for are parsed (once),
the others are never read as YAML.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fluxplane import diff, git, synth
from fluxplane.config.awsdata import fleet_support_warnings
from fluxplane.diff.fleet import Tree, repositories_of_plan
from fluxplane.diff.report import HEAD_LABEL
from fluxplane.errors import FluxplaneError
from fluxplane.files import output_dir
from fluxplane.packs.registry import PackRegistry
from fluxplane.plan.model import Base
from fluxplane.synth.plan import FleetPlan
from fluxplane.validate.tree import Document, load_documents

_PURPOSE = "fluxplane plan reads the base's dist/ from Git"


_KIND = re.compile(r"(?m)^kind: (\S+)\s*$")


class Texts:
    """One tree's files by path, parsed where asked (module docstring); ``kinds`` is shared by the trees of a plan,
    keyed by text: the top-level kinds of each file."""

    def __init__(self, files: Mapping[str, str], kinds: dict[str, frozenset[str]] | None = None) -> None:
        self.files = files
        self._parsed: dict[str, list[Document]] = {}
        self._kinds_of = {} if kinds is None else kinds
        self._by_kind: dict[str, list[str]] | None = None

    def documents(self, path: str) -> list[Document]:
        """The documents of one file (none when it does not parse)."""
        found = self._parsed.get(path)
        if found is None:
            found = self._parsed[path] = load_documents(self.files[path], path, typed=False)[0]
        return found

    def holding(self, kinds: Iterable[str]) -> list[str]:
        """The YAML files with a top-level ``kind:`` among ``kinds``, sorted."""
        if self._by_kind is None:
            self._by_kind = {}
            for path in sorted(self.files):
                if not path.endswith((".yaml", ".yml")):
                    continue
                text = self.files[path]
                found = self._kinds_of.get(text)
                if found is None:
                    found = self._kinds_of[text] = frozenset(_KIND.findall(text))
                for kind in found:
                    self._by_kind.setdefault(kind, []).append(path)
        return sorted({path for kind in set(kinds) for path in self._by_kind.get(kind, ())})

    def objects(
        self, kinds: Iterable[str], wanted: Callable[[dict[str, Any]], bool], mentions: Iterable[str] = ()
    ) -> list[Document]:
        """The documents of ``kinds`` that ``wanted`` accepts, in path order; with ``mentions``, only files whose
        text holds one of them are parsed."""
        chosen = set(kinds)
        needles = tuple(mentions)
        return [
            document
            for path in self.holding(chosen)
            if not needles or any(needle in self.files[path] for needle in needles)
            for document in self.documents(path)
            if isinstance(document.body, dict) and document.body.get("kind") in chosen and wanted(document.body)
        ]


def _committed(base: diff.Base, dist: Path) -> dict[str, str] | None:
    """The files of dist/ as committed at the base, None when the base has none there."""
    try:
        folder = dist.resolve().relative_to(base.checkout.toplevel.resolve()).as_posix()
    except ValueError:
        return None
    found = git.files_at(base.checkout.toplevel, base.commit, folder, purpose=_PURPOSE)
    if found is None:
        return None
    return {path: data.decode("utf-8", errors="replace") for path, data in found.items()}


def base_tree(root: Path, base: diff.Base) -> tuple[Tree, Base]:
    """The tree at ``base`` (module docstring), and where it came from."""
    files = _committed(base, output_dir(root))
    if files is not None:
        return Tree(base.ref, files), Base(base.ref, base.commit, "committed")
    with diff.git.worktree(base.checkout, base.commit) as project:
        try:
            tree = diff.synthesize(project, base.ref)
        except FluxplaneError as exc:
            raise diff.DiffError([f"{base.ref}: {line}" for line in exc.problems]) from None
    return tree, Base(base.ref, base.commit, "synthesized" if tree.files else "empty")


def head_tree(root: Path, registry: PackRegistry | None = None) -> tuple[Tree, FleetPlan]:
    """What synth would write for the definition under ``root`` now (module docstring), nothing written."""
    with synth.paused_gc():
        plan = synth.load_plan(root, registry)
    cache = synth.SynthCache.for_root(root, read_only=True)
    files = synth.with_kept(plan, synth.render_plan(plan, cache), output_dir(root))
    support = tuple(fleet_support_warnings(plan.fleet, datetime.now(UTC).date()))
    return Tree(HEAD_LABEL, files, repositories_of_plan(plan), support), plan
