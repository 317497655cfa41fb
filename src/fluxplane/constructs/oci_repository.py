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

#: The media type of a Helm chart's layer in an OCI artifact (``layerSelector`` of a chart's OCIRepository).
HELM_CHART_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"


class OCIRepositoryRef(Props):
    """Which artifact to pull: a tag, a SemVer range of tags, or a digest."""

    tag: str | None = None
    """Tag to pull. Default: not set."""
    semver: str | None = None
    """SemVer range of tags, the latest matching one pulled; takes precedence over ``tag``. Default: not set."""
    semver_filter: str | None = None
    """Regular expression that filters the tags in the ``semver`` range. Default: not set."""
    digest: str | None = None
    """Digest to pull, ``sha256:<hash>``; takes precedence over ``semver`` and ``tag``. Default: not set."""

    @model_validator(mode="after")
    def _something(self) -> OCIRepositoryRef:
        if self.tag is None and self.semver is None and self.digest is None:
            raise ValueError("set one of tag, semver or digest")
        return self


class LayerSelector(Props):
    """Which layer of the OCI artifact becomes the source's artifact, and how."""

    media_type: str | None = None
    """OCI media type of the layer to take; the first layer of that type is selected. Default: not set (the first
    layer)."""
    operation: Literal["extract", "copy"] | None = None
    """``extract`` unpacks the layer's compressed content; ``copy`` stores it as it is. Default: not set (Flux's
    default, ``extract``)."""


class OCIRepositoryProps(Props):
    """Props of an OCIRepository."""

    name: Name
    """``metadata.name`` of the OCIRepository."""
    namespace: Label = FLUX_NAMESPACE
    """Namespace of the OCIRepository. Default: ``"flux-system"``."""
    interval: Duration = "10m"
    """How often source-controller checks the registry for a new artifact. Default: ``"10m"``."""
    url: Annotated[str, StringConstraints(pattern=r"^oci://.*$")]
    """``oci://`` URL of the artifact's repository in a registry."""
    ref: OCIRepositoryRef
    """The tag, SemVer range or digest to pull."""
    layer_selector: LayerSelector | None = None
    """Which layer of the artifact to take. Default: not set (the first layer, extracted)."""
    provider: Literal["generic", "aws", "azure", "gcp"] | None = None
    """Provider of the credentials: ``generic`` (the Secret), ``aws``, ``azure`` or ``gcp``. Default: not set (Flux's
    default, ``generic``)."""
    secret_ref: LocalObjectReference | None = None
    """Secret of type ``kubernetes.io/dockerconfigjson`` with registry credentials. Default: not set (no
    credentials)."""
    timeout: SourceTimeout | None = None
    """Timeout of remote operations such as pulling. Default: not set (Flux's default, ``60s``)."""


class OCIRepository(TypedResource[OCIRepositoryProps]):
    """An OCI artifact source (Flux's recommended source for OCI Helm charts)."""

    api_version = "source.toolkit.fluxcd.io/v1"
    kind = "OCIRepository"
    props_class = OCIRepositoryProps
