"""No function imports late to get round an import cycle: every import inside a function is listed here, with why.

The rule (docs "Architecture", CONTRIBUTING "Layers"): a function imports late to keep the JavaScript runtime
(cdk8s, jsii) from loading before a command needs it; the command modules and fluxplane.testing also leave to
the moment of use what the CLI's start and pytest's plugin would pay for in vain, and fluxplane.synth what only
building needs (the charts, the render), which the commands that only load the definition would. A cycle is
broken by moving the shared code down, never by importing late. A new late import fails this test until
LATE_IMPORTS says why.
"""

from __future__ import annotations

import ast
from pathlib import Path

import fluxplane

#: The source tree this test reads: the package itself.
PACKAGE = Path(fluxplane.__file__).parent

#: What the pack registry and the constructs load: they must not start the JavaScript runtime.
_CDK8S = "loads cdk8s (the JavaScript runtime)"
#: The command imports this module when it parses its arguments.
_CLI = "`import fluxplane.cli` stays quick for the other commands and --help"
#: The charts and the render: only building a tree needs them.
_BUILD = (
    "the charts and the render take a tenth of a second to import, which fluxplane.synth must not pay for the "
    "commands that only load the definition (load_plan, the packs and edit commands)"
)
#: pytest imports the plugin, and fluxplane.testing with it, in every session where fluxplane is installed.
_PLUGIN = "pytest imports fluxplane.testing in every session where fluxplane is installed, fixtures used or not"

