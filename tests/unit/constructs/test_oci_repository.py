"""Flux OCIRepository (source.toolkit.fluxcd.io/v1)."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.constructs import Manifest, OCIRepository, OCIRepositoryRef, Root
from fluxplane.errors import ConstructError

URL = "oci://ghcr.io/stefanprodan/charts/podinfo"


def repo(props: dict[str, Any]) -> OCIRepository:
    return OCIRepository(Manifest(Root(), "m", path="sources.yaml"), "oci", props)


def test_minimal_repository() -> None:
    # GIVEN / WHEN a repository with a name, url and tag
    doc = repo({"name": "podinfo", "url": URL, "ref": {"tag": "6.7.0"}}).to_dict()

    # THEN defaults are flux-system and 10m
    assert doc == {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "OCIRepository",
        "metadata": {"name": "podinfo", "namespace": "flux-system"},
        "spec": {"interval": "10m", "url": URL, "ref": {"tag": "6.7.0"}},
    }


def test_every_field_is_written_with_upstream_names_in_declared_order() -> None:
    # GIVEN a repository with every field
    spec = repo(
        {
            "timeout": "60s",
            "secretRef": {"name": "ghcr"},
            "provider": "aws",
            "layerSelector": {
                "mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
                "operation": "copy",
            },
            "ref": {"semver": ">=6.0.0", "semverFilter": ".*-rc.*"},
            "url": URL,
            "interval": "1h",
            "name": "podinfo",
        }
    ).to_dict()["spec"]

    # WHEN / THEN nested and top-level fields use Flux's names in declared order
    assert spec == {
        "interval": "1h",
        "url": URL,
        "ref": {"semver": ">=6.0.0", "semverFilter": ".*-rc.*"},
        "layerSelector": {
            "mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
            "operation": "copy",
        },
        "provider": "aws",
        "secretRef": {"name": "ghcr"},
        "timeout": "60s",
    }
    assert list(spec) == ["interval", "url", "ref", "layerSelector", "provider", "secretRef", "timeout"]


@pytest.mark.parametrize("ref", [{}, {"semverFilter": ".*"}])
def test_ref_without_tag_semver_or_digest_is_rejected(ref: dict[str, str]) -> None:
    # GIVEN / WHEN / THEN a ref that picks no artifact is refused
    with pytest.raises(
        ConstructError,
        match=r"^root/m/oci: OCIRepositoryProps\.ref: set one of tag, semver or digest$",
    ):
        repo({"name": "podinfo", "url": URL, "ref": ref})


def test_ref_is_required() -> None:
    # GIVEN / WHEN / THEN a repository without ref is refused
    with pytest.raises(ConstructError, match=r"^root/m/oci: OCIRepositoryProps\.ref: field required$"):
        repo({"name": "podinfo", "url": URL})


def test_digest_ref_is_accepted() -> None:
    # GIVEN / WHEN / THEN a digest alone pins the artifact
    assert OCIRepositoryRef(digest="sha256:abc").dump() == {"digest": "sha256:abc"}


@pytest.mark.parametrize("url", ["https://ghcr.io/x", "ghcr.io/x", "oci:/ghcr.io/x"])
def test_url_must_be_oci(url: str) -> None:
    # GIVEN / WHEN / THEN a url that is not oci:// is refused
    with pytest.raises(ConstructError, match=r"^root/m/oci: OCIRepositoryProps\.url: string should match pattern"):
        repo({"name": "podinfo", "url": url, "ref": {"tag": "1"}})


def test_layer_selector_operation_is_extract_or_copy() -> None:
    # GIVEN / WHEN / THEN another operation is refused, naming the allowed ones
    with pytest.raises(
        ConstructError,
        match=r"^root/m/oci: OCIRepositoryProps\.layerSelector\.operation: input should be 'extract' or "
        r"'copy'$",
    ):
        repo({"name": "podinfo", "url": URL, "ref": {"tag": "1"}, "layerSelector": {"operation": "move"}})


def test_unknown_provider_is_rejected() -> None:
    # GIVEN / WHEN / THEN github is not an OCI provider
    with pytest.raises(ConstructError, match=r"^root/m/oci: OCIRepositoryProps\.provider: input should be"):
        repo({"name": "podinfo", "url": URL, "ref": {"tag": "1"}, "provider": "github"})


def test_timeout_in_hours_is_rejected_like_the_crd_does() -> None:
    # GIVEN / WHEN / THEN a timeout the CRD rejects is refused in the constructor
    with pytest.raises(ConstructError, match=r"OCIRepositoryProps\.timeout"):
        repo({"name": "podinfo", "url": URL, "ref": {"tag": "1"}, "timeout": "1h"})
