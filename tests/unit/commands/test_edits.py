"""fluxplane.commands.edits: a request in, the Edit it makes out (nothing written until carry_out), and what checking
it says."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxplane.commands.edits import AppRequest, carry_out, new_cluster, onboard_app
from fluxplane.errors import ConfigError
from tests.conftest import FleetWriter

APP = "environments/apps/shop.yaml"
REPO = "https://github.com/example-org/shop"


def test_onboard_app_from_a_request_makes_the_app_file(example_project: Path) -> None:
    # GIVEN a request for a new app on one cluster, with a release tag and a team
    app = AppRequest(
        name="shop",
        clusters=["staging-usw2"],
        repo=REPO,
        path="deploy",
        ref="v1.2.3",
        team="@example-org/shop",
    )

    # WHEN onboarded
    change = onboard_app(example_project, app)

    # THEN the Edit holds the new file, in the order the definition reads, and writes nothing yet
    assert change.files == {
        APP: 'team: "@example-org/shop"\n'
        "repository:\n"
        f"  url: {REPO}\n"
        "  ref:\n"
        "    tag: v1.2.3\n"
        "path: deploy\n"
        "clusters: [staging-usw2]\n"
    }
    assert change.notes == [f"{APP}: onboarded app 'shop' (tag v1.2.3)"]
    assert not (example_project / APP).exists()


def test_the_request_is_frozen() -> None:
    app = AppRequest(name="shop")
    with pytest.raises(AttributeError):
        app.name = "other"  # type: ignore[misc]


def test_an_existing_app_takes_only_clusters_and_environments(example_project: Path) -> None:
    # GIVEN the app onboarded
    (example_project / APP).write_text(f"repository:\n  url: {REPO}\n  ref:\n    branch: main\npath: deploy\n")
    # WHEN asked again with a repository THEN the option is refused, naming the file
    with pytest.raises(ConfigError, match=rf"^--repo: app 'shop' exists \({APP}\); onboard-app only adds"):
        onboard_app(example_project, AppRequest(name="shop", clusters=["hub"], repo="other"))


def test_a_new_app_needs_repo_and_path(example_project: Path) -> None:
    with pytest.raises(ConfigError, match=rf"^--repo and --path: required for a new app \({APP} does not exist\)$"):
        onboard_app(example_project, AppRequest(name="shop", environments=["staging"]))


def test_new_cluster_says_the_version_it_starts_on_and_what_holds_it_back(write_fleet: FleetWriter) -> None:
    # GIVEN a fleet whose definition names no Kubernetes version
    root = write_fleet()
    # WHEN a cluster is added (checked, not written)
    outcome = carry_out(new_cluster(root, "staging-2", "staging", region="us-west-2"), dry_run=True)
    # THEN the notes say the version it starts on, and which controllers keep it off the newest EKS offers; the
    # clusters it does not add are synth's to tell
    assert outcome.notes[1:] == [
        "staging-2: kubernetesVersion 1.36, the newest every controller on it supports (external-secrets 2.14.0 and "
        "flux 2.9 support up to 1.36; EKS offers 1.37)"
    ]
    # AND a cluster that names its version is told nothing
    named = carry_out(
        new_cluster(root, "staging-3", "staging", region="us-west-2", kubernetes_version="1.37"), dry_run=True
    )
    assert len(named.notes) == 1