#: (the module, the module it imports inside a function): why that import is late.
LATE_IMPORTS: dict[tuple[str, str], str] = {
    ("fluxplane", "importlib"): (
        "importlib.metadata (email, zipfile, csv) is read only when __version__ is asked for: `import fluxplane`, "
        "which the command and pytest's plugin do first, stays quick"
    ),
    ("fluxplane.commands.aws_setup", "fluxplane.synth.aws_setup"): f"it plans the fleet with the packs; {_CLI}",
    ("fluxplane.charts.base", "cdk8s"): (
        f"it {_CDK8S}: only a chart under a construct of cdk8s's (the library's FleetApp) asks for it, once cdk8s "
        "is loaded; synth's charts are plain Python"
    ),
    ("fluxplane.commands", "fluxplane.config.cdk8s_charts"): f"fluxplane.config loads the definition's models; {_CLI}",
    ("fluxplane.commands.diff", "fluxplane.review.diff"): f"diff synthesizes, which is heavy; {_CLI}",
    ("fluxplane.commands.diff", "fluxplane.review.diff.report"): f"imported with fluxplane.review.diff; {_CLI}",
    ("fluxplane.commands.diff", "fluxplane.review.plan"): (
        f"the Markdown report ends with the plan, which synthesizes; {_CLI}"
    ),
    ("fluxplane.commands.diff", "fluxplane.review.plan.report"): f"imported with fluxplane.review.plan; {_CLI}",
    ("fluxplane.commands.plan", "fluxplane.review.plan"): f"plan synthesizes, which is heavy; {_CLI}",
    ("fluxplane.commands.plan", "fluxplane.review.plan.report"): f"imported with fluxplane.review.plan; {_CLI}",
    ("fluxplane.commands.graph", "fluxplane.synth"): f"synth is heavy; {_CLI}",
    ("fluxplane.commands.graph", "fluxplane.synth.graph"): f"imported with fluxplane.synth; {_CLI}",
    ("fluxplane.commands.graph", "fluxplane.core.layout"): f"the layout loads the definition's models; {_CLI}",
    ("fluxplane.commands.graph", "fluxplane.core.tree"): f"the tree walk is imported with the layout; {_CLI}",
    ("fluxplane.commands.edit", "fluxplane.commands.edits"): f"the edits load the definition's models; {_CLI}",
    ("fluxplane.commands.packs", "fluxplane.packs.describe"): f"the pack API loads the constructs' models; {_CLI}",
    ("fluxplane.commands.reference", "fluxplane.config.reference"): (
        f"the reference is drawn from the definition's models; {_CLI}"
    ),
    ("fluxplane.commands.synth", "fluxplane.config.awsdata"): f"the AWS facts load the definition's models; {_CLI}",
    ("fluxplane.commands.packs", "fluxplane.synth"): f"synth is heavy; {_CLI}",
    ("fluxplane.commands.site", "fluxplane.review.site"): (
        f"the pages load the definition, and --base synthesizes; {_CLI}"
    ),
    ("fluxplane.commands.synth", "fluxplane.synth"): f"synth is heavy; {_CLI}",
    ("fluxplane.commands.seal", "fluxplane.sealing.kubeseal"): f"sealing loads cryptography; {_CLI}",
    ("fluxplane.commands.seal", "fluxplane.sealing.project"): f"imported with fluxplane.sealing.kubeseal; {_CLI}",
    ("fluxplane.commands.sealing_key", "fluxplane.sealing.project"): f"making the key loads cryptography; {_CLI}",
    ("fluxplane.commands.scaffold.pin", "urllib.request"): (
        f"urllib.request loads http.client and ssl, and only a file URL needs it; {_CLI}"
    ),
    ("fluxplane.commands.validate", "fluxplane.validate"): f"the schema checker is heavy; {_CLI}",
    ("fluxplane.commands.validate", "fluxplane.validate.pull"): f"imported with fluxplane.validate; {_CLI}",
    ("fluxplane.commands.versions", "fluxplane.review.versions"): f"versions synthesizes, which is heavy; {_CLI}",
    ("fluxplane.constructs.base", "fluxplane.constructs.cdk8s_bridge"): (
        f"the bridge {_CDK8S}, which importing the constructs must not (the pack registry, the CLI); it is "
        "imported only for a jsii scope, when cdk8s is loaded already, and imports nothing of base"
    ),
    ("fluxplane.commands.edits", "fluxplane.synth"): f"the edit command imports its edits; {_CLI}",
    ("fluxplane.commands.edits", "fluxplane.synth.plan"): f"imported with fluxplane.synth; {_CLI}",
    ("fluxplane.synth.publish", "fluxplane.charts.cluster"): _BUILD,
    ("fluxplane.synth.guard", "fluxplane.synth.cloud"): (
        "it imports the composition renderer (fluxplane.validate), which takes most of a second: a write that "
        "changes no composite and no definition pays nothing for the composed stage"
    ),
    ("fluxplane.synth.guard", "fluxplane.synth.composed"): "imported with fluxplane.synth.cloud, for the same reason",
    ("fluxplane.synth.pipeline", "fluxplane.synth.tree"): _BUILD,
    ("fluxplane.synth.pipeline", "fluxplane.synth.render"): _BUILD,
    ("fluxplane.synth.cache", "fluxplane.charts.addon_identities"): _BUILD,
    ("fluxplane.synth.cache", "fluxplane.synth.tree"): _BUILD,
    ("fluxplane.synth.cache", "fluxplane.synth.render"): _BUILD,
    ("fluxplane.synth.cdk8s_charts", "cdk8s"): (
        "the JavaScript runtime starts only for a definition that uses cdk8s charts, once it is known valid"
    ),
    ("fluxplane.testing", "fluxplane.synth"): f"synth is heavy; {_PLUGIN}",
    ("fluxplane.testing", "fluxplane.config.cdk8s_charts"): (
        f"fluxplane.config loads the definition's models; {_PLUGIN}"
    ),
    ("fluxplane.testing", "fluxplane.synth.writer"): f"synth is heavy; {_PLUGIN}",
    ("fluxplane.testing", "fluxplane.testing.packs"): (
        f"binding a pack needs the pack API, the constructs and the config models; {_PLUGIN}"
    ),
    ("fluxplane.testing", "fluxplane.testing.summary"): f"the tree walk reads every cluster's objects; {_PLUGIN}",
    ("fluxplane.testing", "fluxplane.validate"): f"the schema checker is heavy; {_PLUGIN}",
    ("fluxplane.testing", "fluxplane.validate.references"): f"the schema checker is heavy; {_PLUGIN}",
    ("fluxplane.testing", "fluxplane.validate.tree"): f"the schema checker is heavy; {_PLUGIN}",
    ("fluxplane.testing.pytest_plugin", "fluxplane.testing.snapshot"): (
        "it imports syrupy, a fleet repository's test dependency and not fluxplane's: only a test that takes "
        "yaml_snapshot needs it"
    ),
    ("fluxplane.testing.pytest_plugin", "fluxplane.validate.schemas"): f"the schema checker is heavy; {_PLUGIN}",
    ("fluxplane.validate.schemas", "kubernetes_validate.utils"): (
        "kubernetes-validate takes a tenth of a second to import, paid only when core kinds are checked"
    ),
}


