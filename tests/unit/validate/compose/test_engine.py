"""Tests for fluxplane.validate.compose.engine: a Composition's patch-and-transform pipeline rendered for one XR,
against upstream behaviour.

Expected values are upstream's: the test tables of crossplane-contrib/function-patch-and-transform
(``transforms_test.go``, ``patches_test.go``) and crossplane-runtime (``fieldpath/*_test.go``) where
they have the case, else what the Go code does (cited in each test).
"""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.validate.compose import FunctionPipeline, Unknown, read_resources, render
from fluxplane.validate.compose.fieldpath import (
    expand_wildcards,
    parse,
)

INPUT = ("spec", "pipeline", 0, "input")


def xr(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.org/v1",
        "kind": "XThing",
        "metadata": {"name": "demo", "namespace": "team", "labels": {"crossplane.io/composite": "demo"}},
        "spec": {"crossplane": {"compositionRef": {"name": "things"}}, **spec},
    }


def bucket(*patches: dict[str, Any], name: str = "bucket", **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "base": {"apiVersion": "s3.example.org/v1", "kind": "Bucket", "spec": {"forProvider": {}}},
        "patches": list(patches),
        **extra,
    }


def run(resources: list[dict[str, Any]], composite: dict[str, Any], **extra: Any) -> Any:
    """Render one P&T step; the input must be valid."""
    data = {"apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources", "resources": resources, **extra}
    parsed = read_resources(data, INPUT)
    assert parsed.problems == []
    return render(FunctionPipeline([parsed, None]), composite)


def provider(result: Any, name: str = "bucket") -> Any:
    return result.composed[name].body["spec"]["forProvider"]


@pytest.mark.parametrize(
    ("policy", "want"),
    [
        # mergo without override still fills empty targets ("", 0, false, [], {}) and keeps a non-empty array
        (
            "MergeObjects",
            {"keep": "old", "empty": "filled", "zero": 5, "list": [1], "deep": {"x": 1, "y": 2}, "new": 1},
        ),
        (
            "ForceMergeObjects",
            {"keep": "new", "empty": "filled", "zero": 5, "list": [2], "deep": {"x": 9, "y": 2}, "new": 1},
        ),
        (
            "MergeObjectsAppendArrays",
            {"keep": "old", "empty": "filled", "zero": 5, "list": [1, 2], "deep": {"x": 1, "y": 2}, "new": 1},
        ),
        (
            "ForceMergeObjectsAppendArrays",
            {"keep": "new", "empty": "filled", "zero": 5, "list": [1, 2], "deep": {"x": 9, "y": 2}, "new": 1},
        ),
        ("Replace", {"keep": "new", "empty": "filled", "zero": 5, "list": [2], "deep": {"x": 9, "y": 2}, "new": 1}),
    ],
)
def test_to_field_path_policies(policy: str, want: dict[str, Any]) -> None:
    # GIVEN a base object and an XR object WHEN patched with each toFieldPath policy THEN mergo's semantics
    base = {"keep": "old", "empty": "", "zero": 0, "list": [1], "deep": {"x": 1}}
    source = {"keep": "new", "empty": "filled", "zero": 5, "list": [2], "deep": {"x": 9, "y": 2}, "new": 1}
    template = bucket(
        {
            "fromFieldPath": "spec.settings",
            "toFieldPath": "spec.forProvider.settings",
            "policy": {"toFieldPath": policy},
        }
    )
    template["base"]["spec"]["forProvider"]["settings"] = base
    result = run([template], xr(settings=source))
    assert provider(result)["settings"] == want


def test_deprecated_policies_are_aliases() -> None:
    # GIVEN MergeObject and AppendArray WHEN patched THEN as MergeObjects and ForceMergeObjectsAppendArrays
    for policy, want in (("MergeObject", {"a": "old", "l": [1]}), ("AppendArray", {"a": "new", "l": [1, 2]})):
        template = bucket(
            {"fromFieldPath": "spec.v", "toFieldPath": "spec.forProvider.v", "policy": {"toFieldPath": policy}}
        )
        template["base"]["spec"]["forProvider"]["v"] = {"a": "old", "l": [1]}
        assert provider(run([template], xr(v={"a": "new", "l": [2]})))["v"] == want


