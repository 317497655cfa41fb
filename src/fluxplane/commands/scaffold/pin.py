"""The requirement a new fleet repository pins fluxplane with: this fluxplane, from where it was installed.

pip records where it installed a distribution from in its ``direct_url.json`` (PEP 610, the "Recording the
Direct URL Origin of installed distributions" specification); a distribution installed from a package index
has none. The pin follows it, so that ``pip install -e .`` in the new repository installs this same fluxplane:

* from an index: ``fluxplane==X``;
* from a Git URL: ``fluxplane @ git+URL@COMMIT``, the commit that was installed (and its subdirectory);
* from an archive at an http(s) URL (a GitHub release's wheel): ``fluxplane @ URL``, with its hash when recorded;
* from a wheel or an sdist on this machine: ``fluxplane==X``, found there with ``--find-links FOLDER``: a path
  of this machine in pyproject.toml would break the install everywhere else, and the version does not once
  fluxplane X is on the index;
* from a folder (a checkout, editable or not): ``fluxplane @ file:///FOLDER``, which installs on this machine
  only: the note says so.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

DISTRIBUTION = "fluxplane"
#: An environment variable in a URL's user part, which pip expands when it installs.
_PLACEHOLDER = re.compile(r"\$\{[A-Za-z0-9_]+\}")


@dataclass(frozen=True)
class Pin:
    """How a new repository installs this fluxplane."""

    #: The PEP 508 requirement for pyproject.toml's dependencies.
    requirement: str
    #: A folder pip must also look in (``--find-links``): where the wheel or sdist installed here lies.
    find_links: str | None = None
    #: What holds on this machine only, for the user to know before pushing the repository.
    note: str | None = None


def installed_pin(fallback: str) -> Pin:
    """The pin of the installed fluxplane distribution; with none installed (a source tree), of version
    ``fallback``."""
    try:
        distribution = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return Pin(f"{DISTRIBUTION}=={fallback}")
    return pin_of(distribution.read_text("direct_url.json"), distribution.version)


def pin_of(direct_url: str | None, version: str) -> Pin:
    """The pin of fluxplane ``version`` installed from where ``direct_url`` (direct_url.json's text, None when
    there is none) says."""
    index = Pin(f"{DISTRIBUTION}=={version}")
    try:
        origin = json.loads(direct_url) if direct_url else None
    except json.JSONDecodeError:
        origin = None
    if not isinstance(origin, dict) or not isinstance(origin.get("url"), str):
        return index
    url = _without_credentials(origin["url"])
    subdirectory = origin.get("subdirectory")
    fragment = f"#subdirectory={subdirectory}" if isinstance(subdirectory, str) and subdirectory else ""
    vcs, archive = origin.get("vcs_info"), origin.get("archive_info")
    if isinstance(vcs, dict) and isinstance(vcs.get("vcs"), str):
        commit = vcs.get("commit_id")
        at = f"@{commit}" if isinstance(commit, str) and commit else ""
        return Pin(f"{DISTRIBUTION} @ {vcs['vcs']}+{url}{at}{fragment}")
    scheme = urlsplit(url).scheme
    if isinstance(archive, dict):
        if scheme in ("http", "https"):
            return Pin(f"{DISTRIBUTION} @ {url}{_hash(archive)}")
        if scheme == "file":
            path = _local_path(url)
            return Pin(
                index.requirement,
                find_links=str(path.parent),
                note=f"fluxplane was installed from {path}: pip finds it there with --find-links on this machine, "
                f"and elsewhere (CI, a colleague) installs {index.requirement} from the package index",
            )
        return index
    if scheme == "file":
        return Pin(
            f"{DISTRIBUTION} @ {url}{fragment}",
            note=f"fluxplane was installed from the folder {_local_path(url)}: the pin installs "
            f"on this machine only; for CI and colleagues pin a release ({index.requirement} once it is on the "
            "package index) or a Git URL in pyproject.toml",
        )
    return index


def _local_path(url: str) -> Path:
    """The path a file URL names on this machine."""
    # Imported here: urllib.request loads http.client and ssl, which every command would load with the CLI
    from urllib.request import url2pathname

    return Path(url2pathname(urlsplit(url).path))


def _without_credentials(url: str) -> str:
    """``url`` without credentials. PEP 610 allows only ``git@`` and environment variables (``${TOKEN}``) in a
    recorded URL; anything else there would be a secret, which init never writes out."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    userinfo, _, hostport = parts.netloc.rpartition("@")
    kept = userinfo == "git" or all(_PLACEHOLDER.fullmatch(part) for part in userinfo.split(":"))
    return url if kept else urlunsplit(parts._replace(netloc=hostport))


def _hash(archive: dict[str, object]) -> str:
    """The URL fragment pinning an archive's recorded hash (``#sha256=...``), or ""."""
    hashes = archive.get("hashes")
    if isinstance(hashes, dict) and hashes:
        name = "sha256" if "sha256" in hashes else sorted(hashes)[0]
        return f"#{name}={hashes[name]}"
    legacy = archive.get("hash")
    if isinstance(legacy, str) and "=" in legacy:
        return f"#{legacy}"
    return ""
