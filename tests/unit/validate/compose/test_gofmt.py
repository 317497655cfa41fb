"""Tests for fluxplane.validate.compose.gofmt: Go's fmt verbs as Format transforms use them, against upstream
behaviour.

Expected values are upstream's: the test tables of crossplane-contrib/function-patch-and-transform
(``transforms_test.go``, ``patches_test.go``) and crossplane-runtime (``fieldpath/*_test.go``) where
they have the case, else what the Go code does (cited in each test).
"""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.validate.compose.gofmt import sprintf


@pytest.mark.parametrize(
    ("fmt", "args", "want"),
    [
        ("verycool%s", ["thing"], "verycoolthing"),  # transforms_test.go FmtString
        ("the largest %d", [8], "the largest 8"),  # transforms_test.go FmtInt
        ("%s", [3], "%!s(int64=3)"),
        ("%d", ["x"], "%!d(string=x)"),
        ("%s-%s", ["a"], "a-%!s(MISSING)"),
        ("static", ["a"], "static%!(EXTRA string=a)"),
        ("%[2]s-%[1]s", ["a", "b"], "b-a"),
        ("%v", [{"b": 1, "a": [1, "x", None]}], "map[a:[1 x <nil>] b:1]"),
        ("%s", [["a", 1]], "[a %!s(int64=1)]"),
        ("%v|%v|%v", [1.5, 1e6, 1e-5], "1.5|1e+06|1e-05"),
        ("%.2f|%05d|%-4s|%x|%q|%t", [3.14159, -42, "ab", 255, "a", True], '3.14|-0042|ab  |ff|"a"|true'),
        ("%s", [None], "%!s(<nil>)"),
        ("100%%", [], "100%"),
    ],
)
def test_go_sprintf(fmt: str, args: list[Any], want: str) -> None:
    # GIVEN a format and decoded JSON values WHEN formatted THEN as Go's fmt.Sprintf prints them
    assert sprintf(fmt, args) == want
