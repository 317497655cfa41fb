"""Crossplane Composition (``apiextensions.crossplane.io/v1``) in Pipeline mode.

Crossplane v2 composes only through functions: a pipeline of steps, each calling a Function with
an input object. The removed resources mode (``spec.resources``, ``spec.patchSets``) is not offered.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import DNS_LABEL, LocalObjectReference, Name, Props


class TypeReference(Props):
    api_version: str
    kind: str


class PipelineStep(Props):
    step: str = Field(pattern=DNS_LABEL)
    function_ref: LocalObjectReference
    input: dict[str, Any] | None = None


class CompositionProps(Props):
    name: Name
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    composite_type_ref: TypeReference
    mode: Literal["Pipeline"] = "Pipeline"
    pipeline: tuple[PipelineStep, ...] = Field(min_length=1)

    @field_validator("pipeline")
    @classmethod
    def _unique_steps(cls, value: tuple[PipelineStep, ...]) -> tuple[PipelineStep, ...]:
        names = [step.step for step in value]
        if len(set(names)) != len(names):
            raise ValueError(f"pipeline step names must be unique, got {names}")
        return value


class Composition(TypedResource[CompositionProps]):
    api_version = "apiextensions.crossplane.io/v1"
    kind = "Composition"
    namespaced = False
    props_class = CompositionProps

    @property
    def functions(self) -> tuple[str, ...]:
        """Names of the Functions the pipeline calls, in step order."""
        return tuple(step.function_ref.name for step in self.props.pipeline)
