"""The project's own cdk8s charts (charts/<module>.py), named by clusters in cdk8sCharts."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.cli import main
from tests.conftest import MINIMAL_ENV, FleetWriter, load_documents
from tests.support.manifests import assert_valid_and_built

FLEET_INFO = '''"""Which cluster this is, for people and scripts on it."""
import cdk8s

from charts._common import labels
from fluxplane.constructs.namespace import Namespace

LAYER = "configs"


def chart(scope, cluster):
    Namespace(scope, "namespace", {"name": "fleet-info"})
    cdk8s.ApiObject(
        scope,
        "info",
        api_version="v1",
        kind="ConfigMap",
        metadata={"namespace": "fleet-info", "labels": labels(cluster)},
    ).add_json_patch(cdk8s.JsonPatch.add("/data", {"region": cluster.region, "account": "012345678912"}))
'''
COMMON = """def labels(cluster):
    return {"fleet.example.com/environment": cluster.environment}
"""
QUOTA = """import cdk8s

def chart(scope, cluster):
    cdk8s.ApiObject(scope, "quota", api_version="v1", kind="ResourceQuota",
                    metadata={"name": "pods", "namespace": "default"})
"""
#: Charts whose objects hold values in clear: a Secret among a List's items, a SealedSecret's template data.
LEAKY_LIST = """import cdk8s

def chart(scope, cluster):
    cdk8s.ApiObject(scope, "bundle", api_version="v1", kind="List", metadata={"name": "bundle"}).add_json_patch(
        cdk8s.JsonPatch.add("/items", [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "default"}},
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db", "namespace": "default"},
             "stringData": {"password": "hunter2"}},
        ])
    )
"""
LEAKY_SEALED = """import cdk8s

def chart(scope, cluster):
    cdk8s.ApiObject(scope, "db", api_version="bitnami.com/v1alpha1", kind="SealedSecret",
                    metadata={"name": "db", "namespace": "default"}).add_json_patch(
        cdk8s.JsonPatch.add("/spec", {"encryptedData": {}, "template": {"data": {"password": "hunter2"}}})
    )
