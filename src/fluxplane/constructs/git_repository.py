"""Flux GitRepository (``source.toolkit.fluxcd.io/v1``)."""

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


class GitRepositoryRef(Props):
    """Which revision to check out: one of branch, tag, semver or name (commit may pin a branch)."""

    branch: str | None = None
    tag: str | None = None
    semver: str | None = None
    name: str | None = None
    commit: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> GitRepositoryRef:
        if sum(value is not None for value in (self.branch, self.tag, self.semver, self.name)) > 1:
            raise ValueError("set only one of branch, tag, semver and name")
        return self


class GitRepositoryProps(Props):
    name: Name
    namespace: Label = FLUX_NAMESPACE
    interval: Duration = "10m"
    url: Annotated[str, StringConstraints(pattern=r"^(http|https|ssh)://.*$")]
    ref: GitRepositoryRef | None = None
    secret_ref: LocalObjectReference | None = None
    timeout: SourceTimeout | None = None
    provider: Literal["generic", "aws", "azure", "github"] | None = None
    ignore: str | None = None


class GitRepository(TypedResource[GitRepositoryProps]):
    """A Git source Flux clones."""

    api_version = "source.toolkit.fluxcd.io/v1"
    kind = "GitRepository"
    props_class = GitRepositoryProps
