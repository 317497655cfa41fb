"""Flux GitRepository (source.toolkit.fluxcd.io/v1)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.constructs import GitRepository, GitRepositoryProps, GitRepositoryRef, Manifest, Root
from fluxplane.errors import ConstructError

URL = "ssh://git@github.com/org/fleet.git"


def repo(props: dict[str, Any]) -> GitRepository:
    return GitRepository(Manifest(Root(), "m", path="sources.yaml"), "repo", props)


def test_minimal_repository_defaults_to_flux_system_and_ten_minutes() -> None:
    # GIVEN / WHEN a repository with only a name and a url
    doc = repo({"name": "fleet", "url": URL}).to_dict()

    # THEN it lives in flux-system and is fetched every 10m
    assert doc == {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "GitRepository",
        "metadata": {"name": "fleet", "namespace": "flux-system"},
        "spec": {"interval": "10m", "url": URL},
    }


def test_every_field_is_written_with_upstream_names_in_declared_order() -> None:
    # GIVEN a repository with every field, given in another order and by Python names
    doc = repo(
        {
            "ignore": "/*\n!/clusters\n",
            "provider": "github",
            "timeout": "60s",
            "secret_ref": {"name": "deploy-key"},
            "ref": {"branch": "main", "commit": "0123abc"},
            "url": URL,
            "interval": "5m",
            "namespace": "gitops",
            "name": "fleet",
        }
    ).to_dict()

    # WHEN / THEN spec holds upstream names in the props' declared order
    assert doc["metadata"] == {"name": "fleet", "namespace": "gitops"}
    assert doc["spec"] == {
        "interval": "5m",
        "url": URL,
        "ref": {"branch": "main", "commit": "0123abc"},
        "secretRef": {"name": "deploy-key"},
        "timeout": "60s",
        "provider": "github",
        "ignore": "/*\n!/clusters\n",
    }
    assert list(doc["spec"]) == ["interval", "url", "ref", "secretRef", "timeout", "provider", "ignore"]


@pytest.mark.parametrize("ref", [{"branch": "main"}, {"tag": "v1.0.0"}, {"semver": ">=1.0"}, {"name": "refs/heads/x"}])
def test_one_ref_kind_is_accepted(ref: dict[str, str]) -> None:
    # GIVEN / WHEN / THEN a single branch, tag, semver or name is accepted and written as given
    assert repo({"name": "fleet", "url": URL, "ref": ref}).to_dict()["spec"]["ref"] == ref


@pytest.mark.parametrize(
    "ref",
    [
        {"branch": "main", "tag": "v1"},
        {"tag": "v1", "semver": ">=1"},
        {"semver": ">=1", "name": "refs/heads/x"},
        {"branch": "main", "name": "refs/heads/x"},
    ],
)
def test_two_ref_kinds_are_rejected(ref: dict[str, str]) -> None:
    # GIVEN / WHEN / THEN two ways of choosing a revision at once are refused, naming the field
    with pytest.raises(
        ConstructError,
        match=r"^root/m/repo: GitRepositoryProps\.ref: set only one of branch, tag, semver and "
        r"name$",
    ):
        repo({"name": "fleet", "url": URL, "ref": ref})


def test_commit_may_pin_a_branch() -> None:
    # GIVEN / WHEN / THEN a commit alongside a branch is not a second ref kind
    assert GitRepositoryRef(branch="main", commit="abc").dump() == {"branch": "main", "commit": "abc"}


def test_ref_model_rejects_two_kinds_on_its_own() -> None:
    # GIVEN / WHEN / THEN the check lives on the ref model itself
    with pytest.raises(ValidationError, match="set only one of branch, tag, semver and name"):
        GitRepositoryRef(tag="v1", semver=">=1")


@pytest.mark.parametrize("url", ["git@github.com:org/fleet.git", "ftp://example.com/x", "github.com/org/fleet", ""])
def test_url_must_be_http_https_or_ssh(url: str) -> None:
    # GIVEN / WHEN / THEN a scp-style or other-scheme url is refused
    with pytest.raises(ConstructError, match=r"^root/m/repo: GitRepositoryProps\.url: string should match pattern"):
        repo({"name": "fleet", "url": url})


def test_url_is_required() -> None:
    # GIVEN / WHEN / THEN a repository without url is refused
    with pytest.raises(ConstructError, match=r"^root/m/repo: GitRepositoryProps\.url: field required$"):
        repo({"name": "fleet"})


def test_unknown_provider_is_rejected() -> None:
    # GIVEN / WHEN / THEN a provider outside Flux's list is refused, naming the allowed values
    with pytest.raises(
        ConstructError,
        match=r"^root/m/repo: GitRepositoryProps\.provider: input should be 'generic', 'aws', 'azure' or "
        r"'github'$",
    ):
        repo({"name": "fleet", "url": URL, "provider": "gitlab"})


def test_unknown_field_is_rejected() -> None:
    # GIVEN / WHEN / THEN a misspelt field is refused
    with pytest.raises(
        ConstructError, match=r"^root/m/repo: GitRepositoryProps\.branch: extra inputs are not permitted$"
    ):
        repo({"name": "fleet", "url": URL, "branch": "main"})


def test_repository_props_instance_is_accepted() -> None:
    # GIVEN / WHEN a props model instance
    props = GitRepositoryProps(name="fleet", url=URL)

    # THEN it is used as given
    assert repo(props).props is props  # type: ignore[arg-type]


def test_timeout_in_hours_is_rejected_like_the_crd_does() -> None:
    # GIVEN / WHEN / THEN a timeout the CRD rejects is refused in the constructor
    with pytest.raises(ConstructError, match=r"GitRepositoryProps\.timeout"):
        repo({"name": "fleet", "url": URL, "timeout": "1h"})
