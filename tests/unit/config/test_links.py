"""Tests for fluxplane.config.links: a symbolic link is followed only within environments/, and is checked
before any file is read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fluxplane.config.links import check_links
from fluxplane.config.loader import load_fleet
from fluxplane.errors import ConfigError
from fluxplane.system.files import entries_below
from tests.conftest import FleetWriter
from tests.support.sealing import put


def problems_of(root: Path) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        load_fleet(root)
    return list(exc.value.problems)


#: What a file outside the definition might hold; no message may show it.
SECRET_LINE = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"


def link_out(root: Path, link: str, kind: str) -> Path:
    """Make ``environments/<link>`` a symbolic link to a file or folder beside the project holding SECRET_LINE.

    A linked folder holds the secret where the loader reads a file below it: ``orders.yaml`` (an app) and
    ``flux-system/flux-system.yaml`` (a cluster's sealed secret)."""
    target = root.parent / "outside" / link.replace("/", "-")
    if kind == "file":
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(SECRET_LINE)
    else:
        for inner in ("orders.yaml", "flux-system/flux-system.yaml"):
            (target / inner).parent.mkdir(parents=True, exist_ok=True)
            (target / inner).write_text(SECRET_LINE)
    path = root / "environments" / link
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    path.symlink_to(target, target_is_directory=kind == "folder")
    return target


@pytest.mark.parametrize(
    ("link", "kind"),
    [
        ("base.yaml", "file"),
        ("staging.yaml", "file"),
        ("allocations.yaml", "file"),
        ("apps/orders.yaml", "file"),
        ("secrets/staging-1/flux-system/flux-system.yaml", "file"),
        ("secrets/staging-1/flux-system/.flux-system.yaml.tmp", "file"),
        ("sealing-cert.pem", "file"),
        ("apps", "folder"),
        ("secrets/staging-1", "folder"),
    ],
)
def test_a_link_out_of_the_definition_is_refused_and_never_read(write_fleet: FleetWriter, link: str, kind: str) -> None:
    # GIVEN a file or folder of environments/ that is a symbolic link to one beside the project
    root = write_fleet()
    target = link_out(root, link, kind)

    # WHEN loaded THEN the link is named with where it leads, and nothing of what it leads to is shown
    problems = problems_of(root)
    assert problems == [
        f"environments/{link}: a symbolic link to a {kind} outside environments/ ({target}); fluxplane reads only "
        f"the definition's own files: replace the link with the {kind}"
    ]
    assert "AWS_SECRET_ACCESS_KEY" not in "\n".join(problems)


def test_a_link_to_a_file_of_the_project_outside_the_definition_is_refused(write_fleet: FleetWriter) -> None:
    # GIVEN an environment file linked to the checkout's Git configuration, which holds a token on CI
    root = write_fleet()
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text('[http]\n\textraheader = "AUTHORIZATION: basic c2VjcmV0"\n')
    (root / "environments" / "production.yaml").symlink_to("../.git/config")

    # WHEN loaded THEN it is refused: the definition is environments/, not the whole project
    problems = problems_of(root)
    assert problems == [
        "environments/production.yaml: a symbolic link to a file outside environments/ (../.git/config); "
        "fluxplane reads only the definition's own files: replace the link with the file"
    ]
    assert "c2VjcmV0" not in "\n".join(problems)


def test_an_environments_folder_that_is_a_link_is_refused(tmp_path: Path, write_fleet: FleetWriter) -> None:
    # GIVEN environments/ as a link to a definition kept elsewhere
    elsewhere = write_fleet(root=tmp_path / "elsewhere")
    project = tmp_path / "project"
    project.mkdir()
    (project / "environments").symlink_to(elsewhere / "environments")

    # WHEN loaded THEN the link is refused: everything below it would lead out of the project
    assert problems_of(project) == [
        f"environments: a symbolic link (to {elsewhere / 'environments'}); fluxplane reads the definition only "
        "from a folder of the project: replace the link with the folder"
    ]


def test_links_within_the_definition_are_read(write_fleet: FleetWriter) -> None:
    # GIVEN an environment file and a cluster's secrets folder that are links into environments/, one
    # relative and one absolute, and a link that loops back to environments/ itself
    root = write_fleet()
    env_dir = root / "environments"
    (env_dir / "shared").mkdir()
    (env_dir / "staging.yaml").rename(env_dir / "shared" / "staging.yaml")
    (env_dir / "staging.yaml").symlink_to("shared/staging.yaml")
    (env_dir / "shared" / "staging-1").mkdir()
    (env_dir / "secrets").mkdir()
    (env_dir / "secrets" / "staging-1").symlink_to(env_dir / "shared" / "staging-1", target_is_directory=True)
    (env_dir / "shared" / "loop").symlink_to("..", target_is_directory=True)

    # WHEN loaded THEN they are read as the files they lead to
    fleet = load_fleet(root).fleet
    assert [cluster.name for cluster in fleet.clusters] == ["staging-1"]


def test_entries_below_gives_from_the_listing_check_links_took_what_it_lists_itself(write_fleet: FleetWriter) -> None:
    # GIVEN nested folders with a hidden file, links to a file and to a folder within the definition, and a cluster's
    # secrets folder that is a link (its folder listed by check_links under the path it was reached by first)
    root = write_fleet()
    env_dir = root / "environments"
    put(root, "staging-1/apps/db.yaml", "a: 1\n")
    put(root, "staging-1/apps/.db.yaml.swp", "")
    put(root, "staging-1/web/deep/tls.yaml", "a: 1\n")
    (env_dir / "secrets" / "staging-1" / "apps" / "again.yaml").symlink_to("db.yaml")
    (env_dir / "secrets" / "staging-1" / "web-too").symlink_to("web", target_is_directory=True)
    (env_dir / "shared" / "staging-2").mkdir(parents=True)
    (env_dir / "shared" / "staging-2" / "x.yaml").write_text("a: 1\n")
    (env_dir / "secrets" / "staging-2").symlink_to(env_dir / "shared" / "staging-2", target_is_directory=True)

    # WHEN check_links lists the definition
    listed = check_links(root)

    # THEN below every folder, entries_below gives from that listing the entries it lists without it
    for folder in ("secrets", "secrets/staging-1", "secrets/staging-2", "shared", "secrets/none"):
        path = os.fspath(env_dir / folder)
        expected = sorted((relative, entry.path) for relative, entry in entries_below(path))
        for given in (listed, {}):
            found = entries_below(path, listed=given)
            assert sorted((relative, entry.path) for relative, entry in found) == expected, folder
    assert os.fspath(env_dir / "secrets" / "staging-1" / "apps") in listed
