"""Tests for fluxplane.sdk: the one module pack authors import."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil

import fluxplane.constructs
import fluxplane.kinds
import fluxplane.sdk
from fluxplane.constructs import patch_and_transform
from fluxplane.constructs.base import Construct
from fluxplane.constructs.helm_repository import Chart
from fluxplane.constructs.props import Props
from fluxplane.packs.api import APP_RESOURCES, AWS_PROVIDERS, Pack, PackConfig, PackContext
from fluxplane.packs.versions import Chart as PinnedChart
from tests.conftest import ROOT

#: The constructs and props models a pack does not build, and why: every other one of fluxplane.constructs and
#: fluxplane.kinds is in the SDK. A module's name stands for all of its classes.
NOT_FOR_PACKS = {
    "Construct": "the tree's base: a pack adds fluxplane's constructs under ctx.scope, a RawObject for other kinds",
    "Root": "a tree of its own, for rendering outside synth; fluxplane.testing's bind_pack binds a pack",
    "TypedResource": "the base of fluxplane's typed constructs; a kind fluxplane has no construct for is a RawObject",
    "Props": "the base of the props models; a pack's own settings are a PackConfig",
    "fluxplane.constructs.kustomize": "each folder's kustomization.yaml of dist/, which synth writes around a pack",
    "fluxplane.kinds": "fluxplane's own kinds, which synth makes from the definition (clusters, apps) and a pack's "
    "PodIdentity",
}

EXAMPLE = ROOT / "examples" / "fluxplane-pack-reloader" / "src" / "fluxplane_pack_reloader" / "__init__.py"


def test_every_exported_name_is_there_and_sorted() -> None:
    # GIVEN the SDK's __all__ WHEN each name is looked up THEN it exists, and the list is kept sorted
    assert [name for name in fluxplane.sdk.__all__ if not hasattr(fluxplane.sdk, name)] == []
    assert fluxplane.sdk.__all__ == sorted(fluxplane.sdk.__all__, key=lambda name: (not name.isupper(), name))


def test_the_sdk_hands_out_fluxplanes_own_objects() -> None:
    # GIVEN the SDK WHEN its names are compared with where fluxplane keeps them THEN they are the same objects,
    # so a pack written against the SDK is a pack the registry and synth accept
    assert (fluxplane.sdk.Pack, fluxplane.sdk.PackConfig, fluxplane.sdk.PackContext) == (Pack, PackConfig, PackContext)
    assert fluxplane.sdk.Chart is Chart is PinnedChart
    assert fluxplane.sdk.patch_and_transform is patch_and_transform


def test_the_example_pack_imports_nothing_of_fluxplane_but_the_sdk() -> None:
    # GIVEN the third-party example pack WHEN its imports are read THEN every fluxplane one is fluxplane.sdk
    tree = ast.parse(EXAMPLE.read_text())
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert {module for module in modules if module.startswith("fluxplane")} == {"fluxplane.sdk"}


def test_a_pack_can_declare_what_it_provides_from_the_sdk_alone() -> None:
    # GIVEN the SDK WHEN a pack of another distribution names a feature it stands in for
    # THEN the names are fluxplane's, and every feature fluxplane has is among them
    assert (fluxplane.sdk.APP_RESOURCES, fluxplane.sdk.AWS_PROVIDERS) == (APP_RESOURCES, AWS_PROVIDERS)
    assert set(fluxplane.sdk.PROVIDES) == {APP_RESOURCES, AWS_PROVIDERS}


def _constructs_and_props() -> dict[str, type]:
    """Every public construct and props model of fluxplane.constructs and fluxplane.kinds, by name."""
    found: dict[str, type] = {}
    for package in (fluxplane.constructs, fluxplane.kinds):
        for info in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
            for name, value in vars(importlib.import_module(info.name)).items():
                if inspect.isclass(value) and value.__module__ == info.name and issubclass(value, Construct | Props):
                    found[name] = value
    return {name: value for name, value in found.items() if not name.startswith("_")}


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")


def _exempt(name: str, value: type) -> bool:
    return name in NOT_FOR_PACKS or any(_in(value.__module__, key) for key in NOT_FOR_PACKS)


def test_every_construct_and_props_model_is_in_the_sdk_unless_it_says_why_not() -> None:
    # GIVEN every construct and props model fluxplane defines WHEN each is looked up in the SDK
    found = _constructs_and_props()
    # THEN it is there, the same object, unless NOT_FOR_PACKS says why not: a pack builds any construct with
    # typed props, and the models its fields take, from fluxplane.sdk alone
    wanted = {name: value for name, value in found.items() if not _exempt(name, value)}
    assert sorted(name for name in wanted if name not in fluxplane.sdk.__all__) == []
    assert [name for name, value in wanted.items() if getattr(fluxplane.sdk, name) is not value] == []
    # AND each exemption names a class or a package that is there, and nothing the SDK exports
    modules = {value.__module__ for value in found.values()}
    assert [key for key in NOT_FOR_PACKS if key not in found and not any(_in(module, key) for module in modules)] == []
    assert [name for name in fluxplane.sdk.__all__ if name in found and _exempt(name, found[name])] == []
