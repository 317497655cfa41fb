"""The tests mirror the sources: each module of src/fluxplane has its unit test module, and each unit test module
tests a module that exists.

The mirror of ``src/fluxplane/<path>/<name>.py`` is ``tests/unit/<path>/test_<name>.py``; a package's ``__init__.py``
is mirrored inside the package's own folder, by ``tests/unit/<path>/<package>/test_<package>.py`` (the top package's
by ``tests/unit/test_fluxplane.py``). Behaviour across several modules (through the CLI, the whole synthesis, the
real tools) is tested in tests/integration, and helpers the tests share live in tests/support, which is all a
test module imports of the tests besides conftest's fixtures; tests/unit holds nothing else. A source module
without its unit test module is named in ``EXEMPT``, with the reason.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import ROOT

SOURCES = ROOT / "src" / "fluxplane"
UNIT = ROOT / "tests" / "unit"

#: What a source module's __init__ that only gathers its package's names is exempt for.
RE_EXPORTS = "a package's __init__ that only re-exports its modules' names"
#: What a source package's __init__ that holds its docstring alone is exempt for.
PACKAGE_DOCSTRING = "a package's __init__ that holds only the docstring saying what the package is"

#: Why the parts of the compose checks have no unit test module of their own.
COMPOSE_CHECKS = (
    "tested through the compose checks it is a part of, tests/unit/validate/compose/test_checks.py: the example "
    "dist/ with one fault of each kind, and small trees for the rules the example does not exercise"
)

#: Source modules without a mirrored unit test module (paths under src/fluxplane), with why.
EXEMPT: dict[str, str] = {
    "__main__.py": "runs fluxplane.cli.main; tests/integration run the program as `python -m fluxplane`",
    "charts/__init__.py": RE_EXPORTS,
    "config/__init__.py": RE_EXPORTS,
    "config/apps/__init__.py": RE_EXPORTS,
    "config/models/__init__.py": RE_EXPORTS,
    "constructs/__init__.py": RE_EXPORTS,
    "constructs/cdk8s_bridge.py": "needs cdk8s's own synthesis of a user's app: tests/integration/"
    "test_library_mode.py and test_migration.py",
    "core/__init__.py": RE_EXPORTS,
    "core/tree/__init__.py": RE_EXPORTS,
    "kinds/__init__.py": RE_EXPORTS,
    "review/__init__.py": PACKAGE_DOCSTRING,
    "sealing/__init__.py": PACKAGE_DOCSTRING,
    "system/__init__.py": PACKAGE_DOCSTRING,
    "packs/__init__.py": PACKAGE_DOCSTRING,
    "review/plan/__init__.py": "`fluxplane plan` over two commits of a repository: tests/integration/test_plan.py, and "
    "tests/unit/commands/test_plan.py for the command",
    "synth/__init__.py": "its synthesize and check are the top package's: tests/unit/test_fluxplane.py and "
    "tests/integration/test_library_mode.py",
    "synth/pipeline.py": "the one synthesis pipeline, which every integration test runs: tests/integration/"
    "test_library_mode.py, test_crash_safety.py, test_incremental.py",
    "synth/publish.py": "the pipeline's last steps, tested through them: tests/unit/synth/test_guard.py (what synth "
    "keeps and refuses of the tree it replaces), tests/unit/synth/test_writer.py, tests/integration/"
    "test_crash_safety.py",
    "synth/readmes.py": "tested through synth's output: tests/unit/synth/test_graph.py draws the graphs, "
    "tests/unit/synth/test_render.py and tests/integration/test_fixture_fleets.py hold the README.md files",
    "validate/compose/__init__.py": RE_EXPORTS,
}

#: Files of tests/unit that are no test module.
PACKAGE_FILES = ("__init__.py", "conftest.py")


def mirror(source: Path) -> Path:
    """The unit test module of ``source``, a module under src/fluxplane (module docstring)."""
    relative = source.relative_to(SOURCES)
    if relative.name == "__init__.py":
        package = relative.parent
        return UNIT / package / f"test_{package.name or 'fluxplane'}.py"
    return UNIT / relative.parent / f"test_{relative.stem}.py"


def sources() -> list[Path]:
    return sorted(path for path in SOURCES.rglob("*.py") if "__pycache__" not in path.parts)


def test_the_mirror_of_a_module_a_package_and_the_top_package() -> None:
    assert mirror(SOURCES / "charts" / "cluster.py") == UNIT / "charts" / "test_cluster.py"
    assert mirror(SOURCES / "validate" / "compose" / "xr.py") == UNIT / "validate" / "compose" / "test_xr.py"
    assert mirror(SOURCES / "site" / "__init__.py") == UNIT / "site" / "test_site.py"
    assert mirror(SOURCES / "__init__.py") == UNIT / "test_fluxplane.py"


def test_every_source_module_has_its_unit_test_module_or_a_reason() -> None:
    # GIVEN every module of src/fluxplane
    # WHEN its mirrored unit test module is looked for
    missing = [
        path.relative_to(SOURCES).as_posix()
        for path in sources()
        if not mirror(path).is_file() and path.relative_to(SOURCES).as_posix() not in EXEMPT
    ]
    # THEN each has one, or EXEMPT says why not
    assert missing == []


def test_every_exemption_names_a_module_without_its_test_and_says_why() -> None:
    # an exemption of a module that is gone, or that has its test module now, is stale
    stale = [name for name in EXEMPT if not (SOURCES / name).is_file() or mirror(SOURCES / name).is_file()]
    assert stale == []
    assert all(reason.strip() for reason in EXEMPT.values())
    # and a reason that names the tests that cover the module names files that exist
    named = {name for reason in EXEMPT.values() for name in re.findall(r"\btests/[\w/]+\.py\b", reason)}
    assert named
    assert sorted(name for name in named if not (ROOT / name).is_file()) == []


def test_every_unit_test_module_mirrors_a_source_module() -> None:
    # GIVEN the unit test modules, and what mirrors each source module
    mirrors = {mirror(path) for path in sources()}
    # WHEN tests/unit's files are listed
    strays = [
        path.relative_to(ROOT).as_posix()
        for path in sorted(UNIT.rglob("*.py"))
        if "__pycache__" not in path.parts and path.name not in PACKAGE_FILES and path not in mirrors
    ]
    # THEN each mirrors a source module: helpers belong in tests/support, behaviour across modules in
    # tests/integration
    assert strays == []


def test_no_test_module_imports_another() -> None:
    # GIVEN every module under tests/ WHEN its imports of tests.* are listed
    shared = ("tests.support", "tests.conftest")
    found = [
        f"{path.relative_to(ROOT).as_posix()}: {node.module}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if "__pycache__" not in path.parts
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom)
        and node.module
        and node.module.startswith("tests.")
        and not node.module.startswith(shared)
    ]
    # THEN each imports only tests/support and the fixtures' conftest: what tests share lives there
    assert found == []
