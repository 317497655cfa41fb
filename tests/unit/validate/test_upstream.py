"""Tests for fluxplane.validate.upstream: the pinned URL table follows fluxplane's pins."""

from __future__ import annotations

from fluxplane.packs import versions
from fluxplane.validate.upstream import URLS


def test_urls_are_pinned_https_and_unique() -> None:
    assert len(URLS) == len(set(URLS))
    assert all(url.startswith("https://") and url.endswith(".yaml") for url in URLS)
    assert not any("/main/" in url or "/master/" in url for url in URLS)


def test_urls_follow_the_pack_versions() -> None:
    # GIVEN the versions fluxplane pins THEN the table downloads the CRDs of exactly those releases
    joined = "\n".join(URLS)
    assert f"/crossplane/crossplane/v{versions.CROSSPLANE.version}/" in joined
    assert f"/provider-upjet-aws/{versions.PROVIDER_AWS}/" in joined
    assert f"/provider-kubernetes/{versions.PROVIDER_KUBERNETES}/" in joined
    assert f"/external-secrets/v{versions.EXTERNAL_SECRETS.version}/" in joined
    assert f"/karpenter-provider-aws/v{versions.KARPENTER.version}/" in joined
    assert f"/download/{versions.CERT_MANAGER.version}/cert-manager.crds.yaml" in joined
