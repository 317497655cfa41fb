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
    """The names of the composite resource kind an XRD defines."""

    kind: str = Field(pattern=r"^[A-Z][A-Za-z0-9]*$")
    """Kind of the composite resource, CamelCase and singular."""
    plural: str = Field(pattern=DNS_LABEL)
    """Plural resource name, lower-case; the XRD's name is ``<plural>.<group>``."""
    singular: str | None = Field(None, pattern=DNS_LABEL)
    """Singular resource name, lower-case. Default: not set (the kind, lower-cased)."""
    list_kind: str | None = None
    """Kind of a list of the resources. Default: not set (``<kind>List``)."""
    short_names: tuple[str, ...] | None = None
    """Short names ``kubectl`` accepts for the resource. Default: none."""
    categories: tuple[str, ...] | None = None
    """Categories the resource belongs to, so that ``kubectl get <category>`` lists it. Default: none."""


class PrinterColumn(Props):
    """An ``additionalPrinterColumns`` entry: a column of ``kubectl get`` output."""

    name: str
    """Human-readable name of the column."""
    type: Literal["string", "integer", "number", "boolean", "date"]
    """OpenAPI type of the column: ``string``, ``integer``, ``number``, ``boolean`` or ``date``."""
    json_path: str = Field(alias="jsonPath")
    """JSON path, evaluated against each resource, of the column's value."""
    description: str | None = None
    """Human-readable description of the column. Default: not set."""
    priority: int | None = None
    """Importance of the column; columns above 0 may be left out where space is short (``kubectl get`` shows them
    with ``-o wide``). Default: not set (0)."""


class CompositeResourceValidation(Props):
    """A version's ``schema``."""

    open_api_v3_schema: dict[str, Any] = Field(alias="openAPIV3Schema")
    """OpenAPI v3 schema that validates and prunes the version's composite resources; Crossplane adds the fields
    every composite resource has."""


class CompositeResourceDefinitionVersion(Props):
    """A ``versions`` entry: one API version of the composite resource."""

    name: str = Field(pattern=r"^v[0-9]+((alpha|beta)[0-9]+)?$")
    """Name of the version, such as ``v1alpha1``; resources are served at ``/apis/<group>/<name>``."""
    served: bool = True
    """Whether the API server serves this version. Default: ``True``."""
    referenceable: bool = True
    """Whether Compositions may target this version; exactly one version is, and it is the storage version. Default:
    ``True``."""
    deprecated: bool | None = None
    """Whether the version is deprecated and should not be used. Default: not set (not deprecated)."""
    additional_printer_columns: tuple[PrinterColumn, ...] | None = None
    """Extra columns of ``kubectl get`` output. Default: not set (the resource's age alone)."""
    schema_: CompositeResourceValidation = Field(alias="schema")
    """Schema of the version's composite resources."""


class CompositionReference(Props):
    """A reference to a Composition by name."""

    name: Name
    """Name of the Composition."""


class CompositeResourceDefinitionProps(Props):
    """Props of a CompositeResourceDefinition (XRD): a new composite resource API."""

    name: Name
    """``metadata.name`` of the XRD: ``<names.plural>.<group>``."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    group: Name
    """API group of the composite resource; resources are served under ``/apis/<group>``."""
    names: CompositeResourceNames
    """Kind and resource names of the composite resource."""
    scope: Literal["Namespaced", "Cluster"] = "Namespaced"
    """Whether composite resources live in a namespace (``Namespaced``) or outside any (``Cluster``). Default:
    ``"Namespaced"``."""
    default_composition_ref: CompositionReference | None = None
    """Composition used by a composite resource that selects none. Default: not set (no default Composition)."""
    versions: tuple[CompositeResourceDefinitionVersion, ...] = Field(min_length=1)
    """API versions of the composite resource; exactly one is referenceable."""

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
