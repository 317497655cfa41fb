"""A third-party pack whose module does not import: one line naming the distribution, the entry point and
the error, exit 2; ``fluxplane --debug`` shows the traceback.

Each test installs a fake distribution: a ``*.dist-info`` folder with a ``fluxplane.packs`` entry point,
and the module it names, in a folder put on sys.path (or on PYTHONPATH for a child process), which is
how importlib.metadata finds an installed distribution.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path
from types import SimpleNamespace

import pytest

from fluxplane.cli import main
from fluxplane.errors import PackError
from fluxplane.packs import registry as registry_module
from fluxplane.packs.registry import ENTRY_POINT_GROUP, PackRegistry

#: A module's source, and the error its import raises as the line shows it.
BROKEN = {
    "import-error": (
        "import fluxplane_no_such_dependency\n",
        "ModuleNotFoundError: No module named 'fluxplane_no_such_dependency'",
    ),
    "syntax-error": ("PACK = Pack(\n", "SyntaxError: '(' was never closed (broken_pack.py, line 1)"),
    "exception": ("raise RuntimeError('needs AWS_REGION')\n", "RuntimeError: needs AWS_REGION"),
}


def install(site: Path, distribution: str, module: str, source: str, pack: str = "broken") -> None:
    """A distribution ``distribution`` whose entry point ``pack`` names ``module:PACK``."""
    info = site / f"{distribution.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{pack} = {module}:PACK\n")
    (site / f"{module}.py").write_text(source)


def line(error: str, distribution: str = "fluxplane-pack-broken", pack: str = "broken") -> str:
    return (
        f"pack {pack!r} of distribution {distribution!r} cannot be loaded: entry point "
        f"'{pack} = {pack}_pack:PACK' raised {error}; fix or uninstall that distribution "
        "(fluxplane --debug shows the traceback)"
    )


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


@pytest.mark.parametrize("case", BROKEN)
def test_a_pack_that_does_not_import_is_one_line(site: Path, case: str) -> None:
    # GIVEN an installed distribution whose pack module raises on import
    source, error = BROKEN[case]
    install(site, "fluxplane-pack-broken", "broken_pack", source)
    # WHEN the registry loads the entry points THEN it is one problem naming all three, the error attached
    with pytest.raises(PackError) as exc:
        PackRegistry.from_entry_points()
    assert exc.value.problems == (line(error),)
    assert type(exc.value.__cause__).__name__ == error.split(":")[0]


def test_every_broken_pack_is_reported(site: Path) -> None:
    # GIVEN two broken distributions WHEN loaded THEN both are reported, and --debug gets both errors
    install(site, "fluxplane-pack-broken", "broken_pack", BROKEN["exception"][0])
    install(site, "fluxplane-pack-other", "other_pack", BROKEN["import-error"][0], pack="other")
    with pytest.raises(PackError) as exc:
        PackRegistry.from_entry_points()
    assert exc.value.problems == (
        line(BROKEN["exception"][1]),
        line(BROKEN["import-error"][1], "fluxplane-pack-other", "other"),
    )
    assert isinstance(exc.value.__cause__, ExceptionGroup)
    assert len(exc.value.__cause__.exceptions) == 2


def test_a_built_in_pack_that_does_not_import_is_a_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN one of fluxplane's own packs that does not import WHEN loaded THEN the error is not bad input
    entry = EntryPoint("podinfo", "fluxplane.packs.no_such_module:PACK", ENTRY_POINT_GROUP)
    entry = entry._for(SimpleNamespace(name="fluxplane"))  # type: ignore[attr-defined]
    monkeypatch.setattr(registry_module, "entry_points", lambda group: [entry])
    with pytest.raises(ModuleNotFoundError):
        PackRegistry.from_entry_points()


def test_the_cli_prints_the_line_and_exits_2(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install(site, "fluxplane-pack-broken", "broken_pack", BROKEN["import-error"][0])
    assert main(["packs", "list"]) == 2
    assert capsys.readouterr() == ("", line(BROKEN["import-error"][1]) + "\n")


def test_debug_shows_the_traceback_of_the_import(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install(site, "fluxplane-pack-broken", "broken_pack", BROKEN["exception"][0])
    assert main(["--debug", "packs", "list"]) == 2
    stderr = capsys.readouterr().err
    assert stderr.startswith("Traceback (most recent call last):\n")
    assert f'{site / "broken_pack.py"}", line 1, in <module>' in stderr
    assert "RuntimeError: needs AWS_REGION" in stderr
    assert "The above exception was the direct cause of the following exception:" in stderr
    assert stderr.endswith(f"fluxplane.errors.PackError: {line(BROKEN['exception'][1])}\n")


def test_no_traceback_from_the_installed_command(site: Path) -> None:
    # GIVEN the broken distribution on the path of a fluxplane process
    install(site, "fluxplane-pack-broken", "broken_pack", BROKEN["syntax-error"][0])
    path = os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])
    # WHEN synth loads the packs THEN standard error is the one line
    done = subprocess.run(
        [sys.executable, "-m", "fluxplane", "--root", str(site), "synth", "--check"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (2, line(BROKEN["syntax-error"][1]) + "\n")
