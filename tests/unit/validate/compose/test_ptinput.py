"""Tests for fluxplane.validate.compose.ptinput: function-patch-and-transform's ``Resources`` input, read and checked,
each problem located in the Composition and marked fatal when the function would stop on it."""

from __future__ import annotations

from typing import Any

from fluxplane.validate.compose.ptinput import Problem, read_resources

#: Where a step's input is in its Composition.
INPUT = ("spec", "pipeline", 0, "input")
BASE = {"apiVersion": "s3.aws.m.upbound.io/v1beta1", "kind": "Bucket", "spec": {"forProvider": {}}}
REGION = {"fromFieldPath": "spec.region", "toFieldPath": "spec.forProvider.region"}


def resources(*entries: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources", "resources": list(entries), **extra}


def test_a_patch_set_is_expanded_in_place_and_its_patches_located_where_they_are_written() -> None:
    # GIVEN a resource whose first patch is a patch set, then a patch of its own
    tags = {"type": "FromCompositeFieldPath", "fromFieldPath": "spec.tags", "toFieldPath": "spec.forProvider.tags"}
    data = resources(
        {"name": "bucket", "base": BASE, "patches": [{"type": "PatchSet", "patchSetName": "common"}, tags]},
        patchSets=[{"name": "common", "patches": [REGION]}],
    )

    # WHEN read
    read = read_resources(data, INPUT)

    # THEN no problem; the set's patch comes first, located in the set and reached through the resource's patch
    assert read.problems == []
    (template,) = read.templates
    assert template.name == "bucket"
    first, second = template.patches
    assert (first.type, first.raw, first.location, first.via, first.patch_set) == (
        "FromCompositeFieldPath",
        REGION,
        (*INPUT, "patchSets", 0, "patches", 0),
        (*INPUT, "resources", 0, "patches", 0),
        "common",
    )
    assert (second.location, second.index) == ((*INPUT, "resources", 0, "patches", 1), 1)


def test_a_patch_set_that_does_not_exist_stops_the_function() -> None:
    data = resources({"name": "bucket", "base": BASE, "patches": [{"type": "PatchSet", "patchSetName": "nope"}]})
    assert read_resources(data, INPUT).problems == [
        Problem(
            (*INPUT, "resources", 0, "patches", 0, "patchSetName"),
            "cannot resolve PatchSets: cannot find PatchSet by name nope",
            True,
        )
    ]


def test_an_unknown_field_is_named_but_not_fatal_the_function_ignores_it() -> None:
    read = read_resources(resources({"name": "bucket", "base": BASE, "colour": "red"}), INPUT)
    assert read.problems == [
        Problem(
            (*INPUT, "resources", 0, "colour"),
            'unknown field "colour" (allowed: base, connectionDetails, name, patches, readinessChecks): the function '
            "ignores it",
            False,
        )
    ]
    assert read.fatal is None


def test_an_input_that_is_no_object_stops_the_function() -> None:
    read = read_resources(["not", "an", "object"], INPUT)
    assert read.fatal == Problem(INPUT, "cannot get Function input: expected an object", True)
    assert read.templates == []
