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
    """The composite resource type a Composition composes."""

    api_version: str
    """API version of the composite resource type (the XRD's group and referenceable version)."""
    kind: str
    """Kind of the composite resource type."""


class PipelineStep(Props):
    """A ``pipeline`` entry: one step, calling a composition function."""

    step: str = Field(pattern=DNS_LABEL)
    """Name of the step, unique within the pipeline."""
    function_ref: LocalObjectReference
    """The Function (package) the step calls, by name."""
    input: dict[str, Any] | None = None
    """Input passed to the function: a Kubernetes-style object with ``apiVersion`` and ``kind``. Default: not set (no
    input)."""


class CompositionProps(Props):
    """Props of a Composition in Pipeline mode."""

    name: Name
    """``metadata.name`` of the Composition (cluster-scoped)."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    annotations: dict[str, str] | None = None
    """``metadata.annotations``. Default: none."""
    composite_type_ref: TypeReference
    """The composite resource type the Composition composes."""
    mode: Literal["Pipeline"] = "Pipeline"
    """Composition mode; ``Pipeline`` (a pipeline of functions) is the only mode Crossplane v2 has. Default:
    ``"Pipeline"``."""
    pipeline: tuple[PipelineStep, ...] = Field(min_length=1)
    """The function steps Crossplane runs, in order, each time it composes a composite resource."""

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
