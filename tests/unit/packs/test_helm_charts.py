"""Tests for fluxplane.packs.helm_charts: the chart files of environments/charts/, each refused on its own.

The whole path, from a chart file to dist/, is tests/integration/test_helm_charts.py; these read the files
only, against the installed packs and a few of their own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.core.layout import LAYER_DIRS
from fluxplane.packs.api import Pack, PackConfig, PackContext
from fluxplane.packs.helm_charts import load_chart_packs
from fluxplane.packs.registry import PackRegistry
from tests.conftest import ROOT

INSTALLED = PackRegistry.from_entry_points()
GOLDILOCKS = {
    "repository": "https://charts.fairwinds.com/stable",
    "chart": "goldilocks",
    "version": "9.0.2",
    "namespace": "goldilocks",
}
PODINFO = {"repository": "oci://ghcr.io/stefanprodan/charts/podinfo", "version": "6.7.1", "namespace": "canary"}


def _no_bind(ctx: PackContext, config: Any) -> None:
    """A pack of another distribution's; what it binds does not matter here."""


#: A pack of another distribution than fluxplane's: its namespace, and the Kustomization of its custom resources.
VENDOR = Pack(
    name="vendor-operator",
    version="1.0.0",
    description="a pack of another distribution",
    config=PackConfig,
    layer="controllers",
    bind=_no_bind,
    crd_groups=("vendor.example.com",),
    namespaces=("vendor-system",),
)
WITH_VENDOR = PackRegistry([*INSTALLED, VENDOR])


def _load(
    tmp_path: Path, charts: dict[str, dict[str, Any]], installed: PackRegistry = INSTALLED
) -> tuple[list[Pack], list[str]]:
    folder = tmp_path / "environments" / "charts"
    folder.mkdir(parents=True)
    for name, spec in charts.items():
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return load_chart_packs(tmp_path, installed, lambda path: path.relative_to(tmp_path).as_posix())


def test_good_chart_files_are_packs(tmp_path: Path) -> None:
    packs, problems = _load(tmp_path, {"goldilocks": GOLDILOCKS, "canary": PODINFO})
    assert problems == []
    assert {pack.name: pack.namespaces for pack in packs} == {"canary": ("canary",), "goldilocks": ("goldilocks",)}


# -- the namespace is the chart's own --------------------------------------------------------------


@pytest.mark.parametrize("namespace", ["flux-system", "kube-system", "kube-public", "external-secrets", "default"])
def test_a_platform_namespace_is_refused(tmp_path: Path, namespace: str) -> None:
    # GIVEN a chart installing into a namespace the platform runs in (its pack would own, and prune, the Namespace)
    _, problems = _load(tmp_path, {"goldilocks": {**GOLDILOCKS, "namespace": namespace}})
    # THEN the file and field, the value and what is allowed (the list apps and clusters are refused with)
    assert problems == [
        f'environments/charts/goldilocks.yaml: namespace: "{namespace}" is a platform namespace; a chart\'s '
        "namespace is its own (its pack makes the Namespace and deletes it when the chart is switched off), not "
        "'crossplane-system', 'default', 'external-secrets', 'flux-system' or any 'kube-*'"
    ]


@pytest.mark.parametrize(
    ("namespace", "owner"),
    [("cert-manager", "pack 'cert-manager'"), ("crossplane-system", None), ("vendor-system", "pack 'vendor-operator'")],
)
def test_a_namespace_a_pack_installs_into_is_refused(tmp_path: Path, namespace: str, owner: str | None) -> None:
    # GIVEN a chart installing into an installed pack's namespace, a built-in's or another distribution's
    _, problems = _load(tmp_path, {"goldilocks": {**GOLDILOCKS, "namespace": namespace}}, WITH_VENDOR)
    # THEN it is refused, with the packs' namespaces (crossplane-system is a platform namespace besides)
    assert len(problems) == 1
    if owner is None:
        assert problems[0].startswith(f'environments/charts/goldilocks.yaml: namespace: "{namespace}" is a platform')
        return
    assert problems[0].startswith(
        f'environments/charts/goldilocks.yaml: namespace: "{namespace}" is the namespace of {owner}; a chart\'s '
        "namespace is its own (its pack makes the Namespace, and deletes it when the chart is switched off): "
        "choose one no pack or other chart installs into (taken: cert-manager, "
    )
    assert "vendor-system" in problems[0]


def test_two_charts_in_one_namespace_are_refused(tmp_path: Path) -> None:
    # GIVEN two charts in one namespace: switching either off would delete the other's
    _, problems = _load(tmp_path, {"a": GOLDILOCKS, "b": GOLDILOCKS})
    # THEN the second is refused, naming the first
    assert len(problems) == 1
    assert problems[0].startswith(
        'environments/charts/b.yaml: namespace: "goldilocks" is the namespace of environments/charts/a.yaml too; '
    )


# -- the name is none of fluxplane's own Flux objects ------------------------------------------------


