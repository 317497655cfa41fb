"""What the app composites (``platform.fluxplane.io/v1alpha1``) share: their group, the fields every one has, how
each one's XRD and Composition are made from its declaration (:class:`AppKind`), and the policy on the app's role
that grants it one resource.

The kinds are fluxplane's own, each declared in one module of this package: the identities of apps and add-ons
(fluxplane.kinds.app_identity), and the tables, queues, buckets and databases an app may ask of AWS
(fluxplane.kinds.app_table, app_queue, app_bucket, app_database). Each lives in the hub namespace of the
workload cluster the app runs on, next to that cluster's ``EKSCluster``. The ``app-compositions`` pack writes their
XRDs and Compositions (fluxplane.packs.app_compositions); synth writes the composites (fluxplane.charts.cloud).

The props mirror the XRDs' schemas, so an object that passes them passes the API server too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from fluxplane.constructs import patch_and_transform as pt
from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.composite_resource_definition import (
    CompositeResourceDefinitionProps,
    CompositeResourceDefinitionVersion,
    CompositeResourceNames,
    CompositeResourceValidation,
    CompositionReference,
)
from fluxplane.constructs.composition import CompositionProps, PipelineStep, TypeReference
from fluxplane.constructs.health import composite_health
from fluxplane.constructs.patch_and_transform import PATCH_SETS, PROVIDER_CONFIG_FIELD
from fluxplane.constructs.props import DNS_LABEL, CustomHealthCheck, Label, LocalObjectReference, Name, Props
from fluxplane.kinds.live import CloudKind

GROUP = "platform.fluxplane.io"
VERSION = "v1alpha1"
REGION = r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]$"
#: Suffix of the hub service accounts that apply an app's own requests (``<app>-cloud``).
REQUEST_ACCOUNT_SUFFIX = "-cloud"
#: Label of an app's IAM role, whose value is the app's name: how resource policies find the role.
APP_ROLE_LABEL = f"{pt.LABEL}/app-role"

#: An XRD's fields, in three parts: ``spec``'s properties, those of them required, and ``status``'s properties.
Spec = tuple[dict[str, Any], list[str], dict[str, Any]]
#: What a Composition composes: function-patch-and-transform's resources.
Composed = Callable[[], list[dict[str, Any]]]


@dataclass(frozen=True)
class AppKind:
    """One app composite, declared once: the construct that writes it, its XRD's fields, what its Composition
    composes (on the hub, and on a workload cluster that makes its apps' resources itself), the AWS provider family
    members it needs, and what a change to it does to the live resources (fluxplane.kinds.live)."""

    construct: type[TypedResource[Any]]
    plural: str
    spec: Spec
    services: tuple[str, ...]
    composed: Composed
    live: CloudKind
    #: What it composes on a workload cluster that makes its apps' resources (``appResources: spoke``); None for a
    #: kind an app may not request from its own repository there.
    spoke_composed: Composed | None = None

    @property
    def kind(self) -> str:
        return self.construct.kind

    def xrd_props(self) -> CompositeResourceDefinitionProps:
        """Its XRD: its own fields and those every app kind shares, defaulting to its Composition."""
        properties, required, status = self.spec
        schema = {
            "type": "object",
            "required": ["spec"],
            "properties": {
                "spec": {"type": "object", "required": required, "properties": {**properties, **_COMMON}},
                "status": {"type": "object", "properties": status},
            },
        }
        return CompositeResourceDefinitionProps(
            name=f"{self.plural}.{GROUP}",
            group=GROUP,
            names=CompositeResourceNames(
                kind=self.kind, plural=self.plural, categories=("crossplane", "composite", "app")
            ),
            scope="Namespaced",
            default_composition_ref=CompositionReference(name=composition_name(self.kind)),
            versions=(
                CompositeResourceDefinitionVersion(
                    name=VERSION,
                    served=True,
                    referenceable=True,
                    schema_=CompositeResourceValidation(open_api_v3_schema=schema),
                ),
            ),
        )

    def health_check(self) -> CustomHealthCheck:
        """How Flux tells that a composite of it is ready: Crossplane's conditions (fluxplane.constructs.health)."""
        return composite_health(self.construct.api_version, self.kind)

    def composition_props(self, *, spoke: bool = False) -> CompositionProps:
        """Its Composition: on the hub, or (``spoke``) on a workload cluster that makes its apps' resources."""
        resources = self.spoke_composed if spoke else self.composed
        if resources is None:
            raise ValueError(f"{self.kind} is not made on a workload cluster")
        return composition(composition_name(self.kind), self.kind, resources())


class CompositeProps(Props):
    """Fields every app composite has: its metadata, its AWS region and tags."""

    name: Name = Field(pattern=DNS_LABEL)
    """``metadata.name`` of the composite, a DNS-1123 label."""
    namespace: Label
    """Namespace of the composite: the hub namespace of the workload cluster the app runs on."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    annotations: dict[str, str] | None = None
    """``metadata.annotations``. Default: none."""
    region: str = Field(pattern=REGION)
    """AWS region the composite's resources are created in."""
    provider_config_name: Name | None = None
    """The ClusterProviderConfig of the AWS account the composite's resources are made in: its cluster's. Default:
    not set (the hub's own account, ``default``)."""
    tags: dict[str, str] = Field(default_factory=dict)
    """AWS tags on the AWS resources the composite creates. Default: none."""


class AppResourceProps(CompositeProps):
    """Fields of the composites that give an app's role access to one AWS resource."""

    app: Label
    """The app whose role gets access (its AppIdentity's name, in the same namespace)."""


_COMMON = {
    "region": pt.string_property("AWS region.", pattern=REGION),
    PROVIDER_CONFIG_FIELD: pt.provider_config_property(),
    "tags": {"type": "object", "additionalProperties": {"type": "string"}},
}
#: The field of every resource kind: the app whose role gets access.
APP_FIELD = {"app": pt.string_property("The app whose role gets access: its AppIdentity in this namespace.")}


def composition_name(kind: str) -> str:
    return kind.lower()


def composition(name: str, kind: str, resources: list[dict[str, Any]]) -> CompositionProps:
    """A Pipeline Composition of ``kind`` that composes ``resources`` with function-patch-and-transform."""
    return CompositionProps(
        name=name,
        composite_type_ref=TypeReference(api_version=f"{GROUP}/{VERSION}", kind=kind),
        mode="Pipeline",
        pipeline=(
            PipelineStep(
                step="compose",
                function_ref=LocalObjectReference(name=pt.PATCH_AND_TRANSFORM),
                input={
                    "apiVersion": "pt.fn.crossplane.io/v1beta1",
                    "kind": "Resources",
                    "patchSets": PATCH_SETS,
                    "resources": resources,
                },
            ),
            PipelineStep(step="detect-readiness", function_ref=LocalObjectReference(name=pt.AUTO_READY)),
        ),
    )


def policy(*statements: tuple[tuple[str, ...], tuple[str, ...]]) -> str:
    """An IAM policy document (a P&T format string: each ``%s`` is the resource's ARN)."""
    document = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": list(actions), "Resource": list(resources)}
            for actions, resources in statements
        ],
    }
    return json.dumps(document, indent=2) + "\n"


def access(actions_fmt: str, arn_uses: int) -> dict[str, Any]:
    """The inline policy on the app's role that grants access to the composed resource's ARN."""
    return pt.resource(
        "access",
        pt.managed("iam", "RolePolicy", {"roleSelector": {"matchLabels": {APP_ROLE_LABEL: "app"}}}),
        [
            pt.patch("spec.app", f"spec.forProvider.roleSelector.matchLabels[{APP_ROLE_LABEL}]", required=True),
            pt.combine(("status.arn",) * arn_uses, actions_fmt, "spec.forProvider.policy"),
        ],
    )


def external_name(source: str) -> dict[str, Any]:
    return pt.patch(source, "metadata.annotations[crossplane.io/external-name]", required=True)