def test_wildcard_to_field_path_with_merge_policy() -> None:
    # GIVEN upstream's ValidToFieldPathWithWildcardsAndMergePolicy WHEN patched THEN each element gets the items once
    template = bucket(
        {
            "fromFieldPath": "spec.parameters.allowedGroups",
            "toFieldPath": "spec.forProvider.accessRules[*].allowedGroups",
            "policy": {"toFieldPath": "ForceMergeObjectsAppendArrays"},
        }
    )
    template["base"]["spec"]["forProvider"]["accessRules"] = [
        {"action": "Allow", "destination": "e1", "allowedGroups": [12345678]},
        {"action": "Allow", "destination": "e2", "allowedGroups": [12345678]},
    ]
    result = run([template], xr(parameters={"allowedGroups": [12345678, 7891234]}))
    assert [rule["allowedGroups"] for rule in provider(result)["accessRules"]] == [
        [12345678, 7891234],
        [12345678, 7891234],
    ]
    assert expand_wildcards({"a": [1, 2]}, parse("a[*]")) == [("a", 0), ("a", 1)]


def test_wildcard_without_elements_is_fatal() -> None:
    # GIVEN a [*] toFieldPath with nothing to expand WHEN rendered THEN "cannot expand ToFieldPath" is fatal
    template = bucket({"fromFieldPath": "spec.v", "toFieldPath": "spec.forProvider.rules[*].v"})
    result = run([template], xr(v=1))
    assert result.failure is not None
    assert result.failure.message == (
        'cannot render composed resource "bucket" "FromCompositeFieldPath" patch at index 0: '
        "cannot expand ToFieldPath spec.forProvider.rules[*].v"
    )


def test_from_composite_field_path_and_defaults() -> None:
    # GIVEN a patch without type and without toFieldPath WHEN rendered THEN FromCompositeFieldPath to the same path
    template = bucket({"fromFieldPath": "spec.forProvider.region"})
    result = run([template], xr(forProvider={"region": "eu-west-1"}))
    assert provider(result) == {"region": "eu-west-1"}


def test_optional_patch_with_absent_source_is_skipped() -> None:
    # GIVEN an Optional patch (the default) whose source is absent WHEN rendered THEN the patch is skipped
    template = bucket(
        {"fromFieldPath": "spec.missing", "toFieldPath": "spec.forProvider.a"},
        {"fromFieldPath": "spec.region", "toFieldPath": "spec.forProvider.region"},
    )
    result = run([template], xr(region="eu"))
    assert provider(result) == {"region": "eu"}
    assert result.withheld == {}


def test_required_patch_with_absent_source_withholds_a_new_resource() -> None:
    # GIVEN a Required patch whose source the XR never has WHEN rendered THEN the resource is never composed
    template = bucket(
        {"fromFieldPath": "spec.missing", "toFieldPath": "spec.forProvider.a", "policy": {"fromFieldPath": "Required"}}
    )
    result = run([template, bucket(name="other")], xr())
    assert list(result.composed) == ["other"]
    assert result.withheld["bucket"].patch.from_path == "spec.missing"


def test_required_source_from_status_composes_once_written() -> None:
    # GIVEN a resource that needs status.arn, which another resource's ToCompositeFieldPath writes
    # WHEN rendered to the fixed point THEN both are composed, the value unknown offline
    writer = bucket(
        {"type": "ToCompositeFieldPath", "fromFieldPath": "status.atProvider.arn", "toFieldPath": "status.arn"}
    )
    reader = bucket(
        {"fromFieldPath": "status.arn", "toFieldPath": "spec.forProvider.arn", "policy": {"fromFieldPath": "Required"}},
        name="policy",
    )
    result = run([writer, reader], xr())
    assert list(result.composed) == ["bucket", "policy"]
    assert isinstance(provider(result, "policy")["arn"], Unknown)
    assert isinstance(result.xr["status"]["arn"], Unknown)
    assert result.converged and result.passes == 4


def test_combine_from_composite_and_missing_variable() -> None:
    # GIVEN a combine WHEN all variables exist THEN formatted; WHEN one is absent THEN the patch is skipped
    patch = {
        "type": "CombineFromComposite",
        "combine": {
            "variables": [{"fromFieldPath": "metadata.name"}, {"fromFieldPath": "spec.zone"}],
            "strategy": "string",
            "string": {"fmt": "%s-%s"},
        },
        "toFieldPath": "spec.forProvider.name",
    }
    assert provider(run([bucket(patch)], xr(zone="a")))["name"] == "demo-a"
    assert provider(run([bucket(patch)], xr())) == {}