def module_name(package: Path, path: Path) -> str:
    """The dotted name of the module at ``path`` in ``package`` (a package's own name for its __init__.py)."""
    parts = [package.name, *path.relative_to(package).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module ``node`` imports from, ``from .x import y`` made absolute against ``module``."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base[: len(base) - node.level + (1 if is_package else 0)]
    return ".".join([*base, node.module] if node.module else base)


def late_imports(package: Path) -> set[tuple[str, str]]:
    """(module, imported module) for every import inside a function of ``package``'s modules.

    ``from a import b`` imports the module a.b when the package has one, else a; a function nested in a
    class or another function counts too.
    """
    paths = sorted(package.rglob("*.py"))
    modules = {module_name(package, path) for path in paths}
    found: set[tuple[str, str]] = set()
    for path in paths:
        module = module_name(package, path)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
        for function in functions:
            for node in ast.walk(function):
                if isinstance(node, ast.Import):
                    found.update((module, alias.name) for alias in node.names)
                elif isinstance(node, ast.ImportFrom):
                    source = _absolute(module, path.name == "__init__.py", node)
                    found.update(
                        (module, f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source)
                        for alias in node.names
                    )
    return found


def test_every_import_inside_a_function_has_its_reason() -> None:
    # GIVEN fluxplane's source WHEN its imports inside functions are collected
    found = late_imports(PACKAGE)
    # THEN each is listed with its reason: a new one (a cycle got round, say) is named here until it is
    assert sorted(found - LATE_IMPORTS.keys()) == []


def test_every_listed_late_import_is_still_made() -> None:
    # GIVEN fluxplane's source WHEN its imports inside functions are collected
    found = late_imports(PACKAGE)
    # THEN the list holds no import that moved to module level or went away
    assert sorted(LATE_IMPORTS.keys() - found) == []


def test_the_walk_finds_imports_in_functions_only(tmp_path: Path) -> None:
    # GIVEN a package whose modules import at module level, under TYPE_CHECKING and in a class body, and
    # inside a function, a method, a nested function and a coroutine, absolutely and relatively
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text(
        "import os\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n"
        "def load():\n    from pkg import sub\n    from . import a\n"
    )
    (package / "a.py").write_text(
        "class A:\n    import re\n    def method(self):\n        import json, pkg.sub as s\n"
        "async def run():\n    from .sub.b import thing\n"
    )
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "b.py").write_text(
        "thing = 1\ndef outer():\n    def inner():\n        from .. import a\n        from ..sub import b\n"
    )
    # WHEN the late imports are collected
    found = late_imports(package)
    # THEN those inside functions are found, each as the module it loads, and nothing else
    assert sorted(found) == [
        ("pkg", "pkg.a"),
        ("pkg", "pkg.sub"),
        ("pkg.a", "json"),
        ("pkg.a", "pkg.sub"),
        ("pkg.a", "pkg.sub.b"),
        ("pkg.sub.b", "pkg.a"),
        ("pkg.sub.b", "pkg.sub.b"),
    ]
