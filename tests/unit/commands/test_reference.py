"""fluxplane.commands.reference: the reference, printed as the library writes it."""

from __future__ import annotations

import pytest

from fluxplane.commands import reference
from fluxplane.config.reference import markdown
from tests.support.commands import parse


def test_run_prints_the_reference(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse(reference, "reference")
    assert reference.run(args) == 0
    assert capsys.readouterr() == (markdown(), "")
    assert (reference.LOCKS_PROJECT, reference.stopped(args)) == (False, "nothing written")