@pytest.mark.parametrize(
    ("name", "whose"),
    [
        ("flux-system", "the GitRepository and Kustomization every cluster syncs its entry point with"),
        ("tenants", "the Kustomization of a cluster's tenants"),
        ("app-resources", "the Kustomization of a cluster's apps' resources"),
        ("addon-identities", "the hub's Kustomization of its add-ons' IAM roles"),
        ("spoke-bootstrap", "the hub's Kustomization of the workload clusters' chains"),
        ("manifests-configs", "the Kustomization of a cluster's plain manifests of layer configs"),
        ("cert-manager-configs", "the Kustomization of the custom resources of pack 'cert-manager'"),
        ("vendor-operator-configs", "the Kustomization of the custom resources of pack 'vendor-operator'"),
        ("sealed-secrets", "the hub's Flux source of the sealed-secrets chart (its workload clusters' bootstrap)"),
        ("flux-operator", "the hub's Flux source of the flux-operator chart (its workload clusters' bootstrap)"),
    ],
)
def test_a_name_fluxplane_gives_a_flux_object_is_refused(tmp_path: Path, name: str, whose: str) -> None:
    # GIVEN a chart named like a Flux object fluxplane makes in flux-system (the chart's would take its name)
    _, problems = _load(tmp_path, {name: GOLDILOCKS}, WITH_VENDOR)
    # THEN the file, the name and whose it is
    assert problems == [
        f'environments/charts/{name}.yaml: "{name}" is the name of {whose}, in flux-system, where the chart\'s '
        "Kustomization, HelmRelease and source would take it too; rename the file"
    ]


def _fluxplanes_own_names() -> set[str]:
    """The names of the Flux objects in flux-system that the example's dist/ holds outside the packs' folders
    (their catalogue folders and overlays): the entry points', the tenants', the hub's chains'."""
    names = set()
    platform = ROOT / "dist" / "platform"
    for path in sorted(platform.rglob("*.yaml")):
        relative = path.relative_to(platform).as_posix()
        if relative.startswith(tuple(f"{folder}/" for folder in LAYER_DIRS.values())) or "/overlays/" in relative:
            continue
        for document in yaml.safe_load_all(path.read_text()):
            if not isinstance(document, dict) or ".toolkit.fluxcd.io/" not in str(document.get("apiVersion")):
                continue
            if document["metadata"].get("namespace") == "flux-system":
                names.add(document["metadata"]["name"])
    return names


def test_no_chart_takes_the_name_of_a_flux_object_of_the_example(tmp_path: Path) -> None:
    # GIVEN every name of a Flux object in flux-system that fluxplane writes in the example's dist/, not the
    # packs' own (the entry points', the hub's): those that are no installed pack's
    names = sorted(_fluxplanes_own_names() - set(INSTALLED.names))
    assert {"flux-system", "tenants", "spoke-bootstrap", "cert-manager-configs"} <= set(names)
    # WHEN a chart file takes each THEN each is refused
    _, problems = _load(tmp_path, {name: GOLDILOCKS for name in names})
    assert [problem.split(":")[0] for problem in problems] == [f"environments/charts/{name}.yaml" for name in names]


# -- the repository URL ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "what"),
    [
        ("oci://ghcr.io/stefanprodan/charts/podinfo:6.7.1", 'a tag (":6.7.1")'),
        ("oci://localhost:5000/charts/podinfo:6.7.1", 'a tag (":6.7.1")'),
        ("oci://ghcr.io/stefanprodan/charts/podinfo@sha256:0123abcd", 'a digest ("@sha256:0123abcd")'),
    ],
)
def test_an_oci_url_with_a_tag_or_digest_is_refused(tmp_path: Path, url: str, what: str) -> None:
    # GIVEN an oci:// URL naming its tag or digest, which Flux cannot resolve with the version's tag after it
    _, problems = _load(tmp_path, {"canary": {**PODINFO, "repository": url}})
    # THEN it says to give the version in version
    tail = "the tag in version" if "tag" in what else "the chart's version in version"
    assert problems == [
        f"environments/charts/canary.yaml: repository: the oci:// URL ends in {what}, but Flux takes the chart's "
        f"tag from version: give the URL without it, and {tail}"
    ]


def test_an_oci_url_with_a_port_is_kept(tmp_path: Path) -> None:
    packs, problems = _load(tmp_path, {"canary": {**PODINFO, "repository": "oci://localhost:5000/charts/podinfo"}})
    assert problems == [] and [pack.name for pack in packs] == ["canary"]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://user:t0ken-value@charts.example.com/stable", "https://***@charts.example.com/stable"),
        ("https://t0ken-value@charts.example.com/stable", "https://***@charts.example.com/stable"),
        ("oci://user:t0ken-value@ghcr.io/org/podinfo", "oci://***@ghcr.io/org/podinfo"),
    ],
)
def test_credentials_in_the_url_are_refused_and_not_shown(tmp_path: Path, url: str, shown: str) -> None:
    # GIVEN a URL with a user and token, which fluxplane would write to Git
    spec = {**GOLDILOCKS, "repository": url} if url.startswith("https") else {**PODINFO, "repository": url}
    _, problems = _load(tmp_path, {"canary": spec})
    # THEN it is refused, and the message shows the URL without them
    assert problems == [
        "environments/charts/canary.yaml: repository: must not hold credentials (a user or token before '@'), got "
        f'"{shown}": the URL is written to Git; use a public repository\'s URL'
    ]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        # a token with a '/' (base64): the whole userinfo is hidden all the same
        ("https://user:t0ken/value+=@charts.example.com/stable", "https://***@charts.example.com/stable"),
        ("http://charts.example.com/stable?access_token=t0ken-value", "http://charts.example.com/stable?***"),
        ("https://charts.example.com/stable#t0ken-value", "https://charts.example.com/stable#***"),
    ],
)
def test_a_bad_url_is_shown_without_its_credentials(tmp_path: Path, url: str, shown: str) -> None:
    _, problems = _load(tmp_path, {"canary": {**GOLDILOCKS, "repository": url}})
    assert problems == [
        "environments/charts/canary.yaml: repository: expected an https:// Helm repository or the oci:// URL of "
        f'the chart, got "{shown}"'
    ]
    assert "t0ken" not in problems[0]
