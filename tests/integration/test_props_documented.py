"""Every construct prop is documented: each field of each props model has a docstring under it.

IDEs show these attribute docstrings on hover and completion, as cdk8s-plus documents its props. They are
read from the source, so documenting props costs nothing at import.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil

import fluxplane.constructs
from fluxplane.constructs.kustomization import KustomizationProps
from fluxplane.constructs.props import Props


def props_classes() -> list[type[Props]]:
    """Every Props subclass defined in a module of fluxplane.constructs, by module, then by class name."""
    found: list[type[Props]] = []
    for module_info in sorted(pkgutil.iter_modules(fluxplane.constructs.__path__), key=lambda info: info.name):
        module = importlib.import_module(f"{fluxplane.constructs.__name__}.{module_info.name}")
        found += [
            cls
            for _, cls in inspect.getmembers(module, inspect.isclass)
            if issubclass(cls, Props) and cls.__module__ == module.__name__
        ]
    return found


def field_docstrings(cls: type) -> dict[str, str]:
    """The fields ``cls`` declares in its own body, each with the docstring under it ("" for none)."""
    body = ast.parse(inspect.getsource(cls)).body[0]
    assert isinstance(body, ast.ClassDef)
    found: dict[str, str] = {}
    for statement, following in zip(body.body, [*body.body[1:], None], strict=True):
        if not isinstance(statement, ast.AnnAssign) or not isinstance(statement.target, ast.Name):
            continue
        text = ""
        if isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant):
            text = following.value.value if isinstance(following.value.value, str) else ""
        found[statement.target.id] = text
    return found


def test_every_props_model_of_the_package_is_found() -> None:
    # GIVEN / WHEN the props models of every module of the package
    classes = props_classes()

    # THEN the search reaches the modules' own models, not only the package's re-exports
    assert KustomizationProps in classes
    assert len(classes) > 80


def test_the_docstring_reader_finds_what_it_reads() -> None:
    # the fields of a model as declared, each with the docstring under it
    docstrings = field_docstrings(KustomizationProps)
    assert set(docstrings) == set(KustomizationProps.model_fields)
    assert docstrings["interval"].endswith('Default: ``"10m"``.')


def test_every_props_field_has_a_docstring() -> None:
    # GIVEN every field every props model declares (inherited fields are checked where they are declared)
    fields = [
        (f"{cls.__module__.rsplit('.', 1)[-1]}.{cls.__qualname__}.{name}", text)
        for cls in props_classes()
        for name, text in field_docstrings(cls).items()
    ]

    # WHEN those without a docstring are collected
    missing = [path for path, text in fields if not text.strip()]

    # THEN there are none, and a failure names them all at once
    assert len(fields) > 300
    assert not missing, f"{len(missing)} props fields without a docstring:\n" + "\n".join(missing)
