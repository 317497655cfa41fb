"""Crossplane packages (``pkg.crossplane.io/v1``): Provider and Function.

Both kinds take the same spec (an OCI package and how to run it), so they share a module.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import LocalObjectReference, Name, Props

#: An OCI package reference with an explicit tag or digest: packages are pinned, never "latest".
PACKAGE = r"^[a-z0-9.-]+(:[0-9]+)?/[a-z0-9._/-]+(:[A-Za-z0-9._-]+|@sha256:[a-f0-9]{64})$"


class RuntimeConfigReference(Props):
    """A package's ``runtimeConfigRef``: the DeploymentRuntimeConfig its pods run with."""

    api_version: Literal["pkg.crossplane.io/v1beta1"] = "pkg.crossplane.io/v1beta1"
    """API version of the runtime config. Default: ``"pkg.crossplane.io/v1beta1"``."""
    kind: Literal["DeploymentRuntimeConfig"] = "DeploymentRuntimeConfig"
    """Kind of the runtime config. Default: ``"DeploymentRuntimeConfig"``."""
    name: Name
    """Name of the DeploymentRuntimeConfig."""


class PackageProps(Props):
    """Props of a Crossplane Provider or Function: the OCI package and how Crossplane runs it."""

    name: Name
    """``metadata.name`` of the package (cluster-scoped)."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    package: Annotated[str, StringConstraints(pattern=PACKAGE)]
    """OCI reference of the package, with registry and repository, pinned to a tag or digest."""
    package_pull_policy: Literal["Always", "Never", "IfNotPresent"] | None = None
    """When Crossplane pulls the package: ``Always``, ``Never`` or ``IfNotPresent``. Default: not set (Crossplane's
    default, ``IfNotPresent``)."""
    package_pull_secrets: tuple[LocalObjectReference, ...] | None = None
    """Secrets, in Crossplane's namespace, used to pull the package from a private registry. Default: not set (none)."""
    revision_activation_policy: Literal["Automatic", "Manual"] | None = None
    """Whether a new package revision becomes active by itself (``Automatic``) or only when activated by hand
    (``Manual``). Default: not set (Crossplane's default, ``Automatic``)."""
    revision_history_limit: int | None = None
    """How many inactive package revisions Crossplane keeps; 0 turns the clean-up off. Default: not set (Crossplane's
    default, 1)."""
    runtime_config_ref: RuntimeConfigReference | None = None
    """The DeploymentRuntimeConfig the package's pods run with. Default: not set (the one named ``default``)."""
    skip_dependency_resolution: bool | None = None
    """Whether Crossplane skips installing the package's dependencies. Default: not set (Crossplane's default,
    ``false``)."""


class Provider(TypedResource[PackageProps]):
    """A Crossplane provider package: its CRDs and its controller."""

    api_version = "pkg.crossplane.io/v1"
    kind = "Provider"
    namespaced = False
    props_class = PackageProps


class Function(TypedResource[PackageProps]):
    """A Crossplane composition function package (a step of a Pipeline composition)."""

    api_version = "pkg.crossplane.io/v1"
    kind = "Function"
    namespaced = False
    props_class = PackageProps
