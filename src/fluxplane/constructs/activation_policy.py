"""Crossplane ManagedResourceActivationPolicy (``apiextensions.crossplane.io/v1alpha1``): which managed
resources of the installed providers Crossplane activates (gives a CRD and a controller)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import Name, Props

#: An MRD name (``<plural>.<group>``), or one with a wildcard prefix (``*.aws.m.upbound.io``).
ACTIVATION = r"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$"


class ManagedResourceActivationPolicyProps(Props):
    """Props of a ManagedResourceActivationPolicy."""

    name: Name
    """``metadata.name`` of the policy (cluster-scoped)."""
    activate: Annotated[tuple[Annotated[str, StringConstraints(pattern=ACTIVATION)], ...], Field(min_length=1)]
    """ManagedResourceDefinition names to activate, ``<plural>.<group>``, or a wildcard prefix such as
    ``*.aws.m.upbound.io``. Policies add up: an MRD any of them names is active, and stays active."""


class ManagedResourceActivationPolicy(TypedResource[ManagedResourceActivationPolicyProps]):
    """Activates the named managed resources of the providers Crossplane runs (cluster-scoped)."""

    api_version = "apiextensions.crossplane.io/v1alpha1"
    kind = "ManagedResourceActivationPolicy"
    props_class = ManagedResourceActivationPolicyProps
    namespaced = False
