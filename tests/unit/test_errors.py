"""The errors fluxplane raises for bad input (fluxplane.errors): one line per problem, all reported at once."""

from __future__ import annotations

import pytest

from fluxplane.errors import ConfigError, ConstructError, FluxplaneError, OutputError, PackError, TreeError


def test_an_error_keeps_each_problem_as_a_line_and_its_message_is_all_of_them() -> None:
    # GIVEN two problems WHEN raised together THEN both are kept in order, and the message is one line each
    error = ConfigError(["environments/a.yaml: x: bad", "environments/b.yaml: y: bad"])
    assert error.problems == ("environments/a.yaml: x: bad", "environments/b.yaml: y: bad")
    assert str(error) == "environments/a.yaml: x: bad\nenvironments/b.yaml: y: bad"


def test_one_problem_may_be_given_as_a_string() -> None:
    assert PackError("unknown pack 'x'").problems == ("unknown pack 'x'",)


def test_an_error_without_a_problem_is_a_bug() -> None:
    with pytest.raises(ValueError, match=r"^a FluxplaneError needs at least one problem$"):
        TreeError([])


@pytest.mark.parametrize("kind", [ConfigError, ConstructError, TreeError, PackError, OutputError])
def test_every_error_of_bad_input_is_a_fluxplane_error(kind: type[FluxplaneError]) -> None:
    # the CLI catches FluxplaneError alone, and exits 2 for it
    assert issubclass(kind, FluxplaneError)
