"""Tests for fluxplane.constructs.patch_and_transform: the P&T input every fluxplane Composition is built of."""

from __future__ import annotations

import pytest

from fluxplane.constructs import patch_and_transform as pt


def test_a_patch_copies_a_composite_field() -> None:
    # GIVEN a source and a target WHEN patched plainly THEN a FromCompositeFieldPath patch, no transform, no policy
    assert pt.patch("spec.region", "spec.forProvider.region") == {
        "type": "FromCompositeFieldPath",
        "fromFieldPath": "spec.region",
        "toFieldPath": "spec.forProvider.region",
    }


def test_a_formatted_required_patch() -> None:
    # GIVEN a format and required WHEN patched THEN a Format transform and the Required policy
    assert pt.patch("metadata.name", "spec.forProvider.tags.Name", fmt="%s-nat", required=True) == {
        "type": "FromCompositeFieldPath",
        "fromFieldPath": "metadata.name",
        "toFieldPath": "spec.forProvider.tags.Name",
        "transforms": [{"type": "string", "string": {"type": "Format", "fmt": "%s-nat"}}],
        "policy": {"fromFieldPath": "Required"},
    }


def test_format_transform() -> None:
    assert pt.format_transform("%s-node") == {"type": "string", "string": {"type": "Format", "fmt": "%s-node"}}


def test_status_copies_back_to_the_composite() -> None:
    # GIVEN an observed field WHEN patched to the composite THEN a ToCompositeFieldPath patch
    assert pt.status("status.atProvider.arn", "status.arn") == {
        "type": "ToCompositeFieldPath",
        "fromFieldPath": "status.atProvider.arn",
        "toFieldPath": "status.arn",
    }


def test_combine_formats_required_fields() -> None:
    # GIVEN two composite fields and a format WHEN combined THEN a string combine, required
    assert pt.combine(("spec.app", "status.arn"), "%s:%s", "spec.forProvider.policy") == {
        "type": "CombineFromComposite",
        "combine": {
            "variables": [{"fromFieldPath": "spec.app"}, {"fromFieldPath": "status.arn"}],
            "strategy": "string",
            "string": {"fmt": "%s:%s"},
        },
        "toFieldPath": "spec.forProvider.policy",
        "policy": {"fromFieldPath": "Required"},
    }


def test_a_name_tag_over_the_composite_name_alone_is_a_formatted_patch() -> None:
    assert pt.name_tag("%s-public") == pt.patch("metadata.name", "spec.forProvider.tags.Name", fmt="%s-public")


def test_a_name_tag_over_more_fields_combines_them_without_requiring_them() -> None:
    # GIVEN a format over the name and a zone WHEN built THEN a combine with the name first, and no policy
    assert pt.name_tag("%s-private-%s", "spec.network.zones[0].name") == {
        "type": "CombineFromComposite",
        "combine": {
            "variables": [{"fromFieldPath": "metadata.name"}, {"fromFieldPath": "spec.network.zones[0].name"}],
            "strategy": "string",
            "string": {"fmt": "%s-private-%s"},
        },
        "toFieldPath": "spec.forProvider.tags.Name",
    }


def test_use_names_a_patch_set() -> None:
    assert pt.use("tags") == {"type": "PatchSet", "patchSetName": "tags"}


