"""Tests for fluxplane.packs.helm_charts: the chart files of environments/charts/, each refused on its own.

The whole path, from a chart file to dist/, is tests/integration/test_helm_charts.py; these read the files
only, against the installed packs and a few of their own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from fluxplane.core.layout import LAYER_DIRS
from fluxplane.packs.api import Pack, PackConfig, PackContext
from fluxplane.packs.helm_charts import load_chart_packs
from fluxplane.packs.registry import PackRegistry
from fluxplane.testing import bind_pack
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
    # THEN the file and field, the value and what is allowed (the list apps and clusters are refused with), and
    # for Kubernetes' own namespaces how to install into one without making it
    hint = (
        "; targetNamespace installs into it without making it"
        if namespace in ("kube-system", "kube-public", "default")
        else ""
    )
    assert problems == [
        f'environments/charts/goldilocks.yaml: namespace: "{namespace}" is a platform namespace; a chart\'s '
        "namespace is its own (its pack makes the Namespace and deletes it when the chart is switched off), not "
        f"'crossplane-system', 'default', 'external-secrets', 'flux-system' or any 'kube-*'{hint}"
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


# -- installing into a namespace the chart does not own ------------------------------------------------


def _release(pack: Pack, config: dict[str, Any] | None = None) -> tuple[list[str], dict[str, Any]]:
    """The kinds the chart's pack makes, and its HelmRelease's spec."""
    bound = bind_pack(pack, config or {})
    return [kind for kind, _ in bound.kinds()], bound.one("HelmRelease")["spec"]


def test_a_chart_installs_into_kubernetes_own_namespace_without_making_it(tmp_path: Path) -> None:
    # GIVEN a chart installing into kube-system, where cluster components live, without owning it
    packs, problems = _load(
        tmp_path, {"autoscaler": {**GOLDILOCKS, "namespace": None, "targetNamespace": "kube-system"}}
    )
    assert problems == []
    # WHEN bound THEN no Namespace is made (nor pruned when the chart is switched off); the release goes there
    kinds, spec = _release(packs[0])
    assert kinds == ["HelmRepository", "HelmRelease"]
    assert (spec["releaseName"], spec["targetNamespace"]) == ("autoscaler", "kube-system")
    # AND no app may run there (the namespace is the pack's, for the tenancy rules)
    assert packs[0].namespaces == ("kube-system",)


@pytest.mark.parametrize("namespace", ["flux-system", "crossplane-system", "external-secrets"])
def test_fluxplanes_own_machinery_is_no_charts_target(tmp_path: Path, namespace: str) -> None:
    _, problems = _load(tmp_path, {"goldilocks": {**GOLDILOCKS, "namespace": None, "targetNamespace": namespace}})
    assert problems == [
        f'environments/charts/goldilocks.yaml: targetNamespace: "{namespace}" is where fluxplane\'s own machinery '
        "runs (Flux, Crossplane, the secrets controllers), which a chart could take down with it: Helm takes over an "
        "object of the same name, and deletes it when the chart is uninstalled; choose the chart's own namespace"
    ]


def test_a_target_namespace_of_a_required_pack_or_chart_is_there_first(tmp_path: Path) -> None:
    # GIVEN charts installing into cert-manager's namespace, and into another chart's, each requiring its owner
    trust = {**GOLDILOCKS, "namespace": None, "targetNamespace": "cert-manager", "requires": ["cert-manager"]}
    plugin = {**PODINFO, "namespace": None, "targetNamespace": "goldilocks", "requires": ["goldilocks"]}
    packs, problems = _load(tmp_path, {"goldilocks": GOLDILOCKS, "trust": trust, "plugin": plugin})
    # THEN both are packs, which make no Namespace
    assert problems == []
    assert {pack.name: pack.namespaces for pack in packs} == {
        "goldilocks": ("goldilocks",),
        "plugin": ("goldilocks",),
        "trust": ("cert-manager",),
    }
    assert "Namespace" not in _release(next(pack for pack in packs if pack.name == "trust"))[0]


@pytest.mark.parametrize(
    ("spec", "theirs"),
    [
        ({"targetNamespace": "cert-manager"}, "it requires none"),
        (
            {"targetNamespace": "monitoring", "requires": ["cert-manager", "metrics-server"]},
            "cert-manager, kube-system",
        ),
    ],
)
def test_a_target_namespace_nothing_it_requires_makes_is_refused(
    tmp_path: Path, spec: dict[str, Any], theirs: str
) -> None:
    # GIVEN a chart installing into a namespace that may not exist where it is enabled
    _, problems = _load(tmp_path, {"goldilocks": {**GOLDILOCKS, "namespace": None, **spec}})
    # THEN it is refused, naming what its requirements install into
    assert problems == [
        f'environments/charts/goldilocks.yaml: targetNamespace: "{spec["targetNamespace"]}" is neither Kubernetes\' '
        f"own (default, kube-*) nor one the packs and charts it requires install into ({theirs}), so it may not "
        "exist where the chart is enabled: add the pack or chart that installs into it to requires, or give it as "
        "namespace, the chart's own"
    ]


@pytest.mark.parametrize(
    ("spec", "where", "tail"),
    [({"targetNamespace": "kube-system"}, "targetNamespace", ", not both"), ({"namespace": None}, "(top level)", "")],
)
def test_a_chart_gives_one_namespace(tmp_path: Path, spec: dict[str, Any], where: str, tail: str) -> None:
    _, problems = _load(tmp_path, {"goldilocks": {**GOLDILOCKS, **spec}})
    assert problems == [
        f"environments/charts/goldilocks.yaml: {where}: give namespace (the chart's own, which its pack makes) or "
        f"targetNamespace (one that exists without the chart){tail}"
    ]


# -- the release's identity ----------------------------------------------------------------------------


def test_a_chart_takes_over_a_running_release_by_its_name_and_storage(tmp_path: Path) -> None:
    # GIVEN a chart file naming the release a HelmRelease in the chart's namespace installed, and kept there
    adopted = {**GOLDILOCKS, "releaseName": "vpa-advice", "storageNamespace": "goldilocks"}
    packs, problems = _load(tmp_path, {"goldilocks": adopted})
    assert problems == []
    # WHEN bound THEN the release is that one
    spec = _release(packs[0])[1]
    assert (spec["releaseName"], spec["targetNamespace"], spec["storageNamespace"]) == (
        "vpa-advice",
        "goldilocks",
        "goldilocks",
    )
    # AND a cluster whose release is named otherwise names its own; null is the file's name
    assert _release(packs[0], {"releaseName": "goldilocks-goldilocks"})[1]["releaseName"] == "goldilocks-goldilocks"
    assert _release(packs[0], {"releaseName": None, "storageNamespace": None})[1] == {
        key: value for key, value in spec.items() if key != "storageNamespace"
    } | {"releaseName": "goldilocks"}


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        (
            {"storageNamespace": "apps"},
            'storageNamespace: "apps" is neither "flux-system" nor the chart\'s namespace, "goldilocks": Helm\'s '
            "records of the release hold its values, and stay where no app can read or change them",
        ),
        (
            {"releaseName": "Goldilocks"},
            "releaseName: expected a Helm release name: lower-case letters, digits, '-' and '.' (a DNS-1123 "
            'subdomain), at most 53 characters, got "Goldilocks"',
        ),
    ],
)
def test_a_release_identity_helm_refuses_or_an_app_could_reach_is_refused(
    tmp_path: Path, spec: dict[str, Any], problem: str
) -> None:
    _, problems = _load(tmp_path, {"goldilocks": {**GOLDILOCKS, **spec}})
    assert problems == [f"environments/charts/goldilocks.yaml: {problem}"]


def test_a_clusters_storage_namespace_is_held_to_the_charts_namespace(tmp_path: Path) -> None:
    # GIVEN a chart in goldilocks WHEN a cluster keeps its release elsewhere THEN its section is refused
    packs, _ = _load(tmp_path, {"goldilocks": GOLDILOCKS})
    with pytest.raises(ValidationError, match='storageNamespace "default" is neither "flux-system" nor the namespace'):
        packs[0].config.model_validate({"storageNamespace": "default"})
    assert packs[0].config.model_validate({"storageNamespace": "goldilocks"}).storage_namespace == "goldilocks"


# -- the HelmRelease settings and a version range ------------------------------------------------------


def test_a_charts_release_settings_are_merged_over_the_fleets_defaults(tmp_path: Path) -> None:
    # GIVEN a chart file with each release setting
    settings = {
        "timeout": "10m",
        "install": {"remediation": {"retries": 5}, "strategy": {"name": "RetryOnFailure", "retryInterval": "2m"}},
        "upgrade": {"remediation": {"strategy": "uninstall", "remediateLastFailure": True}},
        "test": {"enable": True, "ignoreFailures": True},
        "driftDetection": {"mode": "warn", "ignore": [{"paths": ["/spec/replicas"], "target": {"kind": "Deployment"}}]},
    }
    packs, problems = _load(tmp_path, {"goldilocks": {**GOLDILOCKS, **settings}})
    assert problems == []
    # WHEN bound THEN each is in the HelmRelease, over the fleet's defaults (CRDs replaced, 3 retries, a rollback)
    spec = _release(packs[0])[1]
    assert {key: spec[key] for key in ("timeout", "install", "upgrade", "test", "driftDetection")} == {
        "timeout": "10m",
        "install": {
            "crds": "CreateReplace",
            "remediation": {"retries": 5},
            "strategy": {"name": "RetryOnFailure", "retryInterval": "2m"},
        },
        "upgrade": {
            "crds": "CreateReplace",
            "remediation": {"retries": 3, "remediateLastFailure": True, "strategy": "uninstall"},
        },
        "test": {"enable": True, "ignoreFailures": True},
        "driftDetection": {"mode": "warn", "ignore": [{"paths": ["/spec/replicas"], "target": {"kind": "Deployment"}}]},
    }


@pytest.mark.parametrize(
    ("settings", "problem"),
    [
        ({"install": {"remediation": {"retries": "three"}}}, "install.remediation.retries: expected an integer"),
        (
            {"upgrade": {"cleanup_on_fail": True}},
            'upgrade.cleanup_on_fail: unknown field; did you mean "cleanupOnFail"? allowed: crds, remediation, '
            "strategy, cleanupOnFail, timeout",
        ),
        (
            {"upgrade": {"strategy": {"name": "RemediateOnFailure", "retryInterval": "1m"}}},
            "upgrade.strategy: retryInterval applies to name 'RetryOnFailure' only, got name 'RemediateOnFailure'",
        ),
        ({"driftDetection": {"mode": "on"}}, "driftDetection.mode: expected one of 'enabled', 'warn' or 'disabled'"),
        ({"timeout": "ten minutes"}, "timeout: expected a duration such as 30s, 5m or 1h30m"),
    ],
)
def test_a_bad_release_setting_is_refused_with_its_field(
    tmp_path: Path, settings: dict[str, Any], problem: str
) -> None:
    # GIVEN a chart file whose release settings the CRD would refuse (or Python's names for Flux's fields)
    _, problems = _load(tmp_path, {"goldilocks": {**GOLDILOCKS, **settings}})
    # THEN one line with the file and the field
    assert len(problems) == 1
    assert problems[0].startswith(f"environments/charts/goldilocks.yaml: {problem}"), problems[0]


@pytest.mark.parametrize("version", ["9.0.x", "~9.0.2", ">=9.0.0 <9.1.0", ">=9.0.0, <9.1.0", "9.x || 10.x", "*"])
def test_a_version_range_is_taken_as_flux_reads_it(tmp_path: Path, version: str) -> None:
    # GIVEN a chart that takes its patch releases as they come WHEN loaded THEN Flux gets the range as written
    packs, problems = _load(tmp_path, {"goldilocks": {**GOLDILOCKS, "version": version}})
    assert problems == []
    assert _release(packs[0])[1]["chart"]["spec"]["version"] == version
    # AND a cluster may hold its own range, or an exact version
    assert packs[0].config.model_validate({"version": "9.0.2"}).version == "9.0.2"
    assert packs[0].config.model_validate({"version": "9.1.x"}).version == "9.1.x"


def test_an_oci_chart_at_a_range_follows_the_newest_tag_in_it(tmp_path: Path) -> None:
    packs, problems = _load(tmp_path, {"canary": {**PODINFO, "version": "6.7.x"}})
    assert problems == []
    assert bind_pack(packs[0], {}).one("OCIRepository")["spec"]["ref"] == {"semver": "6.7.x"}


@pytest.mark.parametrize("version", ["9.0.2.1", ">= bar", "latest", "9.x ||", "09.0.2"])
def test_a_version_flux_cannot_read_is_refused(tmp_path: Path, version: str) -> None:
    _, problems = _load(tmp_path, {"goldilocks": {**GOLDILOCKS, "version": version}})
    assert problems == [
        "environments/charts/goldilocks.yaml: version: expected a semver version such as 6.7.1, or a range Flux "
        "reads, such as 6.7.x, ~6.7.1 or >=6.7.0 <6.8.0 (comparisons joined by spaces or commas, alternatives by "
        f'||), got "{version}"'
    ]
    packs, _ = _load(tmp_path / "cluster", {"goldilocks": GOLDILOCKS})
    with pytest.raises(ValidationError, match=r"expected a semver version such as 6\.7\.1, or a range Flux reads"):
        packs[0].config.model_validate({"version": version})