def test_patch_sets_are_expanded_in_place() -> None:
    # GIVEN a PatchSet referenced between two patches WHEN rendered THEN its patches run at that position
    patch_sets = [
        {"name": "region", "patches": [{"fromFieldPath": "spec.region", "toFieldPath": "spec.forProvider.v"}]}
    ]
    template = bucket(
        {"fromFieldPath": "spec.first", "toFieldPath": "spec.forProvider.v"},
        {"type": "PatchSet", "patchSetName": "region"},
    )
    result = run([template], xr(first="first", region="eu"), patchSets=patch_sets)
    assert provider(result)["v"] == "eu"
    patch = result.composed["bucket"].applied[-1][0]
    assert patch.location == (*INPUT, "patchSets", 0, "patches", 0)
    assert patch.where == 'patch 1 (PatchSet "region")'
    assert patch.index == 1


def test_to_composite_runs_only_once_the_resource_exists() -> None:
    # GIVEN a ToCompositeFieldPath patch from a spec field the base sets WHEN rendered THEN the XR gets it
    template = bucket(
        {"type": "ToCompositeFieldPath", "fromFieldPath": "spec.forProvider.name", "toFieldPath": "status.name"}
    )
    template["base"]["spec"]["forProvider"]["name"] = "fixed"
    result = run([template], xr())
    assert result.xr["status"] == {"name": "fixed"}


def test_environment_patches() -> None:
    # GIVEN patches to and from the environment WHEN rendered THEN values flow XR -> environment -> composed
    result = run(
        [
            bucket(
                {"type": "FromEnvironmentFieldPath", "fromFieldPath": "tier", "toFieldPath": "spec.forProvider.tier"},
                {"type": "FromEnvironmentFieldPath", "fromFieldPath": "absent", "toFieldPath": "spec.forProvider.x"},
            )
        ],
        xr(tier="gold"),
        environment={
            "patches": [{"type": "ToEnvironmentFieldPath", "fromFieldPath": "spec.tier", "toFieldPath": "tier"}]
        },
    )
    assert provider(result) == {"tier": "gold"}


def test_required_environment_patch_with_absent_source_is_fatal() -> None:
    # GIVEN a Required environment patch whose source is absent WHEN rendered THEN fatal, unlike a resource patch
    result = run(
        [bucket()],
        xr(),
        environment={
            "patches": [{"fromFieldPath": "spec.tier", "toFieldPath": "tier", "policy": {"fromFieldPath": "Required"}}]
        },
    )
    assert result.failure is not None
    assert result.failure.message.startswith('cannot apply the "FromCompositeFieldPath" environment patch at index 0:')


def test_failing_transform_is_fatal_for_the_xr() -> None:
    # GIVEN a map transform without the XR's key WHEN rendered THEN nothing is composed, upstream's message
    template = bucket(
        {
            "fromFieldPath": "spec.size",
            "toFieldPath": "spec.forProvider.size",
            "transforms": [{"type": "map", "map": {"S": "small"}}],
        }
    )
    result = run([template], xr(size="M"))
    assert result.composed == {}
    assert result.failure is not None
    assert result.failure.location == (*INPUT, "resources", 0, "patches", 0)
    assert result.failure.message == (
        'cannot render composed resource "bucket" "FromCompositeFieldPath" patch at index 0: '
        "transform at index 0 returned error: map transform could not resolve: key M is not found in map"
    )


def test_composed_metadata_crossplane_adds() -> None:
    # GIVEN a base without a name WHEN rendered THEN Crossplane's generateName, namespace, annotation and label
    result = run([bucket()], xr())
    assert result.composed["bucket"].body["metadata"] == {
        "generateName": "demo-",
        "namespace": "team",
        "annotations": {"crossplane.io/composition-resource-name": "bucket"},
        "labels": {"crossplane.io/composite": "demo"},
    }


def test_connection_secret_of_a_v2_xr() -> None:
    # GIVEN connection details and writeConnectionSecretToRef patches WHEN rendered THEN a Secret is composed
    template = bucket(
        connectionDetails=[
            {"name": "value", "type": "FromConnectionSecretKey", "fromConnectionSecretKey": "kubeconfig"},
            {"name": "port", "type": "FromValue", "value": "443"},
        ]
    )
    result = run(
        [template],
        xr(secretName="creds"),
        writeConnectionSecretToRef={"patches": [{"fromFieldPath": "spec.secretName", "toFieldPath": "name"}]},
    )
    secret = result.composed["demo-connection-secret"].body
    assert secret["metadata"]["name"] == "creds"
    assert secret["metadata"]["namespace"] == "team"
    assert secret["type"] == "connection.crossplane.io/v1alpha1"
    assert secret["data"]["port"] == "NDQz"
    assert isinstance(secret["data"]["value"], Unknown)


