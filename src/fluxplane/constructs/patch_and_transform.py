"""Builders of function-patch-and-transform input: patches, patch sets and composed AWS resources.

fluxplane's Compositions (the EKS cluster, the app kinds, the app database) are Crossplane pipelines
whose ``compose`` step is function-patch-and-transform over namespaced managed resources of the Upbound
AWS family (``*.aws.m.upbound.io``), then function-auto-ready. They share the shapes built here, so each
Composition reads as its resources and patches, and a pack outside fluxplane that composes AWS resources
writes them the same way (``fluxplane.sdk`` exports these).

The builders return plain dicts, the P&T ``Resources`` input as Crossplane reads it; the Composition
construct (fluxplane.constructs.composition) carries them into the output. Composed resources are
told apart within one composite resource by labels under :data:`LABEL`, which :func:`selector` matches;
every AWS managed resource is made in the account the composite names (:data:`PROVIDER_CONFIG_FIELD`).
"""

from __future__ import annotations

from typing import Any

from fluxplane.config.models import HUB_PROVIDER_CONFIG

__all__ = [
    "AUTO_READY",
    "LABEL",
    "PATCH_AND_TRANSFORM",
    "PATCH_SETS",
    "PROVIDER_CONFIG",
    "PROVIDER_CONFIG_FIELD",
    "cidr_property",
    "combine",
    "format_transform",
    "managed",
    "name_tag",
    "patch",
    "provider_config_property",
    "resource",
    "selector",
    "status",
    "string_property",
    "use",
]

#: The Crossplane Functions of every Composition's pipeline: compose, then detect readiness.
PATCH_AND_TRANSFORM = "function-patch-and-transform"
AUTO_READY = "function-auto-ready"
#: Prefix of the label keys composed resources are selected by, within one composite resource.
LABEL = "platform.fluxplane.io"
#: The ClusterProviderConfig a composed AWS resource starts with, before the ``account`` patch set
#: points it at the composite's own.
PROVIDER_CONFIG = {"kind": "ClusterProviderConfig", "name": HUB_PROVIDER_CONFIG}
#: The composite field naming the ClusterProviderConfig of the account its AWS resources are made in.
PROVIDER_CONFIG_FIELD = "providerConfigName"
#: The API version suffix of the Upbound AWS family's namespaced managed resources.
_AWS_MANAGED = ".aws.m.upbound.io/v1beta1"


# -- XRD schema properties --------------------------------------------------------------------------


def string_property(description: str, **extra: Any) -> dict[str, Any]:
    """An XRD string property; ``extra`` are further OpenAPI keywords (``pattern``, ``enum``, ``default``)."""
    return {"type": "string", "description": description, **extra}


def cidr_property(description: str) -> dict[str, Any]:
    """An XRD string property that holds an IPv4 CIDR block."""
    return string_property(description, pattern=r"^([0-9]{1,3}\.){3}[0-9]{1,3}/[0-9]{1,2}$")


def provider_config_property() -> dict[str, Any]:
    """The XRD property of PROVIDER_CONFIG_FIELD: the hub's own account unless a composite names another."""
    return string_property(
        "The ClusterProviderConfig of the AWS account the resources are made in (an account's name); changing it "
        "makes them anew in the other account.",
        pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
        maxLength=63,
        default=HUB_PROVIDER_CONFIG,
    )


# -- patches ------------------------------------------------------------------------------------------


def format_transform(fmt: str) -> dict[str, Any]:
    """A string transform: Go's ``fmt.Sprintf(fmt, value)``."""
    return {"type": "string", "string": {"type": "Format", "fmt": fmt}}


def patch(source: str, target: str, *, fmt: str | None = None, required: bool = False) -> dict[str, Any]:
    """Copy the composite's ``source`` field to the composed resource's ``target``, formatted with ``fmt``.

    ``required`` holds the resource back until the field is set (P&T's ``Required`` policy), for fields
    without which AWS would make the wrong thing.
    """
    built: dict[str, Any] = {"type": "FromCompositeFieldPath", "fromFieldPath": source, "toFieldPath": target}
    if fmt is not None:
        built["transforms"] = [format_transform(fmt)]
    if required:
        built["policy"] = {"fromFieldPath": "Required"}
    return built


