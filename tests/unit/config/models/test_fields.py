"""Tests for fluxplane.config.models.fields: the Go durations, DNS labels and the frozen model base."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.config import models


def test_models_are_frozen() -> None:
    # GIVEN a validated model WHEN a field is assigned THEN pydantic refuses
    group = models.NodeGroup(name="a")
    with pytest.raises(ValidationError, match="Instance is frozen"):
        group.min_size = 1  # type: ignore[misc]


@pytest.mark.parametrize("field", ["interval", "retryInterval", "timeout"])
@pytest.mark.parametrize("value", ["0s", "0m0s", "0h", "0.0000001ms"])
def test_flux_durations_must_be_above_zero(field: str, value: str) -> None:
    # GIVEN a zero duration (Go truncates below a nanosecond) WHEN validated THEN it is refused, shown as found
    assert _one_error(models.FluxSettings, {field: value}) == (
        (field,),
        f'expected a duration above zero such as 30s, 5m or 1h30m, got "{value}": at zero Flux reconciles '
        "without pause",
    )


def test_flux_durations_must_fit_go() -> None:
    # GIVEN the longest duration Go holds WHEN validated THEN it is kept; a nanosecond more is refused
    assert models.FluxSettings.model_validate({"timeout": "2562047h47m16.854775807s"}).timeout
    assert _one_error(models.FluxSettings, {"timeout": "2562047h47m16.854775808s"}) == (
        ("timeout",),
        'expected a duration Go can hold (at most 2562047h47m16s), got "2562047h47m16.854775808s"',
    )


@pytest.mark.parametrize(
    ("value", "nanoseconds"), [("1h30m", 5400 * 10**9), ("1.5s", 1_500_000_000), ("2ms", 2_000_000)]
)
def test_duration_ns_counts_as_go_does(value: str, nanoseconds: int) -> None:
    assert models.duration_ns(value) == nanoseconds


# -- is_dns_label --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("staging", True),
        ("a", True),
        ("prod-2", True),
        ("0a", True),
        ("a" * 63, True),
        ("a" * 64, False),
        ("Staging", False),
        ("my_env", False),
        ("-x", False),
        ("x-", False),
        ("a.b", False),
        ("a/b", False),
        ("", False),
    ],
)
def test_is_dns_label(value: str, expected: bool) -> None:
    # GIVEN a string WHEN checked THEN only DNS-1123 labels of at most 63 characters pass
    assert models.is_dns_label(value) is expected


def _one_error(model: type[models.Model], data: Any) -> tuple[tuple[str | int, ...], str]:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)
    (error,) = caught.value.errors(include_url=False)
    return tuple(error["loc"]), str(error["ctx"]["error"]) if "ctx" in error else error["msg"]
