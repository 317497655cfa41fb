"""Helm charts of the definition's own (environments/charts/<name>.yaml): one file, no Python, any number of times."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.cli import main
from tests.conftest import MINIMAL_BASE, MINIMAL_ENV, FleetWriter, load_documents
from tests.support.files import read_tree
from tests.support.manifests import assert_valid_and_built

CANARY = {
    "description": "podinfo again, for canary checks",
    "repository": "oci://ghcr.io/stefanprodan/charts/podinfo",
    "version": "6.7.1",
    "namespace": "podinfo-canary",
    "layer": "apps",
    "requires": ["metrics-server"],
    "values": {"replicaCount": 2, "ui": {"message": "canary on ${cluster_name}"}},
}
GOLDILOCKS = {
    "repository": "https://charts.fairwinds.com/stable",
    "chart": "goldilocks",
    "version": "9.0.2",
    "namespace": "goldilocks",
}


def _fleet(write_fleet: FleetWriter, charts: dict[str, Any], packs: dict[str, Any] | None = None) -> Path:
    base = copy.deepcopy(MINIMAL_BASE)
    base["packs"] = {**base["packs"], **(packs if packs is not None else {name: {} for name in charts})}
    env: dict[str, Any] = dict(MINIMAL_ENV)
    if "podinfo-canary" in charts:
        env["packs"] = {"podinfo-canary": {"version": "6.9.2", "values": {"replicaCount": 1}}}
    root = write_fleet(base=base, envs={"staging": env})
    (root / "environments" / "charts").mkdir()
    for name, spec in charts.items():
        path = root / "environments" / "charts" / f"{name}.yaml"
        if spec == "link":  # a valid chart file, outside the project, linked in
            outside = root.parent / "outside.yaml"
            outside.write_text(yaml.safe_dump(GOLDILOCKS, sort_keys=False))
            path.symlink_to(outside)
            continue
        path.write_text(spec if isinstance(spec, str) else yaml.safe_dump(spec, sort_keys=False))
    return root


def _by_kind(path: Path) -> dict[str, dict[str, Any]]:
    return {doc["kind"]: doc for doc in load_documents(path)}


def test_a_chart_file_becomes_a_pack_clusters_enable(write_fleet: FleetWriter) -> None:
    # GIVEN an oci:// chart in the apps layer that needs metrics-server, and an https:// one in controllers
    root = _fleet(write_fleet, {"podinfo-canary": CANARY, "goldilocks": GOLDILOCKS})
    # WHEN synthesized
    assert main(["--root", str(root), "synth"]) == 0
    dist = root / "dist" / "platform"
    # THEN each has its source, release and namespace in the catalogue
    canary = _by_kind(dist / "apps/podinfo-canary/base/podinfo-canary.yaml")
    assert canary["OCIRepository"]["spec"]["url"] == CANARY["repository"]
    assert canary["OCIRepository"]["spec"]["ref"] == {"tag": "6.7.1"}
    release = canary["HelmRelease"]["spec"]
    assert release["chartRef"] == {"kind": "OCIRepository", "name": "podinfo-canary"}
    assert release["targetNamespace"] == "podinfo-canary"
    # (values reach the cluster as written: Flux's post-build substitution leaves them alone)
    assert release["values"] == {"replicaCount": 2, "ui": {"message": "canary on $${cluster_name}"}}
    assert canary["Namespace"]["metadata"]["name"] == "podinfo-canary"
    goldilocks = _by_kind(dist / "infrastructure/controllers/goldilocks/base/goldilocks.yaml")
    assert goldilocks["HelmRepository"]["spec"]["url"] == GOLDILOCKS["repository"]
    assert goldilocks["HelmRelease"]["spec"]["chart"]["spec"]["chart"] == "goldilocks"
    assert goldilocks["HelmRelease"]["spec"]["chart"]["spec"]["version"] == "9.0.2"
    # AND the environment's version and values are an overlay over the catalogue
    overlay = yaml.safe_load((dist / "apps/podinfo-canary/staging/kustomization.yaml").read_text())
    patches = [yaml.safe_load(patch["patch"])[0] for patch in overlay["patches"]]
    assert {"op": "replace", "path": "/spec/ref/tag", "value": "6.9.2"} in patches
    assert {"op": "replace", "path": "/spec/values/replicaCount", "value": 1} in patches
    # AND the cluster applies it after what it requires, gated on the release
    kustomizations = {doc["metadata"]["name"]: doc for doc in load_documents(dist / "clusters/staging-1/apps.yaml")}
    spec = kustomizations["podinfo-canary"]["spec"]
    assert {"name": "metrics-server"} in spec["dependsOn"]
    assert spec["healthChecks"] == [
        {
            "apiVersion": "helm.toolkit.fluxcd.io/v2",
            "kind": "HelmRelease",
            "name": "podinfo-canary",
            "namespace": "flux-system",
        }
    ]
    # AND everything validates against the upstream CRDs, and every folder builds
    assert_valid_and_built(
        root / "dist", [dist / "apps/podinfo-canary/staging", dist / "infrastructure/controllers/goldilocks/base"]
    )


def test_a_chart_not_enabled_anywhere_emits_nothing(write_fleet: FleetWriter) -> None:
    root = _fleet(write_fleet, {"goldilocks": GOLDILOCKS}, packs={})
    assert main(["--root", str(root), "synth"]) == 0
    assert not (root / "dist" / "platform" / "infrastructure" / "controllers" / "goldilocks").exists()


@pytest.mark.parametrize(
    ("name", "spec", "message"),
    [
        (
            "canary",
            {**CANARY, "repository": "http://example.com/charts"},
            "environments/charts/canary.yaml: repository: expected an https:// Helm repository or the oci:// URL "
            'of the chart, got "http://example.com/charts"',
        ),
        (
            "canary",
            {**GOLDILOCKS, "chart": None},
            "environments/charts/canary.yaml: chart: required with an https:// repository (the chart's name in it)",
        ),
        (
            "canary",
            {**CANARY, "chart": "podinfo"},
            "environments/charts/canary.yaml: chart: not allowed with an oci:// repository: its URL names the chart",
        ),
        (
            "canary",
            {**CANARY, "version": ">=6.0.0 <="},
            "environments/charts/canary.yaml: version: expected a semver version such as 6.7.1, or a range Flux reads, "
            "such as 6.7.x, ~6.7.1 or >=6.7.0 <6.8.0 (comparisons joined by spaces or commas, alternatives by ||), got "
            '">=6.0.0 <="',
        ),
        (
            "canary",
            {**GOLDILOCKS, "namespace": None, "targetNamespace": "flux-system"},
            'environments/charts/canary.yaml: targetNamespace: "flux-system" is where fluxplane\'s own machinery runs',
        ),
        (
            "canary",
            {**GOLDILOCKS, "storageNamespace": "default"},
            'environments/charts/canary.yaml: storageNamespace: "default" is neither "flux-system" nor the chart\'s '
            'namespace, "goldilocks"',
        ),
        (
            "canary",
            {**CANARY, "requires": ["nothing"]},
            'environments/charts/canary.yaml: requires[0]: "nothing" is neither an installed pack nor a chart of '
            "environments/charts/",
        ),
        (
            "metrics-server",
            GOLDILOCKS,
            'environments/charts/metrics-server.yaml: "metrics-server" is an installed pack\'s name',
        ),
        (
            "manifests-apps",
            GOLDILOCKS,
            'environments/charts/manifests-apps.yaml: "manifests-apps" is the name of the Kustomization of a '
            "cluster's plain manifests of layer apps, in flux-system",
        ),
        (
            "linked",
            "link",
            "environments/charts/linked.yaml: not a chart file; environments/charts/ holds one <name>.yaml file per "
            "chart, not links",
        ),
        ("Canary", GOLDILOCKS, 'environments/charts/Canary.yaml: chart pack name "Canary" must be a DNS-1123 label'),
        (
            "canary",
            {**GOLDILOCKS, "namespace": "flux-system"},
            'environments/charts/canary.yaml: namespace: "flux-system" is a platform namespace',
        ),
        (
            "canary",
            {**GOLDILOCKS, "namespace": "cert-manager"},
            "environments/charts/canary.yaml: namespace: \"cert-manager\" is the namespace of pack 'cert-manager'",
        ),
        (
            "tenants",
            GOLDILOCKS,
            'environments/charts/tenants.yaml: "tenants" is the name of the Kustomization of a cluster\'s tenants',
        ),
        (
            "canary",
            {**CANARY, "repository": "oci://ghcr.io/stefanprodan/charts/podinfo:6.7.1"},
            'environments/charts/canary.yaml: repository: the oci:// URL ends in a tag (":6.7.1")',
        ),
        (
            "canary",
            {**GOLDILOCKS, "repository": "https://user:t0ken@charts.example.com/stable"},
            "environments/charts/canary.yaml: repository: must not hold credentials (a user or token before '@'), "
            'got "https://***@charts.example.com/stable"',
        ),
    ],
)
def test_a_bad_chart_file_is_one_line_with_its_location(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str], name: str, spec: dict[str, Any], message: str
) -> None:
    root = _fleet(write_fleet, {name: spec}, packs={})
    assert main(["--root", str(root), "synth"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message), err
    assert "t0ken" not in err
    assert not (root / "dist").exists()


def test_a_chart_file_named_after_a_packs_helm_repository_is_refused_where_both_run(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the example with a chart file named after the HelmRepository pack crossplane makes in the hub's
    # flux-system (a name no pack or Kustomization of fluxplane's takes), enabled on the hub
    (example_project / "environments" / "charts").mkdir()
    (example_project / "environments" / "charts" / "crossplane-stable.yaml").write_text(yaml.safe_dump(GOLDILOCKS))
    base_file = example_project / "environments" / "base.yaml"
    base = yaml.safe_load(base_file.read_text())
    base["management"]["packs"]["crossplane-stable"] = {}
    base_file.write_text(yaml.safe_dump(base, sort_keys=False))
    dist = read_tree(example_project / "dist")
    # WHEN synthesized THEN the one object both would write on the hub is refused, with the chart file, and dist/ is
    # left as it was
    assert main(["--root", str(example_project), "synth"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "environments/charts/crossplane-stable.yaml: HelmRepository flux-system/crossplane-stable is written by pack "
        "'crossplane' too on cluster 'hub'; rename the chart file"
    )
    assert read_tree(example_project / "dist") == dist


#: A release taken over where it runs: installed into kube-system by a HelmRelease of that namespace (so named and
#: stored there), with the settings it ran with, and the chart's patch releases taken as they come.
AUTOSCALER = {
    "repository": "https://kubernetes.github.io/autoscaler",
    "chart": "cluster-autoscaler",
    "version": "9.46.x",
    "targetNamespace": "kube-system",
    "releaseName": "cluster-autoscaler",
    "storageNamespace": "kube-system",
    "timeout": "10m",
    "install": {"remediation": {"retries": -1}, "strategy": {"name": "RetryOnFailure", "retryInterval": "2m"}},
    "upgrade": {"remediation": {"remediateLastFailure": True, "strategy": "uninstall"}, "cleanupOnFail": True},
    "test": {"enable": True, "ignoreFailures": True, "timeout": "2m"},
    "driftDetection": {"mode": "warn", "ignore": [{"paths": ["/spec/replicas"], "target": {"kind": "Deployment"}}]},
}


def test_a_chart_taken_over_where_it_runs_keeps_its_release(write_fleet: FleetWriter) -> None:
    # GIVEN a chart file naming a running release and its settings, and an OCI chart at a range in one environment
    root = _fleet(write_fleet, {"autoscaler": AUTOSCALER, "podinfo-canary": CANARY})
    env = root / "environments" / "staging.yaml"
    staging = yaml.safe_load(env.read_text())
    staging["packs"]["podinfo-canary"] = {
        "version": "6.9.x",
        "releaseName": "podinfo",
        "storageNamespace": "podinfo-canary",
    }
    env.write_text(yaml.safe_dump(staging, sort_keys=False))
    # WHEN synthesized
    assert main(["--root", str(root), "synth"]) == 0
    dist = root / "dist" / "platform"
    # THEN the release is the running one: its name, its namespace (not made by the pack), Helm's records there
    autoscaler = _by_kind(dist / "infrastructure/controllers/autoscaler/base/autoscaler.yaml")
    assert "Namespace" not in autoscaler
    spec = autoscaler["HelmRelease"]["spec"]
    assert (spec["releaseName"], spec["targetNamespace"], spec["storageNamespace"]) == (
        "cluster-autoscaler",
        "kube-system",
        "kube-system",
    )
    # AND the range reaches Flux as written, with the settings over the fleet's defaults
    assert spec["chart"]["spec"]["version"] == "9.46.x"
    assert spec["timeout"] == "10m"
    assert spec["install"] == {
        "crds": "CreateReplace",
        "remediation": {"retries": -1},
        "strategy": {"name": "RetryOnFailure", "retryInterval": "2m"},
    }
    assert spec["upgrade"] == {
        "crds": "CreateReplace",
        "remediation": {"retries": 3, "remediateLastFailure": True, "strategy": "uninstall"},
        "cleanupOnFail": True,
    }
    assert spec["test"] == AUTOSCALER["test"]
    assert spec["driftDetection"] == AUTOSCALER["driftDetection"]
    # AND the environment's release identity and range are an overlay: the OCI source follows the newest tag in it
    overlay = yaml.safe_load((dist / "apps/podinfo-canary/staging/kustomization.yaml").read_text())
    patches = [operation for patch in overlay["patches"] for operation in yaml.safe_load(patch["patch"])]
    assert {"op": "replace", "path": "/spec/releaseName", "value": "podinfo"} in patches
    assert {"op": "add", "path": "/spec/storageNamespace", "value": "podinfo-canary"} in patches
    assert {"op": "remove", "path": "/spec/ref/tag"} in patches
    assert {"op": "add", "path": "/spec/ref/semver", "value": "6.9.x"} in patches
    # AND every document validates against the upstream CRDs, and every folder builds
    assert_valid_and_built(
        root / "dist",
        [dist / "apps/podinfo-canary/staging", dist / "infrastructure/controllers/autoscaler/base"],
    )


def test_naming_a_charts_release_as_it_runs_needs_no_replace_and_renaming_it_does(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a chart synthesized with the name and storage its pack gives it
    root = _fleet(write_fleet, {"goldilocks": GOLDILOCKS})
    assert main(["--root", str(root), "synth"]) == 0
    path = root / "environments" / "charts" / "goldilocks.yaml"
    # WHEN the file names them as they are THEN nothing is reinstalled: synth writes without --replace
    path.write_text(yaml.safe_dump({**GOLDILOCKS, "releaseName": "goldilocks", "storageNamespace": "flux-system"}))
    assert main(["--root", str(root), "synth"]) == 0
    # AND keeping Helm's records elsewhere reinstalls the release: the guard asks for it to be named
    path.write_text(yaml.safe_dump({**GOLDILOCKS, "storageNamespace": "goldilocks"}))
    assert main(["--root", str(root), "synth"]) == 2
    assert main(["--root", str(root), "synth", "--replace", "HelmRelease/flux-system/goldilocks"]) == 0
    # AND so does renaming it for one environment, which its overlay patches
    env = root / "environments" / "staging.yaml"
    env.write_text(env.read_text() + "packs:\n  goldilocks:\n    releaseName: vpa\n")
    capsys.readouterr()
    assert main(["--root", str(root), "synth"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("platform/clusters/staging-1: HelmRelease flux-system/goldilocks ")
    assert "the release moves from goldilocks in goldilocks to vpa in goldilocks, so helm-controller" in err


def test_charts_that_require_each_other_are_refused(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _fleet(
        write_fleet, {"a": {**GOLDILOCKS, "requires": ["b"]}, "b": {**GOLDILOCKS, "requires": ["a"]}}, packs={}
    )
    assert main(["--root", str(root), "synth"]) == 2
    assert "environments/charts/: charts require each other in a cycle: a -> b -> a" in capsys.readouterr().err


def test_changing_a_chart_file_renders_again_with_the_cache(write_fleet: FleetWriter) -> None:
    root = _fleet(write_fleet, {"goldilocks": GOLDILOCKS})
    assert main(["--root", str(root), "synth"]) == 0
    path = root / "environments" / "charts" / "goldilocks.yaml"
    path.write_text(path.read_text().replace("namespace: goldilocks", "namespace: vpa-advice"))
    # another namespace reinstalls the release: the guard asks for it to be named
    assert main(["--root", str(root), "synth"]) == 2
    assert main(["--root", str(root), "synth", "--replace", "HelmRelease/flux-system/goldilocks"]) == 0
    built = _by_kind(root / "dist/platform/infrastructure/controllers/goldilocks/base/goldilocks.yaml")
    assert built["HelmRelease"]["spec"]["targetNamespace"] == "vpa-advice"


def test_packs_list_and_show_include_the_projects_charts(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _fleet(write_fleet, {"podinfo-canary": CANARY})
    assert main(["--root", str(root), "packs", "list"]) == 0
    listed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("podinfo-canary ")]
    assert len(listed) == 1 and "apps" in listed[0] and "metrics-server" in listed[0]
    assert main(["--root", str(root), "packs", "show", "podinfo-canary"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("podinfo-canary 6.7.1: podinfo again, for canary checks\n")
    assert re.search(r'\n  version +string +"6\.7\.1" ', shown)
