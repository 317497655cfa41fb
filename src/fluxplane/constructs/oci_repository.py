"""Flux OCIRepository (``source.toolkit.fluxcd.io/v1``): an OCI artifact, e.g. a Helm chart for chartRef."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints, model_validator

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import (
    FLUX_NAMESPACE,
    Duration,
    Label,
    LocalObjectReference,
    Name,
    Props,
    SourceTimeout,
)


class OCIRepositoryRef(Props):
    tag: str | None = None
    semver: str | None = None
    semver_filter: str | None = None
    digest: str | None = None

    @model_validator(mode="after")
    def _something(self) -> OCIRepositoryRef:
        if self.tag is None and self.semver is None and self.digest is None:
            raise ValueError("set one of tag, semver or digest")
        return self


class LayerSelector(Props):
    media_type: str | None = None
    operation: Literal["extract", "copy"] | None = None


class OCIRepositoryProps(Props):
    name: Name
    namespace: Label = FLUX_NAMESPACE
    interval: Duration = "10m"
    url: Annotated[str, StringConstraints(pattern=r"^oci://.*$")]
    ref: OCIRepositoryRef
    layer_selector: LayerSelector | None = None
    provider: Literal["generic", "aws", "azure", "gcp"] | None = None
    secret_ref: LocalObjectReference | None = None
    timeout: SourceTimeout | None = None


class OCIRepository(TypedResource[OCIRepositoryProps]):
    """An OCI artifact source (Flux's recommended source for OCI Helm charts)."""

    api_version = "source.toolkit.fluxcd.io/v1"
    kind = "OCIRepository"
    props_class = OCIRepositoryProps
