"""Flux HelmRepository (``source.toolkit.fluxcd.io/v1``), https or oci, and the pinned chart one serves."""

from __future__ import annotations

from typing import Annotated, Literal, NamedTuple

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


class Chart(NamedTuple):
    """A Helm chart: its repository (an https:// Helm repository, or the oci:// registry path that holds it),
    its name there, and its version. fluxplane.packs.versions pins them."""

    repository: str
    chart: str
    version: str

    @property
    def url(self) -> str:
        """Where Flux fetches it: the Helm repository, or the chart's own oci:// URL (repository/chart)."""
        return f"{self.repository}/{self.chart}" if self.repository.startswith("oci://") else self.repository


class HelmRepositoryProps(Props):
    """Props of a HelmRepository."""

    name: Name
    """``metadata.name`` of the HelmRepository."""
    namespace: Label = FLUX_NAMESPACE
    """Namespace of the HelmRepository. Default: ``"flux-system"``."""
    type: Literal["default", "oci"] | None = None
    """Type of repository: ``default`` (an HTTP/S index) or ``oci`` (an ``oci://`` URL). Default: not set
    (``default``)."""
    interval: Duration | None = "1h"
    """How often source-controller checks the repository for updates. Default: ``"1h"``."""
    url: Annotated[str, StringConstraints(pattern=r"^(http|https|oci)://.*$")]
    """URL of the repository: ``http``, ``https`` or ``oci``."""
    provider: Literal["generic", "aws", "azure", "gcp"] | None = None
    """Provider of the credentials for an ``oci`` repository: ``generic`` (the Secret), ``aws``, ``azure`` or
    ``gcp``; ignored otherwise. Default: not set (Flux's default, ``generic``)."""
    secret_ref: LocalObjectReference | None = None
    """Secret with ``username`` and ``password`` for basic auth. Default: not set (no credentials)."""
    timeout: SourceTimeout | None = None
    """Timeout of fetching the index of an HTTP/S repository, and of remote OCI operations such as pulling a chart.
    Default: not set (Flux's default, ``60s``)."""

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