def test_connection_secret_default_name() -> None:
    # GIVEN no reference WHEN a connection detail exists THEN the Secret is <xr>-connection
    template = bucket(connectionDetails=[{"name": "port", "type": "FromValue", "value": "443"}])
    result = run([template], xr())
    assert result.composed["demo-connection-secret"].body["metadata"]["name"] == "demo-connection"


def test_a_later_step_patches_what_an_earlier_produced() -> None:
    # GIVEN two P&T steps, the second without a base WHEN rendered THEN it patches the first step's resource
    first = read_resources({"resources": [bucket()]}, INPUT)
    second = read_resources(
        {
            "resources": [
                {
                    "name": "bucket",
                    "patches": [{"fromFieldPath": "spec.region", "toFieldPath": "spec.forProvider.region"}],
                }
            ]
        },
        ("spec", "pipeline", 1, "input"),
    )
    result = render(FunctionPipeline([first, second]), xr(region="eu"))
    assert provider(result) == {"region": "eu"}


def problems(data: dict[str, Any]) -> list[tuple[Any, str, bool]]:
    return [
        (problem.location[len(INPUT) :], problem.message, problem.fatal)
        for problem in read_resources(data, INPUT).problems
    ]


def test_unknown_input_field_is_ignored_by_the_function() -> None:
    # GIVEN a misspelled toFieldPath WHEN read THEN a problem the render survives (Go ignores unknown fields)
    data = {"resources": [bucket({"fromFieldPath": "spec.a", "toFieldPaht": "spec.forProvider.a"})]}
    assert problems(data) == [
        (
            ("resources", 0, "patches", 0, "toFieldPaht"),
            'unknown field "toFieldPaht" (did you mean "toFieldPath"?): the function ignores it',
            False,
        )
    ]


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (
            {"type": "FromCompositeFieldPath"},
            "resources[0].patches[0].fromFieldPath: Required value: fromFieldPath must be set for patch type "
            "FromCompositeFieldPath",
        ),
        (
            {"type": "PatchSet"},
            "resources[0].patches[0].patchSetName: Required value: patchSetName must be set for patch type PatchSet",
        ),
        (
            {
                "type": "CombineFromComposite",
                "toFieldPath": "a",
                "combine": {"variables": [], "strategy": "string", "string": {"fmt": "x"}},
            },
            "resources[0].patches[0].combine.variables: Required value: at least one variable must be provided",
        ),
        (
            {"fromFieldPath": "a", "transforms": [{"type": "string", "string": {"fmt": "%s"}}]},
            "resources[0].patches[0].transforms[0].string.type: Required value: string transform type is required",
        ),
        (
            {"fromFieldPath": "a", "transforms": [{"type": "math", "math": {"type": "Multiply"}}]},
            "resources[0].patches[0].transforms[0].math.multiply: Required value: must specify a value if a multiply "
            "math transform is specified",
        ),
    ],
)
def test_validate_resources_errors_are_fatal(patch: dict[str, Any], message: str) -> None:
    # GIVEN input ValidateResources refuses WHEN read THEN one fatal problem with upstream's message
    assert problems({"resources": [bucket(patch)]}) == [((), f"invalid Function input: {message}", True)]


def test_unknown_patch_set_is_fatal() -> None:
    data = {"resources": [bucket({"type": "PatchSet", "patchSetName": "nope"})]}
    assert problems(data) == [
        (
            ("resources", 0, "patches", 0, "patchSetName"),
            "cannot resolve PatchSets: cannot find PatchSet by name nope",
            True,
        )
    ]


def test_wrong_type_in_input_is_fatal() -> None:
    # GIVEN a string where the Go type is an integer WHEN read THEN decoding fails: fatal
    data = {
        "resources": [
            bucket(
                {"fromFieldPath": "a", "transforms": [{"type": "math", "math": {"type": "Multiply", "multiply": "2"}}]}
            )
        ]
    }
    assert problems(data) == [
        (
            ("resources", 0, "patches", 0, "transforms", 0, "math", "multiply"),
            'cannot get Function input: expected integer, got string "2"',
            True,
        )
    ]
