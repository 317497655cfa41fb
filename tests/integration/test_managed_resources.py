"""The hub activates every managed resource its compositions build, by the names Crossplane gives them."""

from __future__ import annotations

import fnmatch
from typing import Any

import pytest
import yaml

from fluxplane.core.codec import parse_documents
from fluxplane.synth import load_plan, render_plan
from tests.conftest import CRDS, ROOT


def _documents() -> list[dict[str, Any]]:
    """Every object synth renders for the example fleet."""
    files = render_plan(load_plan(ROOT))
    return [doc for path, text in files.items() if path.endswith(".yaml") for doc in parse_documents(text)]


def _composed(documents: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """(group, kind) of every resource the Compositions of ``documents`` compose."""
    found = set()
    for document in documents:
        if document.get("kind") != "Composition":
            continue
        for step in document["spec"]["pipeline"]:
            for resource in (step.get("input") or {}).get("resources") or []:
                base = resource["base"]
                found.add((base["apiVersion"].split("/")[0], base["kind"]))
    return found


def _plurals(group: str) -> dict[str, str]:
    """kind -> plural of the CRDs of ``group`` in the schema corpus."""
    found = {}
    for path in sorted((CRDS / group).glob("*.yaml")):
        names = yaml.safe_load(path.read_text())["spec"]["names"]
        found[names["kind"]] = names["plural"]
    return found


@pytest.mark.skipif(not CRDS.is_dir(), reason=f"{CRDS} is missing: the CRD names of the composed kinds come from it")
def test_every_composed_managed_resource_of_the_example_is_activated() -> None:
    documents = _documents()
    (policy,) = [doc for doc in documents if doc.get("kind") == "ManagedResourceActivationPolicy"]
    patterns = policy["spec"]["activate"]
    composed = {(group, kind) for group, kind in _composed(documents) if group.endswith(".aws.m.upbound.io")}
    assert len(composed) > 20
    for group, kind in sorted(composed):
        name = f"{_plurals(group)[kind]}.{group}"
        assert any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns), name
    # AND nothing else of the family: what the compositions never build stays inactive
    assert not any(pattern.startswith("*") and "aws" in pattern for pattern in patterns)


def test_the_schemas_pull_fetches_every_activated_managed_resource() -> None:
    from fluxplane.validate.upstream import URLS

    documents = _documents()
    (policy,) = [doc for doc in documents if doc.get("kind") == "ManagedResourceActivationPolicy"]
    for name in policy["spec"]["activate"]:
        if name.startswith("*"):
            continue
        plural, group = name.split(".", 1)
        assert any(url.endswith(f"/{group}_{plural}.yaml") for url in URLS), name