def status(source: str, target: str) -> dict[str, Any]:
    """Copy the composed resource's ``source`` field (its observed status) to the composite's ``target``."""
    return {"type": "ToCompositeFieldPath", "fromFieldPath": source, "toFieldPath": target}


def combine(paths: tuple[str, ...], fmt: str, target: str) -> dict[str, Any]:
    """``fmt`` over the composite's ``paths``, all required."""
    return {
        "type": "CombineFromComposite",
        "combine": {
            "variables": [{"fromFieldPath": path} for path in paths],
            "strategy": "string",
            "string": {"fmt": fmt},
        },
        "toFieldPath": target,
        "policy": {"fromFieldPath": "Required"},
    }


def name_tag(fmt: str, *variables: str) -> dict[str, Any]:
    """The AWS console's Name tag: ``fmt`` over the composite's name and ``variables``."""
    if not variables:
        return patch("metadata.name", "spec.forProvider.tags.Name", fmt=fmt)
    return {
        "type": "CombineFromComposite",
        "combine": {
            "variables": [{"fromFieldPath": "metadata.name"}, *({"fromFieldPath": path} for path in variables)],
            "strategy": "string",
            "string": {"fmt": fmt},
        },
        "toFieldPath": "spec.forProvider.tags.Name",
    }


def use(patch_set: str) -> dict[str, Any]:
    """Apply one of PATCH_SETS (by name) to a composed resource."""
    return {"type": "PatchSet", "patchSetName": patch_set}


#: The patch sets every Composition declares: the composite's region, account and tags on each AWS resource.
PATCH_SETS = [
    {"name": "region", "patches": [patch("spec.region", "spec.forProvider.region")]},
    {"name": "account", "patches": [patch(f"spec.{PROVIDER_CONFIG_FIELD}", "spec.providerConfigRef.name")]},
    {
        "name": "tags",
        "patches": [
            {
                "type": "FromCompositeFieldPath",
                "fromFieldPath": "spec.tags",
                "toFieldPath": "spec.forProvider.tags",
                "policy": {"toFieldPath": "MergeObjects"},
            }
        ],
    },
]


# -- composed resources ---------------------------------------------------------------------------------


def managed(api_group: str, kind: str, for_provider: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """The base of an Upbound AWS managed resource: ``<api_group>.aws.m.upbound.io/v1beta1`` ``kind``.

    ``labels`` (keys under LABEL) let other resources of the same composite select it; the other ``extra``
    keys go into its spec beside ``forProvider``.
    """
    base: dict[str, Any] = {"apiVersion": f"{api_group}{_AWS_MANAGED}", "kind": kind}
    labels = extra.pop("labels", None)
    if labels:
        base["metadata"] = {"labels": {f"{LABEL}/{key}": value for key, value in labels.items()}}
    base["spec"] = {"forProvider": for_provider, **extra, "providerConfigRef": dict(PROVIDER_CONFIG)}
    return base


def selector(**labels: str) -> dict[str, Any]:
    """Select a composed resource of the same composite resource, by fluxplane labels (``_`` is ``-``)."""
    built: dict[str, Any] = {"matchControllerRef": True}
    if labels:
        built["matchLabels"] = {f"{LABEL}/{key.replace('_', '-')}": value for key, value in labels.items()}
    return built


def resource(name: str, base: dict[str, Any], patches: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A composed resource; an AWS managed resource is made in the composite's account (PROVIDER_CONFIG_FIELD)."""
    if str(base.get("apiVersion", "")).endswith(_AWS_MANAGED):
        patches = [*patches, use("account")]
    return {"name": name, "base": base, "patches": patches, **extra}
