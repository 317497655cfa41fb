"""Figures of the code's shape, to compare before and after a change of its layout.

For a checkout (default: this one), from its sources alone:

* per concept (a kind such as ``AppTable`` or ``EKSCluster``): the modules of ``src/fluxplane`` naming it, and the
  packages they lie in; and the modules whose code (not their docstrings or comments) names it, in a name or a
  string;
* constructs built from dictionaries: calls of a construct class (a class of ``fluxplane.constructs`` taking
  ``props``) whose props are not a props model (a call of a ``...Props`` class or of a function of the package
  annotated to return one, or a name the module binds to either), which the type checker cannot check against the
  props' fields;
* source modules without a mirrored unit test (``tests/unit/<package>/test_<module>.py``);
* the layers of the import contract (``[tool.importlinter]`` in pyproject.toml), and those of the contracts inside
  one package;
* class names defined in more than one module;
* test modules importing another test module (shared code belongs in ``tests/support``).

Run: ``.venv/bin/python scripts/architecture.py [ROOT] [--json]``.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

#: The concepts counted by default: one kind an app uses, and the kind a workload cluster is.
CONCEPTS = ("AppTable", "EKSCluster")
#: Modules that run a package or a module rather than hold code of their own.
_ENTRY_POINTS = ("__init__.py", "__main__.py")


@dataclass
class Figures:
    """The figures of one checkout (module docstring)."""

    concepts: dict[str, dict[str, int]] = field(default_factory=dict)
    dict_call_sites: int = 0
    modules: int = 0
    unmirrored: list[str] = field(default_factory=list)
    layers: int = 0
    inner_layers: int = 0
    repeated_classes: dict[str, int] = field(default_factory=dict)
    test_imports: int = 0


def _modules(package: Path) -> Iterator[Path]:
    yield from sorted(path for path in package.rglob("*.py") if "__pycache__" not in path.parts)


def _package_of(relative: Path) -> str:
    return relative.parts[0] if len(relative.parts) > 1 else "."


def _construct_classes(constructs: Path) -> dict[str, int]:
    """The classes of the constructs package whose ``__init__`` (their own or one they inherit there) takes
    ``props``, with the position of ``props`` among the arguments a call passes (``self`` left out)."""
    bases: dict[str, list[str]] = {}
    own: dict[str, int | None] = {}
    for path in _modules(constructs):
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.ClassDef):
                continue
            bases[node.name] = [
                base.value.id
                if isinstance(base, ast.Subscript) and isinstance(base.value, ast.Name)
                else base.id
                if isinstance(base, ast.Name)
                else ""
                for base in node.bases
            ]
            own[node.name] = None
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    names = [arg.arg for arg in item.args.args][1:]
                    own[node.name] = names.index("props") if "props" in names else -1

    def position(name: str) -> int | None:
        found = own.get(name)
        if found is not None:
            return found if found >= 0 else None
        for base in bases.get(name, []):
            inherited = position(base)
            if inherited is not None:
                return inherited
        return None

    return {name: found for name in own if (found := position(name)) is not None}


def _props_makers(package: Path) -> frozenset[str]:
    """The functions of ``package`` annotated to return a props model (``-> ThingProps``), by name."""
    return frozenset(
        node.name
        for path in _modules(package)
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and _names_props(node.returns)
    )


def _names_props(annotation: ast.expr | None) -> bool:
    if isinstance(annotation, ast.Name):
        return annotation.id.endswith("Props")
    if isinstance(annotation, ast.Attribute):
        return annotation.attr.endswith("Props")
    return False


def _is_model(value: ast.expr, makers: frozenset[str] = frozenset()) -> bool:
    called = _called(value) if isinstance(value, ast.Call) else None
    return called is not None and (called.endswith("Props") or called in makers)


def _untyped_props(module: ast.AST, constructs: dict[str, int], makers: frozenset[str] = frozenset()) -> int:
    """The calls of ``constructs`` in ``module`` whose props are not a props model (module docstring; a name counts
    as one when the module binds it to one anywhere; ``makers``: the functions that return one)."""
    models = {
        target.id
        for node in ast.walk(module)
        if isinstance(node, ast.Assign) and _is_model(node.value, makers)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    count = 0
    for node in ast.walk(module):
        if not isinstance(node, ast.Call) or _called(node) not in constructs:
            continue
        position = constructs[_called(node) or ""]
        chosen = [keyword.value for keyword in node.keywords if keyword.arg == "props"]
        props = chosen[0] if chosen else node.args[position] if len(node.args) > position else None
        if props is None or _is_model(props, makers) or (isinstance(props, ast.Name) and props.id in models):
            continue
        count += 1
    return count


def _in_code(module: ast.AST, word: re.Pattern[str]) -> bool:
    """Whether ``module``'s code names ``word``: a name, an attribute, a definition, an import or a string that is
    not a docstring."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(module)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(module):
        if isinstance(node, ast.Name):
            found = node.id
        elif isinstance(node, ast.Attribute):
            found = node.attr
        elif isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            found = node.name
        elif isinstance(node, ast.alias):
            found = node.asname or node.name
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found = node.value
        else:
            continue
        if word.search(found):
            return True
    return False