"""
TWO_CLUSTERS: dict[str, Any] = {
    "clusterDefaults": {"cdk8sCharts": ["fleet-info"]},
    "clusters": [
        {"name": "staging-1", "region": "us-west-2"},
        {"name": "staging-2", "region": "eu-west-1", "cdk8sCharts": ["fleet-info", "quota"]},
    ],
}


def _charts(root: Path, files: dict[str, str]) -> None:
    (root / "charts").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / "charts" / name).write_text(text)


def test_a_chart_is_synthesized_for_each_cluster_that_names_it(write_fleet: FleetWriter) -> None:
    # GIVEN a chart every staging cluster names (with a helper module and a fluxplane construct in it),
    # and a second chart one cluster adds
    root = write_fleet(envs={"staging": TWO_CLUSTERS})
    _charts(root, {"fleet_info.py": FLEET_INFO, "_common.py": COMMON, "quota.py": QUOTA})
    # WHEN synthesized
    assert main(["--root", str(root), "synth"]) == 0
    clusters = root / "dist" / "platform" / "clusters"
    # THEN each cluster's chart output is a file of its plain manifests in the chart's layer
    one = load_documents(clusters / "staging-1/manifests/configs/charts/fleet-info.yaml")
    two = load_documents(clusters / "staging-2/manifests/configs/charts/fleet-info.yaml")
    assert [doc["kind"] for doc in one] == ["ConfigMap", "Namespace"]
    config_maps = [docs[0] for docs in (one, two)]
    # AND made for that cluster, with names cdk8s generates the same on every cluster
    assert [item["data"]["region"] for item in config_maps] == ["us-west-2", "eu-west-1"]
    assert config_maps[0]["metadata"]["name"] == config_maps[1]["metadata"]["name"]
    assert config_maps[0]["metadata"]["labels"] == {"fleet.example.com/environment": "staging"}
    # AND a number-like string reaches the API server as a string
    assert "account: '012345678912'" in (clusters / "staging-1/manifests/configs/charts/fleet-info.yaml").read_text()
    # AND the default layer is apps; a chart the cluster does not name is not there
    assert load_documents(clusters / "staging-2/manifests/apps/charts/quota.yaml")[0]["kind"] == "ResourceQuota"
    assert not (clusters / "staging-1/manifests/apps").exists()
    assert yaml.safe_load((clusters / "staging-1/manifests/configs/kustomization.yaml").read_text())["resources"] == [
        "charts/fleet-info.yaml"
    ]
    # AND the layer's Kustomization applies it, waiting for it, after the layer below
    configs = {
        doc["metadata"]["name"]: doc["spec"] for doc in load_documents(clusters / "staging-1/infrastructure.yaml")
    }
    assert configs["manifests-configs"]["wait"] is True
    assert {"name": "metrics-server"} in configs["manifests-configs"]["dependsOn"]
    # AND everything validates and builds
    assert_valid_and_built(
        root / "dist",
        [
            clusters / "staging-1/manifests/configs",
            clusters / "staging-2/manifests/configs",
            clusters / "staging-2/manifests/apps",
        ],
    )


def test_charts_of_two_projects_in_one_process_stay_apart(write_fleet: FleetWriter, tmp_path: Path) -> None:
    # GIVEN two projects whose charts share a module name but not their code
    first = write_fleet(
        envs={"staging": {**MINIMAL_ENV, "clusterDefaults": {"cdk8sCharts": ["quota"]}}}, root=tmp_path / "a"
    )
    second = write_fleet(
        envs={"staging": {**MINIMAL_ENV, "clusterDefaults": {"cdk8sCharts": ["quota"]}}}, root=tmp_path / "b"
    )
    _charts(first, {"quota.py": QUOTA})
    _charts(second, {"quota.py": QUOTA.replace('"pods"', '"other"')})
    # WHEN both are synthesized, one after the other, twice
    for root in (first, second, first, second):
        assert main(["--root", str(root), "synth"]) == 0
    # THEN each has its own chart's output
    names = [
        load_documents(root / "dist/platform/clusters/staging-1/manifests/apps/charts/quota.yaml")[0]["metadata"][
            "name"
        ]
        for root in (first, second)
    ]
    assert names == ["pods", "other"]
    # AND synth leaves no project's charts importable behind it
    assert not [name for name in sys.modules if name == "charts" or name.startswith("charts.")]


def test_a_changed_chart_is_rendered_again_with_the_cache(write_fleet: FleetWriter) -> None:
    root = write_fleet(envs={"staging": {**MINIMAL_ENV, "clusterDefaults": {"cdk8sCharts": ["quota"]}}})
    _charts(root, {"quota.py": QUOTA})
    assert main(["--root", str(root), "synth"]) == 0
    _charts(root, {"quota.py": QUOTA.replace('"pods"', '"pods-2"')})
    assert main(["--root", str(root), "synth"]) == 0
    quota = root / "dist/platform/clusters/staging-1/manifests/apps/charts/quota.yaml"
    assert load_documents(quota)[0]["metadata"]["name"] == "pods-2"
    assert main(["--root", str(root), "synth", "--check"]) == 0


@pytest.mark.parametrize(
    ("charts", "names", "message"),
    [
        (
            {"quota.py": QUOTA},
            ["quota", "quotas"],
            'environments/staging.yaml: clusterDefaults.cdk8sCharts[1]: "quotas" is not a chart of charts/ (a '
            "charts/<name>.py with '_' for '-'; charts: quota)",
        ),
        (
            {"quota.py": QUOTA.replace('kind="ResourceQuota"', 'kind="Secret"')},
            ["quota"],
            "charts/quota.py: for cluster 'staging-1': object 1: a plain Secret would put its values in Git: seal it "
            "with `fluxplane seal` (environments/secrets/) instead",
        ),
        (
            {"quota.py": LEAKY_LIST},
            ["quota"],
            "charts/quota.py: for cluster 'staging-1': object 1: items[1]: Secret 'default/db' holds plaintext data or "
            "stringData; seal it with 'fluxplane seal' (a SealedSecret) or fetch it with an ExternalSecret",
        ),
        (
            {"quota.py": LEAKY_SEALED},
            ["quota"],
            "charts/quota.py: for cluster 'staging-1': object 1: SealedSecret 'default/db': spec.template.data: holds "
            "plaintext, which must not be committed; seal the values with 'fluxplane seal' (spec.encryptedData)",
        ),
        (
            {"quota.py": QUOTA.replace("cdk8s.ApiObject(", "cluster.regio\n    cdk8s.ApiObject(")},
            ["quota"],
            "charts/quota.py: for cluster 'staging-1': line 4: AttributeError: 'ClusterInfo' object has no attribute "
            "'regio'",
        ),
        (
            {"quota.py": QUOTA + 'LAYER = "platform"\n'},
            ["quota"],
            'charts/quota.py: LAYER: expected one of controllers, configs, apps, got "platform"',
        ),
        (
            {"quota.py": "import cdk8s\n"},
            ["quota"],
            "charts/quota.py: chart: required, a function chart(scope, cluster) that adds the chart's constructs",
        ),
        (
            {"quota.py": "import cdk8s\ndef chart(scope, cluster:\n"},
            ["quota"],
            "charts/quota.py: importing it failed: line 2: SyntaxError:",
        ),
        (
            {"Quota-X.py": QUOTA},
            [],
            'charts/Quota-X.py: chart module name "Quota-X" must be lower-case letters and digits in words joined '
            "by '_'",
        ),
    ],
)
def test_a_chart_that_cannot_run_is_refused_with_its_file(
    write_fleet: FleetWriter,
    capsys: pytest.CaptureFixture[str],
    charts: dict[str, str],
    names: list[str],
    message: str,
) -> None:
    root = write_fleet(envs={"staging": {**MINIMAL_ENV, "clusterDefaults": {"cdk8sCharts": names}}})
    _charts(root, charts)
    assert main(["--root", str(root), "synth"]) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert "Traceback" not in err and "hunter2" not in err
    assert not (root / "dist").exists()


def test_a_chart_object_also_in_the_plain_manifests_is_refused(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_fleet(envs={"staging": {**MINIMAL_ENV, "clusterDefaults": {"cdk8sCharts": ["quota"]}}})
    _charts(root, {"quota.py": QUOTA})
    plain = root / "environments/manifests/staging/apps/quota.yaml"
    plain.parent.mkdir(parents=True)
    plain.write_text("apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: pods\n  namespace: default\n")
    assert main(["--root", str(root), "synth"]) == 2
    assert (
        "charts/quota.py: ResourceQuota 'pods' is also in environments/manifests/staging/apps/quota.yaml, for "
        "cluster 'staging-1''s apps" in capsys.readouterr().err
    )


def test_a_linked_chart_module_or_helper_is_refused(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = write_fleet(envs={"staging": {**MINIMAL_ENV, "clusterDefaults": {"cdk8sCharts": ["quota"]}}})
    outside = tmp_path / "outside.py"
    outside.write_text(QUOTA)
    (root / "charts").mkdir()
    os.symlink(outside, root / "charts" / "quota.py")
    os.symlink(outside, root / "charts" / "_helper.py")
    assert main(["--root", str(root), "synth"]) == 2
    err = capsys.readouterr().err
    assert "charts/quota.py: a symbolic link; charts/ holds the project's own files" in err
    assert "charts/_helper.py: a symbolic link; charts/ holds the project's own files" in err


def test_a_module_at_the_projects_root_stands_in_for_no_library(write_fleet: FleetWriter) -> None:
    # GIVEN a file named like a library at the project's root, beside a chart that imports the library
    root = write_fleet(envs={"staging": {**MINIMAL_ENV, "clusterDefaults": {"cdk8sCharts": ["quota"]}}})
    _charts(root, {"quota.py": "import colorsys\n" + QUOTA})
    (root / "colorsys.py").write_text("raise ImportError('the project root was on sys.path')\n")
    sys.modules.pop("colorsys", None)
    # WHEN synthesized THEN the chart gets the real library
    assert main(["--root", str(root), "synth"]) == 0
    assert (root / "dist/platform/clusters/staging-1/manifests/apps/charts/quota.yaml").is_file()
