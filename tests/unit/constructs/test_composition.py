"""Crossplane Composition (apiextensions.crossplane.io/v1), Pipeline mode only."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.constructs import Manifest, Root
from fluxplane.constructs.composition import Composition
from fluxplane.errors import ConstructError

COMPOSE: dict[str, Any] = {
    "step": "compose",
    "functionRef": {"name": "function-patch-and-transform"},
    "input": {"apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources", "resources": []},
}
READY: dict[str, Any] = {"step": "detect-readiness", "functionRef": {"name": "function-auto-ready"}}


def _props(**changes: Any) -> dict[str, Any]:
    return {
        "name": "widgets",
        "compositeTypeRef": {"apiVersion": "example.org/v1alpha1", "kind": "Widget"},
        "pipeline": [COMPOSE, READY],
        **changes,
    }


def _composition(props: dict[str, Any]) -> Composition:
    return Composition(Manifest(Root(), "m", path="x.yaml"), "composition", props)


def test_a_two_step_pipeline() -> None:
    # GIVEN / WHEN a Composition with a compose and a readiness step
    composition = _composition(_props(labels={"size": "small"}))

    # THEN it renders cluster-scoped in Pipeline mode, steps in order, and names the Functions it calls
    assert composition.to_dict() == {
        "apiVersion": "apiextensions.crossplane.io/v1",
        "kind": "Composition",
        "metadata": {"name": "widgets", "labels": {"size": "small"}},
        "spec": {
            "compositeTypeRef": {"apiVersion": "example.org/v1alpha1", "kind": "Widget"},
            "mode": "Pipeline",
            "pipeline": [COMPOSE, READY],
        },
    }
    assert composition.functions == ("function-patch-and-transform", "function-auto-ready")


def test_a_pipeline_is_not_empty() -> None:
    with pytest.raises(
        ConstructError,
        match=r"^root/m/composition: CompositionProps\.pipeline: tuple should have at least 1 item after validation, "
        r"not 0$",
    ):
        _composition(_props(pipeline=[]))


def test_step_names_are_unique() -> None:
    with pytest.raises(
        ConstructError,
        match=r"^root/m/composition: CompositionProps\.pipeline: pipeline step names must be unique, "
        r"got \['compose', 'detect-readiness', 'compose'\]$",
    ):
        _composition(_props(pipeline=[COMPOSE, READY, COMPOSE]))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"mode": "Resources"}, r"mode: input should be 'Pipeline'"),
        ({"pipeline": [{**READY, "step": "Detect Readiness"}]}, r"pipeline\.0\.step: string should match pattern"),
        ({"pipeline": [{"step": "compose"}]}, r"pipeline\.0\.functionRef: field required"),
        ({"compositeTypeRef": {"kind": "Widget"}}, r"compositeTypeRef\.apiVersion: field required"),
        ({"namespace": "crossplane-system"}, r"namespace: extra inputs are not permitted"),
    ],
)
def test_malformed_compositions_are_refused(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ConstructError, match=rf"^root/m/composition: CompositionProps\.{message}"):
        _composition(_props(**changes))
