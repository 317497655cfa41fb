"""Tests for fluxplane.validate.upstream: the pinned URL table follows fluxplane's pins."""

from __future__ import annotations

import re

import pytest

from fluxplane.packs import versions
from fluxplane.packs.managed_resources import AWS_MANAGED_RESOURCES
from fluxplane.validate.upstream import SHIPPED, URLS
from tests.conftest import CRDS


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


@pytest.mark.skipif(not CRDS.is_dir(), reason=f"the CRD corpus {CRDS} is missing: upstream file names not checked")
def test_every_file_of_one_crd_is_named_as_upstream_names_it() -> None:
    # GIVEN the URLs of one CRD each (<group>_<plural>.yaml) WHEN their names are read as group and plural
    named = [re.fullmatch(r"([a-z0-9.-]+)_([a-z0-9]+)\.yaml", url.rsplit("/", 1)[1]) for url in URLS]
    found = [(match.group(1), match.group(2)) for match in named if match is not None]
    # THEN the corpus (upstream's files, byte for byte) has each, but the Flux Operator's, which it lacks: the
    # download does not miss
    missing = [f"{group}/{plural}" for group, plural in found if not (CRDS / group / f"{plural}.yaml").is_file()]
    assert len(found) > 40
    assert missing == ["fluxcd.controlplane.io/fluxinstances"]


def test_every_kind_fluxplane_composes_is_pulled_and_shipped() -> None:
    # GIVEN the managed resources fluxplane composes, and the provider configs it writes
    wanted = [
        ("aws.m.upbound.io", "providerconfigs"),
        ("aws.m.upbound.io", "clusterproviderconfigs"),
        *(
            (f"{service}.aws.m.upbound.io", plural)
            for service, plural in (k.split("_", 1) for k in AWS_MANAGED_RESOURCES)
        ),
    ]
    # THEN schemas pull downloads each, and fluxplane ships each
    for group, plural in wanted:
        assert any(url.endswith(f"/{group}_{plural}.yaml") for url in URLS), (group, plural)
        assert SHIPPED[group] is None or plural in (SHIPPED[group] or ()), (group, plural)
