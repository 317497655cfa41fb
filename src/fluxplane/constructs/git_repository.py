"""Flux GitRepository (``source.toolkit.fluxcd.io/v1``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

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
    ordered,
)
from fluxplane.errors import ConstructError


class GitRepositoryRef(Props):
    """Which revision to check out: one of branch, tag, semver or name (commit may pin a branch)."""

    branch: str | None = None
    """Branch to check out. Default: not set (``master``, when no other field is set)."""
    tag: str | None = None
    """Tag to check out; takes precedence over ``branch``. Default: not set."""
    semver: str | None = None
    """SemVer range of tags, the highest matching one checked out; takes precedence over ``tag``. Default: not set."""
    name: str | None = None
    """Git reference to check out, e.g. ``refs/heads/main`` or ``refs/pull/420/head``; takes precedence over
    ``branch``, ``tag`` and ``semver``. Default: not set."""
    commit: str | None = None
    """Commit SHA to check out, taking precedence over every other field; with ``branch``, that branch is cloned
    shallowly and must contain the commit. Default: not set."""

    @model_validator(mode="after")
    def _one_kind(self) -> GitRepositoryRef:
        if sum(value is not None for value in (self.branch, self.tag, self.semver, self.name)) > 1:
            raise ValueError("set only one of branch, tag, semver and name")
        return self


class GitRepositoryProps(Props):
    """Props of a GitRepository."""

    name: Name
    """``metadata.name`` of the GitRepository."""
    namespace: Label = FLUX_NAMESPACE
    """Namespace of the GitRepository. Default: ``"flux-system"``."""
    interval: Duration = "10m"
    """How often source-controller checks the repository for new commits. Default: ``"10m"``."""
    url: Annotated[str, StringConstraints(pattern=r"^(http|https|ssh)://.*$")]
    """URL of the repository: ``http``, ``https`` or ``ssh``."""
    ref: GitRepositoryRef | None = None
    """The revision to check out. Default: not set (the ``master`` branch)."""
    secret_ref: LocalObjectReference | None = None
    """Secret with credentials: ``username`` and ``password`` or ``bearerToken`` for HTTPS, ``identity`` and
    ``known_hosts`` for SSH. Default: not set (no credentials)."""
    timeout: SourceTimeout | None = None
    """Timeout of Git operations such as cloning. Default: not set (Flux's default, ``60s``)."""
    provider: Literal["generic", "aws", "azure", "github"] | None = None
    """Provider of the credentials: ``generic`` (the Secret), ``aws``, ``azure`` or ``github``. Default: not set
    (Flux's default, ``generic``)."""
    ignore: str | None = None
    """Patterns, in ``.gitignore`` format, of files to leave out of the artifact, in place of Flux's default
    patterns. Default: not set (Flux's default patterns)."""
    sparse_checkout: tuple[Annotated[str, StringConstraints(pattern=r"^[^\s./][^\s]*$")], ...] | None = None
    """Directories of the repository (``dist/platform/clusters/a``, no leading ``./``) that alone are checked out
    and archived; each must exist, or the source fails. ``check_out_only()`` adds more. Default: not set (the
    whole repository)."""


class GitRepository(TypedResource[GitRepositoryProps]):
    """A Git source Flux clones. ``check_out_only`` adds directories to its sparse checkout."""

    api_version = "source.toolkit.fluxcd.io/v1"
    kind = "GitRepository"
    props_class = GitRepositoryProps

    def __init__(self, scope: Any, construct_id: str, props: GitRepositoryProps) -> None:
        super().__init__(scope, construct_id, props)
        self._sparse: dict[str, None] = dict.fromkeys(self.props.sparse_checkout or ())

    @property
    def sparse_checkout(self) -> tuple[str, ...]:
        return tuple(sorted(self._sparse))

    def check_out_only(self, *directories: str) -> None:
        """Check out ``directories`` (repository paths without ``./``) and, with the others added, nothing else."""
        for directory in directories:
            directory = directory.removeprefix("./").rstrip("/")
            if not directory or directory.startswith(("/", ".")):
                raise ConstructError(
                    f"{self.node.path}: a sparse checkout directory is a path in the repository, got {directory!r}"
                )
            self._sparse[directory] = None

    def spec_dict(self) -> dict[str, Any]:
        spec = super().spec_dict() or {}
        if self._sparse:
            spec["sparseCheckout"] = list(self.sparse_checkout)
        return ordered(spec, GitRepositoryProps)
