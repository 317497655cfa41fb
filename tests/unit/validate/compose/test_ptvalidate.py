"""Tests for fluxplane.validate.compose.ptvalidate: upstream's ValidateResources, first error only, in
upstream's words (function-patch-and-transform validate.go)."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.validate.compose.ptvalidate import validate_resources

BUCKET: dict[str, Any] = {"name": "bucket", "base": {}}
NESTED_SET = {"name": "p", "patches": [{"type": "PatchSet", "patchSetName": "q"}]}
BAD_REGEXP = {"type": "string", "string": {"type": "Regexp", "regexp": {"match": "("}}}


def test_valid_input_has_no_error() -> None:
    # GIVEN one named resource WHEN validated THEN nothing is wrong
    assert validate_resources({"resources": [BUCKET]}) is None


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({}, "resources: Required value: resources or environment patches are required"),
        ({"resources": [{"base": {}}]}, "resources[0].name: Required value: name is required"),
        # Upstream validates a PatchSet's patches on their own, so their paths start at the set.
        ({"patchSets": [{"patches": []}], "resources": [BUCKET]}, "name: Required value: name is required"),
        (
            {
                "patchSets": [{"name": "p", "patches": [{"type": "PatchSet", "patchSetName": "q"}]}],
                "resources": [BUCKET],
            },
            'patches[0].type: Invalid value: "PatchSet": patch type *v1beta1.PatchSetPatch does not support patch '
            "of type PatchSet",
        ),
        (
            {"resources": [{**BUCKET, "readinessChecks": [{"type": "Sometimes"}]}]},
            'resources[0].readinessChecks[0].type: Invalid value: "Sometimes": unknown readiness check type',
        ),
        (
            {"resources": [{**BUCKET, "connectionDetails": [{"type": "FromFieldPath", "name": "x"}]}]},
            "resources[0].connectionDetails[0].fromFieldPath: Required value: from field path connection detail "
            "requires a field path",
        ),
        (
            {"environment": {"patches": [{"type": "CombineToEnvironment"}]}},
            'environment.patches[0].type: Invalid value: "CombineToEnvironment": invalid environment patch type',
        ),
        (
            {
                "resources": [
                    {
                        **BUCKET,
                        "patches": [
                            {
                                "fromFieldPath": "a",
                                "transforms": [
                                    {"type": "string", "string": {"type": "Regexp", "regexp": {"match": "("}}}
                                ],
                            }
                        ],
                    }
                ]
            },
            'resources[0].patches[0].transforms[0].string.regexp.match: Invalid value: "(": invalid regexp',
        ),
    ],
)
def test_the_first_error_is_reported_as_upstream_words_it(data: dict[str, Any], error: str) -> None:
    # GIVEN input ValidateResources refuses WHEN validated THEN its first error, as a Kubernetes field.Error
    assert validate_resources(data) == error