def _called(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def measure(root: Path, concepts: tuple[str, ...] = CONCEPTS) -> Figures:
    """The figures of the checkout at ``root``."""
    package = root / "src" / "fluxplane"
    figures = Figures()
    sources = {path: path.read_text() for path in _modules(package)}
    for concept in concepts:
        word = re.compile(rf"\b{re.escape(concept)}\b")
        naming = [path.relative_to(package) for path, text in sources.items() if word.search(text)]
        coding = [path.relative_to(package) for path, text in sources.items() if _in_code(ast.parse(text), word)]
        figures.concepts[concept] = {
            "modules": len(naming),
            "packages": len({_package_of(path) for path in naming}),
            "in_code": len(coding),
            "code_packages": len({_package_of(path) for path in coding}),
        }
    constructs = _construct_classes(package / "constructs")
    makers = _props_makers(package)
    defined: dict[str, set[str]] = {}
    for path, text in sources.items():
        relative = path.relative_to(package)
        tree = ast.parse(text)
        figures.dict_call_sites += _untyped_props(tree, constructs, makers)
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                defined.setdefault(node.name, set()).add(relative.as_posix())
        if path.name in _ENTRY_POINTS:
            continue
        figures.modules += 1
        mirrored = root / "tests" / "unit" / relative.parent / f"test_{relative.stem}.py"
        folder = root / "tests" / "unit" / relative.parent / relative.stem
        if not mirrored.is_file() and not folder.is_dir():
            figures.unmirrored.append(relative.as_posix())
    figures.repeated_classes = {name: len(where) for name, where in sorted(defined.items()) if len(where) > 1}
    settings = tomllib.loads((root / "pyproject.toml").read_text())
    contracts = settings.get("tool", {}).get("importlinter", {}).get("contracts", [])
    layered = [contract for contract in contracts if contract.get("type") == "layers"]
    figures.layers = sum(len(contract.get("layers", [])) for contract in layered if not contract.get("containers"))
    figures.inner_layers = sum(len(contract.get("layers", [])) for contract in layered if contract.get("containers"))
    for path in sorted((root / "tests").rglob("test_*.py")):
        for found in ast.walk(ast.parse(path.read_text())):
            module = found.module if isinstance(found, ast.ImportFrom) else None
            if module and module.startswith("tests.") and not module.startswith(("tests.support", "tests.conftest")):
                figures.test_imports += 1
    return figures


def text(figures: Figures) -> str:
    lines = [
        f"{concept}: named in {counts['modules']} modules in {counts['packages']} packages; in the code of "
        f"{counts['in_code']} modules in {counts['code_packages']} packages"
        for concept, counts in figures.concepts.items()
    ]
    repeated = ", ".join(f"{name} x{count}" for name, count in figures.repeated_classes.items())
    lines += [
        f"construct calls passing a dictionary: {figures.dict_call_sites}",
        f"source modules: {figures.modules}, without a mirrored unit test: {len(figures.unmirrored)}",
        f"layers of the import contract: {figures.layers} (and {figures.inner_layers} inside one package)",
        f"class names defined in more than one module: {len(figures.repeated_classes)} ({repeated or 'none'})",
        f"test modules importing another test module: {figures.test_imports}",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("root", nargs="?", default=str(Path(__file__).resolve().parents[1]), help="the checkout")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    args = parser.parse_args(argv)
    figures = measure(Path(args.root))
    sys.stdout.write(json.dumps(asdict(figures), sort_keys=True) + "\n" if args.json else text(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