def test_the_patch_sets_carry_region_account_and_merged_tags() -> None:
    assert pt.PATCH_SETS == [
        {
            "name": "region",
            "patches": [
                {
                    "type": "FromCompositeFieldPath",
                    "fromFieldPath": "spec.region",
                    "toFieldPath": "spec.forProvider.region",
                }
            ],
        },
        {
            "name": "account",
            "patches": [
                {
                    "type": "FromCompositeFieldPath",
                    "fromFieldPath": "spec.providerConfigName",
                    "toFieldPath": "spec.providerConfigRef.name",
                }
            ],
        },
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


def test_a_managed_resource_is_of_the_namespaced_aws_family_in_the_hubs_account() -> None:
    # GIVEN a service, a kind and forProvider WHEN built THEN the base of an Upbound namespaced managed resource
    assert pt.managed("ec2", "VPC", {"enableDnsSupport": True}) == {
        "apiVersion": "ec2.aws.m.upbound.io/v1beta1",
        "kind": "VPC",
        "spec": {
            "forProvider": {"enableDnsSupport": True},
            "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "default"},
        },
    }


def test_a_managed_resources_labels_and_extra_spec() -> None:
    # GIVEN labels and another spec key WHEN built THEN the labels sit under LABEL, the key beside forProvider
    base = pt.managed("eks", "ClusterAuth", {}, labels={"zone": "0"}, writeConnectionSecretToRef={"name": "auth"})
    assert base == {
        "apiVersion": "eks.aws.m.upbound.io/v1beta1",
        "kind": "ClusterAuth",
        "metadata": {"labels": {"platform.fluxplane.io/zone": "0"}},
        "spec": {
            "forProvider": {},
            "writeConnectionSecretToRef": {"name": "auth"},
            "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "default"},
        },
    }


def test_each_managed_resource_gets_its_own_provider_config_reference() -> None:
    # GIVEN two managed resources WHEN one's reference is changed THEN the other's and the constant are not
    first, second = pt.managed("ec2", "VPC", {}), pt.managed("ec2", "VPC", {})
    first["spec"]["providerConfigRef"]["name"] = "other"
    assert (
        second["spec"]["providerConfigRef"]
        == pt.PROVIDER_CONFIG
        == {"kind": "ClusterProviderConfig", "name": "default"}
    )


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({}, {"matchControllerRef": True}),
        (
            {"route_table": "public", "zone": "1"},
            {
                "matchControllerRef": True,
                "matchLabels": {"platform.fluxplane.io/route-table": "public", "platform.fluxplane.io/zone": "1"},
            },
        ),
    ],
)
def test_a_selector_matches_the_same_composite_by_label(labels: dict[str, str], expected: dict[str, object]) -> None:
    assert pt.selector(**labels) == expected


def test_an_aws_resource_is_made_in_the_composites_account() -> None:
    # GIVEN an AWS managed resource WHEN composed THEN the account patch set comes last
    base = pt.managed("ec2", "VPC", {})
    assert pt.resource("vpc", base, [pt.use("region")]) == {
        "name": "vpc",
        "base": base,
        "patches": [pt.use("region"), {"type": "PatchSet", "patchSetName": "account"}],
    }


def test_another_resource_keeps_its_patches_and_extra_keys() -> None:
    # GIVEN a ConfigMap with a readiness check WHEN composed THEN no account patch set, the check kept
    base = {"apiVersion": "v1", "kind": "ConfigMap"}
    patch = pt.patch("spec.name", "metadata.name", required=True)
    assert pt.resource("values", base, [patch], readinessChecks=[{"type": "None"}]) == {
        "name": "values",
        "base": base,
        "patches": [patch],
        "readinessChecks": [{"type": "None"}],
    }


def test_schema_properties() -> None:
    # GIVEN the XRD property builders WHEN called THEN strings with their keywords, a CIDR pattern, the account
    assert pt.string_property("Zone.", pattern="^a$") == {"type": "string", "description": "Zone.", "pattern": "^a$"}
    assert pt.cidr_property("VPC CIDR.") == {
        "type": "string",
        "description": "VPC CIDR.",
        "pattern": r"^([0-9]{1,3}\.){3}[0-9]{1,3}/[0-9]{1,2}$",
    }
    assert pt.provider_config_property() == {
        "type": "string",
        "description": "The ClusterProviderConfig of the AWS account the resources are made in (an account's name); "
        "changing it makes them anew in the other account.",
        "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
        "maxLength": 63,
        "default": "default",
    }


def test_the_pipeline_function_names() -> None:
    assert (pt.PATCH_AND_TRANSFORM, pt.AUTO_READY, pt.LABEL, pt.PROVIDER_CONFIG_FIELD) == (
        "function-patch-and-transform",
        "function-auto-ready",
        "platform.fluxplane.io",
        "providerConfigName",
    )
