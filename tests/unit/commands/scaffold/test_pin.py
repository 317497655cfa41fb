"""fluxplane.commands.scaffold.pin: the requirement a new repository pins fluxplane with, from where it was installed
(PEP 610's direct_url.json, faked here as pip writes it for each kind of origin)."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from fluxplane.commands.scaffold.pin import Pin, installed_pin, pin_of
from tests.support.distribution import installed_from

SHA = "4f8b7c2e9a1d3b5c7e9f0a2b4c6d8e0f1a3b5c7d"


def _pin(origin: dict[str, Any] | None) -> Pin:
    return pin_of(None if origin is None else json.dumps(origin), "1.2.3")


def test_from_a_package_index_it_pins_the_version() -> None:
    assert _pin(None) == Pin("fluxplane==1.2.3")


@pytest.mark.parametrize(
    ("origin", "requirement"),
    [
        (
            {"url": "https://github.com/example-org/fluxplane.git", "vcs_info": {"vcs": "git", "commit_id": SHA}},
            f"fluxplane @ git+https://github.com/example-org/fluxplane.git@{SHA}",
        ),
        (
            {
                "url": "ssh://git@github.com/example-org/fluxplane.git",
                "vcs_info": {"vcs": "git", "requested_revision": "v1.2.3", "commit_id": SHA},
            },
            f"fluxplane @ git+ssh://git@github.com/example-org/fluxplane.git@{SHA}",
        ),
        (
            {
                "url": "https://${GITHUB_TOKEN}@github.com/example-org/mono.git",
                "vcs_info": {"vcs": "git", "commit_id": SHA},
                "subdirectory": "tools/fluxplane",
            },
            f"fluxplane @ git+https://${{GITHUB_TOKEN}}@github.com/example-org/mono.git@{SHA}"
            "#subdirectory=tools/fluxplane",
        ),
    ],
    ids=["https", "ssh", "subdirectory, token from the environment"],
)
def test_from_a_git_url_it_pins_the_commit_that_was_installed(origin: dict[str, Any], requirement: str) -> None:
    assert _pin(origin) == Pin(requirement)


def test_credentials_in_a_recorded_url_are_never_written() -> None:
    origin = {
        "url": "https://someone:s3cret@git.example.com/fluxplane.git",
        "vcs_info": {"vcs": "git", "commit_id": SHA},
    }
    pin = _pin(origin)
    assert pin == Pin(f"fluxplane @ git+https://git.example.com/fluxplane.git@{SHA}")
    assert "s3cret" not in repr(pin) and "someone" not in repr(pin)


def test_from_a_wheel_at_an_https_url_it_pins_the_url_and_its_hash() -> None:
    url = "https://github.com/example-org/fluxplane/releases/download/v1.2.3/fluxplane-1.2.3-py3-none-any.whl"
    assert _pin({"url": url, "archive_info": {"hashes": {"sha256": "ab12"}}}) == Pin(f"fluxplane @ {url}#sha256=ab12")
    assert _pin({"url": url, "archive_info": {"hash": "sha256=cd34"}}) == Pin(f"fluxplane @ {url}#sha256=cd34")
    assert _pin({"url": url, "archive_info": {}}) == Pin(f"fluxplane @ {url}")


def test_from_a_wheel_on_this_machine_it_pins_the_version_found_beside_it() -> None:
    # GIVEN fluxplane installed from a wheel file WHEN pinned
    pin = _pin({"url": "file:///home/me/wheels/fluxplane-1.2.3-py3-none-any.whl", "archive_info": {}})
    # THEN the version, with the wheel's folder for pip to look in, and a note that this holds here only
    assert (pin.requirement, pin.find_links) == ("fluxplane==1.2.3", "/home/me/wheels")
    assert pin.note == (
        "fluxplane was installed from /home/me/wheels/fluxplane-1.2.3-py3-none-any.whl: pip finds it there with "
        "--find-links on this machine, and elsewhere (CI, a colleague) installs fluxplane==1.2.3 from the package index"
    )


@pytest.mark.parametrize("editable", [True, False], ids=["editable", "not editable"])
def test_from_a_folder_it_pins_the_folder_and_says_it_is_this_machine_s(editable: bool) -> None:
    pin = _pin({"url": "file:///home/me/src/fluxplane", "dir_info": {"editable": editable}})
    assert (pin.requirement, pin.find_links) == ("fluxplane @ file:///home/me/src/fluxplane", None)
    assert pin.note is not None and pin.note.startswith(
        "fluxplane was installed from the folder /home/me/src/fluxplane: the pin installs on this machine only"
    )


@pytest.mark.parametrize("text", ["{", "[]", '{"dir_info": {}}', '{"url": "ftp://x/y", "archive_info": {}}'])
def test_a_record_it_cannot_read_pins_the_version(text: str) -> None:
    assert pin_of(text, "1.2.3") == Pin("fluxplane==1.2.3")


def test_the_installed_distribution_s_record_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    installed_from(monkeypatch, tmp_path, {"url": "https://example.com/fluxplane.git", "vcs_info": {"vcs": "git"}})
    assert installed_pin("0+unknown") == Pin("fluxplane @ git+https://example.com/fluxplane.git")
    installed_from(monkeypatch, tmp_path / "index", None, version="2.0.0")
    assert installed_pin("0+unknown") == Pin("fluxplane==2.0.0")


def test_without_an_installed_distribution_it_pins_the_version(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> metadata.Distribution:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", missing)
    assert installed_pin("0+unknown") == Pin("fluxplane==0+unknown")
