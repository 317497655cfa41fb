"""Flux HelmRepository (source.toolkit.fluxcd.io/v1), https or oci."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.constructs import HelmRepository, Manifest, Root
from fluxplane.errors import ConstructError


def repo(props: dict[str, Any]) -> HelmRepository:
    return HelmRepository(Manifest(Root(), "m", path="sources.yaml"), "repo", props)


def test_https_repository_defaults_to_one_hour_and_no_type() -> None:
    # GIVEN / WHEN an https repository with a name and url
    release_repo = repo({"name": "podinfo", "url": "https://stefanprodan.github.io/podinfo"})

    # THEN it is fetched every hour, has no type field, and is not OCI
    assert release_repo.to_dict() == {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "HelmRepository",
        "metadata": {"name": "podinfo", "namespace": "flux-system"},
        "spec": {"interval": "1h", "url": "https://stefanprodan.github.io/podinfo"},
    }
    assert release_repo.is_oci is False


def test_oci_repository_writes_type_oci_first() -> None:
    # GIVEN / WHEN an oci:// repository with type oci
    release_repo = repo({"name": "bitnami", "url": "oci://registry-1.docker.io/bitnamicharts", "type": "oci"})

    # THEN spec has type, interval, url in that order, and is_oci is true
    spec = release_repo.to_dict()["spec"]
    assert spec == {"type": "oci", "interval": "1h", "url": "oci://registry-1.docker.io/bitnamicharts"}
    assert list(spec) == ["type", "interval", "url"]
    assert release_repo.is_oci is True


def test_every_field_is_written_with_upstream_names() -> None:
    # GIVEN a repository with every field
    spec = repo(
        {
            "name": "private",
            "url": "https://charts.example.com",
            "type": "default",
            "interval": "30m",
            "provider": "generic",
            "secret_ref": {"name": "charts-auth"},
            "timeout": "60s",
        }
    ).to_dict()["spec"]

    # WHEN / THEN names are upstream and order is declared order
    assert list(spec.items()) == [
        ("type", "default"),
        ("interval", "30m"),
        ("url", "https://charts.example.com"),
        ("provider", "generic"),
        ("secretRef", {"name": "charts-auth"}),
        ("timeout", "60s"),
    ]


@pytest.mark.parametrize("repo_type", [None, "default"])
def test_oci_url_without_type_oci_is_rejected(repo_type: str | None) -> None:
    # GIVEN / WHEN / THEN an oci:// url must say type oci
    with pytest.raises(
        ConstructError,
        match=r"^root/m/repo: HelmRepositoryProps\.\(props\): an oci:// url needs type 'oci'$",
    ):
        repo({"name": "bitnami", "url": "oci://registry-1.docker.io/bitnamicharts", "type": repo_type})


@pytest.mark.parametrize("url", ["https://charts.example.com", "http://charts.example.com"])
def test_type_oci_without_oci_url_is_rejected(url: str) -> None:
    # GIVEN / WHEN / THEN type oci needs an oci:// url
    with pytest.raises(
        ConstructError,
        match=r"^root/m/repo: HelmRepositoryProps\.\(props\): type 'oci' needs an oci:// url$",
    ):
        repo({"name": "charts", "url": url, "type": "oci"})


def test_url_scheme_is_checked() -> None:
    # GIVEN / WHEN / THEN an ssh url is not a Helm repository
    with pytest.raises(ConstructError, match=r"^root/m/repo: HelmRepositoryProps\.url: string should match pattern"):
        repo({"name": "charts", "url": "ssh://git@example.com/charts"})


def test_unknown_type_is_rejected() -> None:
    # GIVEN / WHEN / THEN a type other than default or oci is refused, naming the allowed values
    with pytest.raises(
        ConstructError, match=r"^root/m/repo: HelmRepositoryProps\.type: input should be 'default' or 'oci'$"
    ):
        repo({"name": "charts", "url": "https://charts.example.com", "type": "git"})


def test_interval_can_be_left_out_explicitly() -> None:
    # GIVEN / WHEN the interval is set to None (Flux then uses its own default)
    spec = repo({"name": "charts", "url": "https://charts.example.com", "interval": None}).to_dict()["spec"]

    # THEN no interval is written
    assert spec == {"url": "https://charts.example.com"}


def test_timeout_in_hours_is_rejected_like_the_crd_does() -> None:
    # GIVEN / WHEN / THEN a timeout the CRD rejects is refused in the constructor
    with pytest.raises(ConstructError, match=r"HelmRepositoryProps\.timeout"):
        repo({"name": "charts", "url": "https://charts.example.com", "timeout": "1h"})
