"""Flux HelmRepository (``source.toolkit.fluxcd.io/v1``), https or oci."""

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


class HelmRepositoryProps(Props):
    name: Name
    namespace: Label = FLUX_NAMESPACE
    type: Literal["default", "oci"] | None = None
    interval: Duration | None = "1h"
    url: Annotated[str, StringConstraints(pattern=r"^(http|https|oci)://.*$")]
    provider: Literal["generic", "aws", "azure", "gcp"] | None = None
    secret_ref: LocalObjectReference | None = None
    timeout: SourceTimeout | None = None

    @model_validator(mode="after")
    def _type_matches_url(self) -> HelmRepositoryProps:
        is_oci = self.url.startswith("oci://")
        if is_oci and self.type != "oci":
            raise ValueError("an oci:// url needs type 'oci'")
        if not is_oci and self.type == "oci":
            raise ValueError("type 'oci' needs an oci:// url")
        return self


class HelmRepository(TypedResource[HelmRepositoryProps]):
    """A Helm chart repository. For OCI registries Flux recommends OCIRepository + chartRef."""

    api_version = "source.toolkit.fluxcd.io/v1"
    kind = "HelmRepository"
    props_class = HelmRepositoryProps

    @property
    def is_oci(self) -> bool:
        return self.props.type == "oci"
