"""Testing with fluxplane: a fleet repository's own definition, and a pack.

Packs (:mod:`fluxplane.testing.packs`): ``bind_pack(PACK, config)`` binds a pack as synth does and hands
back its objects as plain dicts with its health gates and pod identities; ``check_pack(PACK)`` lists what
breaks the pack contract (``[]`` when nothing does). fluxplane's conformance test runs it over every
installed pack; a pack's own distribution runs it over its pack.

Fleets: snapshots of what a fleet repository synthesizes, and the fleet's invariants.

A fleet repository made by ``fluxplane init`` has ``tests/test_fleet.py``, which uses the pytest plugin
fluxplane installs (:mod:`fluxplane.testing.pytest_plugin`). Its fixtures hand tests a
:class:`FleetUnderTest`: the project's definition synthesized in memory once per test session.

* ``fleet.files``: {path under dist/: text}, what ``fluxplane synth`` would write;
* ``fleet.clusters`` and ``fleet.summary(cluster)``: what each cluster runs, as a reviewer reads a change
  (fluxplane.testing.summary): the versions it pins (charts, sources, Crossplane packages) and every Flux
  Kustomization that applies something there, with its path, dependsOn and objects. One snapshot of it per
  cluster makes every change of what a cluster runs a reviewed change of a few lines; dist/ itself is held
  by ``stale()``;
* ``fleet.stale()``: the files of the committed dist/ that differ from it (``synth --check``);
* ``fleet.reference_findings()``: what Flux and Crossplane would fail to resolve at run time (every
  ``sourceRef``, ``dependsOn``, ``spec.path``, ``kubeConfig`` ...), and values a YAML 1.2 reader types
  otherwise than fluxplane meant;
* ``fleet.schema_findings(crds)``: everything ``fluxplane validate`` checks, against the CRD schemas in
  ``crds`` (the kustomize builds when kubectl is installed).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fluxplane.system.node import require_node

if TYPE_CHECKING:
    from fluxplane.testing.packs import BoundPack, bind_pack, check_pack

__all__ = ["BoundPack", "FleetUnderTest", "bind_pack", "check_pack", "synthesize_fleet"]

#: Names imported when first used: the pytest plugin imports this module in every test session where fluxplane
#: is installed, and what binding a pack needs (the pack API, the constructs, the config models) is heavy.
_PACK_TESTING = frozenset({"BoundPack", "bind_pack", "check_pack"})


def __getattr__(name: str) -> Any:
    if name not in _PACK_TESTING:
        raise AttributeError(f"module 'fluxplane.testing' has no attribute {name!r}")
    # Imported on first use, not by the pytest plugin's import of this module (_PACK_TESTING)
    from fluxplane.testing import packs

    value = getattr(packs, name)
    globals()[name] = value
    return value


@dataclass(frozen=True)
class FleetUnderTest:
    """A project's fleet, synthesized in memory (nothing is written to the project)."""

    root: Path
    files: dict[str, str]
    #: The folders of dist/ another tool owns (``flux bootstrap``'s), which synth keeps as they are.
    kept: tuple[str, ...] = ()

    def stale(self) -> list[str]:
        """One line per file of ``<root>/dist`` that synth would add, change or remove (empty: up to date)."""
        # Imported here, as every import of synth and validate in this module: pytest imports the plugin, and so
        # this module, in each test session where fluxplane is installed, whether it uses the fixtures or not.
        from fluxplane.synth.writer import compare_tree, read_kept

        dist = self.root / "dist"
        staleness = compare_tree({**self.files, **read_kept(dist, self.kept)}, dist)
        return [
            *(f"added: {path}" for path in staleness.added),
            *(f"changed: {path}" for path in staleness.changed),
            *(f"removed: {path}" for path in staleness.removed),
        ]

    @cached_property
    def _summaries(self) -> dict[str, dict[str, Any]]:
        # Imported here: pytest imports this module in every session (see stale).
        from fluxplane.testing.summary import summarize

        return summarize(self.files)

    @property
    def clusters(self) -> list[str]:
        """The clusters of the fleet (every entry folder of dist/), by name."""
        return list(self._summaries)

    def summary(self, cluster: str) -> dict[str, Any]:
        """What ``cluster`` runs: ``versions`` and ``kustomizations`` (fluxplane.testing.summary)."""
        return self._summaries[cluster]

    @contextmanager
    def _tree(self) -> Iterator[Path]:
        holder = Path(tempfile.mkdtemp(prefix="fluxplane-test-"))
        try:
            for relative, text in self.files.items():
                path = holder / "dist" / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            yield holder / "dist"
        finally:
            shutil.rmtree(holder, ignore_errors=True)

    def reference_findings(self) -> list[str]:
        """Findings of validate's run-time reference check and YAML 1.2 typing, one line each."""
        # Imported here: validate is heavy, and pytest imports this module in every session (see stale).
        from fluxplane.validate.references import check_references
        from fluxplane.validate.tree import load_tree

        with self._tree() as dist:
            tree = load_tree(dist)
            findings = sorted({*tree.parse_findings, *check_references(tree)})
        return [finding.line() for finding in findings]

    def schema_findings(self, crds: Sequence[Path], kustomize: bool | None = None) -> list[str]:
        """Every finding of ``fluxplane validate`` against the CRD folders ``crds``; kustomize builds run when
        ``kustomize`` is True, or (None) when kubectl is installed."""
        # Imported here: validate is heavy, and pytest imports this module in every session (see stale).
        from fluxplane.validate import validate_tree
        from fluxplane.validate.tree import load_tree

        build = shutil.which("kubectl") is not None if kustomize is None else kustomize
        with self._tree() as dist:
            findings = validate_tree(load_tree(dist), list(crds), build)
        return [finding.line() for finding in findings]


def synthesize_fleet(root: Path) -> FleetUnderTest:
    """The fleet defined under ``root`` (its environments/), synthesized in memory with the installed packs."""
    # Imported here: synth is heavy, and pytest imports this module in every session (see FleetUnderTest.stale).
    from fluxplane import synth
    from fluxplane.config.cdk8s_charts import has_cdk8s_charts

    if has_cdk8s_charts(root):  # the project's own cdk8s charts run on Node.js; nothing else does
        require_node()
    pipeline = synth.Pipeline(root)
    plan = pipeline.load()
    return FleetUnderTest(root, pipeline.build(plan), synth.kept_folders(plan))
