"""scripts/architecture.py: the figures of the code's shape, read from a checkout's sources."""

from __future__ import annotations

from pathlib import Path

import pytest
from scripts.architecture import main, measure

BASE = """
class PropsConstruct:
    def __init__(self, scope, construct_id, props):
        pass


class Thing(PropsConstruct[int]):
    pass


class Plain:
    def __init__(self, scope, construct_id):
        pass
"""

CHART = """
from fluxplane.constructs.base import Thing, ThingProps, Plain
from fluxplane.walk import made

class Placed:
    pass

def build(scope, given):
    Thing(scope, "dict", {"a": 1})
    Thing(scope, "model", ThingProps(a=1))
    model = ThingProps(a=2)
    Thing(scope, "bound", model)
    Thing(scope, "keyword", props=given)
    Thing(scope, "made", made())
    Plain(scope, "plain")
    return "AppTable"
"""

WALK = """
\"\"\"Walks, of AppTable objects among others.\"\"\"


class Placed:
    pass


NAME = "AppTable"


def made() -> ThingProps:
    pass
"""


def _checkout(root: Path) -> Path:
    files = {
        "src/fluxplane/__init__.py": "",
        "src/fluxplane/constructs/__init__.py": "",
        "src/fluxplane/constructs/base.py": BASE,
        "src/fluxplane/charts/__init__.py": "",
        "src/fluxplane/charts/app.py": CHART,
        "src/fluxplane/walk.py": WALK,
        "src/fluxplane/words.py": '"""Only a docstring names AppTable."""\n# and a comment: AppTable\n',
        "tests/unit/charts/test_app.py": "from tests.support.trees import tree\n",
        "tests/unit/test_other.py": "from tests.unit.charts.test_app import tree\n",
        "pyproject.toml": '[[tool.importlinter.contracts]]\ntype = "layers"\nlayers = ["fluxplane.charts", "a | b"]\n'
        '[[tool.importlinter.contracts]]\ntype = "layers"\ncontainers = ["fluxplane.a"]\nlayers = ["x", "y", "z"]\n',
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def test_the_figures_are_read_from_the_sources(tmp_path: Path) -> None:
    figures = measure(_checkout(tmp_path), ("AppTable",))
    # a concept named in a module of a package and in two top-level modules, in the code of two of them
    assert figures.concepts == {"AppTable": {"modules": 3, "packages": 2, "in_code": 2, "code_packages": 2}}
    # a dictionary and a value of the caller's are not props models; a model, a name bound to one and a call of a
    # function annotated to return one are
    assert figures.dict_call_sites == 2
    # four modules (the packages' __init__ are not), one with its mirrored test
    assert figures.modules == 4
    assert figures.unmirrored == ["constructs/base.py", "walk.py", "words.py"]
    # the contract's layers, and apart from them those of a contract inside one package
    assert (figures.layers, figures.inner_layers) == (2, 3)
    assert figures.repeated_classes == {"Placed": 2}
    # a test module importing another; tests.support is where shared code goes
    assert figures.test_imports == 1


def test_the_figures_print_as_lines_or_one_json_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _checkout(tmp_path)
    assert main([str(root)]) == 0
    assert main([str(root), "--json"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "AppTable: named in 3 modules in 2 packages; in the code of 2 modules in 2 packages"
    assert "layers of the import contract: 2 (and 3 inside one package)" in out
    assert out[-1].startswith("{") and '"dict_call_sites": 2' in out[-1]
