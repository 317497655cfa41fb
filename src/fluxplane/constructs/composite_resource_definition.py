"""Crossplane CompositeResourceDefinition (``apiextensions.crossplane.io/v2``): a new composite API.

Crossplane v2 XRDs default to namespaced composite resources and have no claims: the composite
resource itself is what users create, in a namespace, next to the managed resources it composes.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import DNS_LABEL, Name, Props


class CompositeResourceNames(Props):
    kind: str = Field(pattern=r"^[A-Z][A-Za-z0-9]*$")
    plural: str = Field(pattern=DNS_LABEL)
    singular: str | None = Field(None, pattern=DNS_LABEL)
    list_kind: str | None = None
    short_names: tuple[str, ...] | None = None
    categories: tuple[str, ...] | None = None


class PrinterColumn(Props):
    name: str
    type: Literal["string", "integer", "number", "boolean", "date"]
    json_path: str = Field(alias="jsonPath")
    description: str | None = None
    priority: int | None = None


class CompositeResourceValidation(Props):
    open_api_v3_schema: dict[str, Any] = Field(alias="openAPIV3Schema")


class CompositeResourceDefinitionVersion(Props):
    name: str = Field(pattern=r"^v[0-9]+((alpha|beta)[0-9]+)?$")
    served: bool = True
    referenceable: bool = True
    deprecated: bool | None = None
    additional_printer_columns: tuple[PrinterColumn, ...] | None = None
    schema_: CompositeResourceValidation = Field(alias="schema")


class CompositionReference(Props):
    name: Name


class CompositeResourceDefinitionProps(Props):
    name: Name
    labels: dict[str, str] | None = None
    group: Name
    names: CompositeResourceNames
    scope: Literal["Namespaced", "Cluster"] = "Namespaced"
    default_composition_ref: CompositionReference | None = None
    versions: tuple[CompositeResourceDefinitionVersion, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _named_by_plural_and_group(self) -> CompositeResourceDefinitionProps:
        expected = f"{self.names.plural}.{self.group}"
        if self.name != expected:
            raise ValueError(f"an XRD must be named <plural>.<group>, {expected!r}, got {self.name!r}")
        if sum(version.referenceable for version in self.versions) != 1:
            raise ValueError("exactly one version must be referenceable")
        return self


class CompositeResourceDefinition(TypedResource[CompositeResourceDefinitionProps]):
    api_version = "apiextensions.crossplane.io/v2"
    kind = "CompositeResourceDefinition"
    namespaced = False
    props_class = CompositeResourceDefinitionProps

    @property
    def composite_api_version(self) -> str:
        """apiVersion of the composite resources this XRD defines (its referenceable version)."""
        version = next(version for version in self.props.versions if version.referenceable)
        return f"{self.props.group}/{version.name}"

    @property
    def composite_kind(self) -> str:
        return self.props.names.kind
