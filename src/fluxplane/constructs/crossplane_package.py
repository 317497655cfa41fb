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
    api_version: Literal["pkg.crossplane.io/v1beta1"] = "pkg.crossplane.io/v1beta1"
    kind: Literal["DeploymentRuntimeConfig"] = "DeploymentRuntimeConfig"
    name: Name


class PackageProps(Props):
    name: Name
    labels: dict[str, str] | None = None
    package: Annotated[str, StringConstraints(pattern=PACKAGE)]
    package_pull_policy: Literal["Always", "Never", "IfNotPresent"] | None = None
    package_pull_secrets: tuple[LocalObjectReference, ...] | None = None
    revision_activation_policy: Literal["Automatic", "Manual"] | None = None
    revision_history_limit: int | None = None
    runtime_config_ref: RuntimeConfigReference | None = None
    skip_dependency_resolution: bool | None = None


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
