"""Publishing a rendered tree: what synth keeps of the tree it replaces, what it refuses, and the write.

The last steps of the one synthesis pipeline (fluxplane.synth.pipeline), and the only way to them: ``fluxplane
synth``, the library's ``synthesize(root)``, ``FleetApp.synth()`` and the benchmarks all write through a
:class:`Publisher`, so none can skip what protects the user:

* :meth:`Publisher.complete` makes rendered files the tree synth publishes: with the folders another tool owns
  (``flux bootstrap``'s files, kept as they are in the tree), or refusing to delete a file it does not write
  there;
* :meth:`Publisher.write` takes only such a tree, refuses what replaces, deletes or moves live infrastructure
  (fluxplane.synth.guard) unless the allowances name it, records the allocations, then swaps the tree in
  atomically (fluxplane.synth.writer).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fluxplane.core.layout import PLATFORM
from fluxplane.errors import ConfigError, OutputError
from fluxplane.synth import allocations
from fluxplane.synth.guard import guard
from fluxplane.synth.plan import FleetPlan
from fluxplane.synth.scan import TreeScan
from fluxplane.synth.writer import (
    Staleness,
    TreeFiles,
    check_outdir,
    compare_tree,
    forget_text_digests,
    keep_read,
    large_tree,
    read_ahead,
    read_kept,
    regular_files,
    spare_path,
    write_tree,
)
from fluxplane.system.files import output_dir


def _sync_folder(plan: FleetPlan, cluster: str | None = None) -> str:
    """The folder of ``cluster``'s Flux sync objects (the hub's by default)."""
    # Imported here: the charts are heavy, and only a write needs them (not load_plan, the packs and edit commands)
    from fluxplane.charts.cluster import sync_folder

    return sync_folder(PLATFORM, cluster or plan.fleet.management.name)


#: How messages name a file of a cluster's flux-system/ that synth keeps, by who owns it (``bootstrap``).
_KEPT_FROM = {"flux": "kept from flux bootstrap", "flux-operator": "kept for your FluxInstance"}


def kept_owners(plan: FleetPlan) -> dict[str, str]:
    """The folders of dist/ another tool owns, with who owns them (``flux`` or ``flux-operator``): a cluster's
    ``flux-system/`` when ``flux bootstrap`` writes it or the FluxInstance of the Flux Operator syncs the cluster
    (``bootstrap: flux`` or ``flux-operator``, the hub's under ``management``). The hub's first."""
    owners: dict[str, str] = {}
    clusters = [(None, plan.fleet.management.bootstrap), *((c.name, c.bootstrap) for c in plan.fleet.clusters)]
    for cluster, bootstrap in clusters:
        if bootstrap != "fluxplane":
            owners[_sync_folder(plan, cluster)] = bootstrap
    return owners


def kept_folders(plan: FleetPlan) -> tuple[str, ...]:
    """The folders of dist/ another tool owns (kept_owners)."""
    return tuple(kept_owners(plan))


def with_kept(plan: FleetPlan, files: Mapping[str, str], outdir: Path) -> dict[str, str]:
    """``files`` and, as they are in ``outdir``, the files of the folders another tool owns (kept_files)."""
    return {**files, **kept_files(plan, files, outdir)}


def kept_files(plan: FleetPlan, files: Mapping[str, str], outdir: Path) -> dict[str, str]:
    """The files of the folders another tool owns (kept_folders), as they are in ``outdir``, to publish with
    ``files``.

    The kept files are published with synth's own and pass the same checks (read_kept): a Secret in clear
    there is refused as anywhere in dist/. Without ``management.bootstrap: flux``, a file in the hub's
    ``flux-system/`` that synth does not write (``flux bootstrap``'s ``gotk-components.yaml``: the Flux
    controllers and CRDs) is refused, not deleted: Flux would prune itself, and every custom resource with its CRDs.
    """
    owners = kept_owners(plan)
    kept: dict[str, str] = {}
    problems: list[str] = []
    for owner in sorted(set(owners.values())):
        try:
            kept.update(read_kept(outdir, tuple(f for f, o in owners.items() if o == owner), _KEPT_FROM[owner]))
        except OutputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise OutputError(problems)
    if plan.fleet.management.bootstrap != "fluxplane":
        return kept
    foreign = [path for path in regular_files(outdir, _sync_folder(plan)) if path not in files]
    if foreign:
        raise ConfigError(
            [
                f"{outdir / path}: a file fluxplane does not write (flux bootstrap keeps the Flux controllers in "
                "this folder); synth would delete it and Flux would prune what it holds: set management.bootstrap: "
                "flux (or flux-operator, for a FluxInstance of yours) in environments/base.yaml to keep the folder as "
                "it is, or remove the file yourself"
                for path in foreign
            ]
            + [f"{outdir}: nothing written"]
        )
    return kept


@dataclass(frozen=True)
class Allowances:
    """What the user asked synth to do although it changes live infrastructure: ``Kind/namespace/name``
    patterns, with shell wildcards (``--replace``, ``--delete``, ``--move``, ``--manage``, ``--auto-mode``)."""

    replace: tuple[str, ...] = ()
    delete: tuple[str, ...] = ()
    move: tuple[str, ...] = ()
    manage: tuple[str, ...] = ()
    auto_mode: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        replace: Sequence[str] = (),
        delete: Sequence[str] = (),
        move: Sequence[str] = (),
        manage: Sequence[str] = (),
        auto_mode: Sequence[str] = (),
    ) -> Allowances:
        return cls(tuple(replace), tuple(delete), tuple(move), tuple(manage), tuple(auto_mode))


@dataclass(frozen=True)
class CompleteTree:
    """A whole tree synth may publish: the rendered files and the kept ones, for the plan they came from.

    Made by :meth:`Publisher.complete` alone, so a tree :meth:`Publisher.write` takes always holds the kept
    files."""

    plan: FleetPlan
    files: TreeFiles = field(repr=False)


class Publisher:
    """Writes trees for the project under ``root`` into ``outdir`` (default: fluxplane.system.files.output_dir);
    ``allow`` names the changes to live infrastructure the user asked for."""

    def __init__(self, root: Path, outdir: Path | None = None, *, allow: Allowances | None = None) -> None:
        self.root = root
        self.outdir = output_dir(root, outdir)
        self.allow = allow or Allowances()
        self._outdir_checked = False
        self._scan: TreeScan | None = None

    def check_outdir(self) -> None:
        """Refuse an ``outdir`` synth must not write (a symlink, the project, a folder of the user's), before
        anything is read from it or written to it (fluxplane.synth.writer.check_outdir)."""
        if not self._outdir_checked:
            check_outdir(self.outdir, self.root)
            self._outdir_checked = True

    def expect_write(self) -> None:
        """Say that a write follows: for a large tree, ``outdir`` and its spare are listed in a process of their
        own while the caller loads and renders (fluxplane.synth.scan), and the write's guard and update read those
        listings. Only once ``outdir`` is checked, and under the project's lock (the caller's)."""
        self.check_outdir()
        if self._scan is None and large_tree(self.outdir):
            self._scan = TreeScan(self.outdir, spare_path(self.outdir), functools.partial(read_ahead, self.outdir))
            self._scan.start()

    def complete(self, plan: FleetPlan, files: Mapping[str, str]) -> CompleteTree:
        """``files`` as synth publishes them: with the folders another tool owns, as they are in ``outdir``."""
        self.check_outdir()
        return CompleteTree(plan, TreeFiles.of(files).merged(kept_files(plan, files, self.outdir)))

    def refusals(self, tree: CompleteTree) -> list[str]:
        """What writing ``tree`` would replace, delete or move that the allowances do not name."""
        allow, plan = self.allow, tree.plan
        if self._scan is not None:
            keep_read(self._scan.ahead())
        return guard(
            tree.files,
            self.outdir,
            hub=plan.fleet.management.name,
            replace=allow.replace,
            delete=allow.delete,
            move=allow.move,
            manage=allow.manage,
            auto_mode=allow.auto_mode,
            followed_versions=plan.followed_versions,
            listed=self._scan.dist() if self._scan is not None else None,
        )

    def write(self, tree: CompleteTree) -> None:
        """Write ``tree`` into ``outdir``: refused (ConfigError, nothing written) when it replaces, deletes or
        moves what the allowances do not name; the allocations first, so a write stopped in between gives the
        same ranges next time."""
        try:
            refused = self.refusals(tree)
            if refused:
                raise ConfigError([*refused, f"{self.outdir}: nothing written"])
            allocations.write(self.root, tree.plan)
            write_tree(tree.files, self.outdir, self._scan)
        finally:
            self._scan = None  # the listings were of the trees this write replaced
            forget_text_digests()  # the output's digests, known or taken by the guard, held its texts

    def staleness(self, tree: CompleteTree) -> Staleness:
        """What writing ``tree`` would change in ``outdir`` (nothing written); the recorded allocations count as
        ``changed``."""
        try:
            found = compare_tree(tree.files, self.outdir)
        finally:
            forget_text_digests()  # the digests of deferred texts read, which hold them
        if allocations.stale(self.root, tree.plan):
            found.recorded.append(allocations.ALLOCATIONS)
        return found
