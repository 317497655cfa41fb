"""The project's own cdk8s charts (charts/<module>.py), named by clusters in cdk8sCharts."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
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


#: ``fluxplane synth`` in a process of its own, which says at its end which of cdk8s's libraries it loaded.
LOADED = """
import sys
from fluxplane.cli import main
code = main(["--root", sys.argv[1], "synth", *sys.argv[2:]])
print(sorted(name for name in ("cdk8s", "constructs", "jsii") if name in sys.modules))
sys.exit(code)
"""


def _synth_loading(root: Path, *args: str, node: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JSII_NODE": node}
    return subprocess.run(
        [sys.executable, "-c", LOADED, str(root), *args], capture_output=True, text=True, env=env, check=False
    )


@pytest.mark.parametrize("args", [("--no-cache",), ()], ids=["without-cache", "with-cache"])
def test_without_cdk8s_charts_synth_never_starts_the_javascript_runtime(
    example_project: Path, tmp_path: Path, args: tuple[str, ...]
) -> None:
    # GIVEN the example, which has no cdk8s charts of its own, and a JSII_NODE that names no Node.js at all
    missing = str(tmp_path / "no-node" / "node")
    # WHEN synthesized twice (with the cache: the second run takes every cluster from it)
    first = _synth_loading(example_project, *args, node=missing)
    again = _synth_loading(example_project, *args, node=missing)
    # THEN it needs no Node.js: cdk8s, its constructs and the jsii runtime are never imported, and dist/ is written
    for done in (first, again):
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-1] == "[]"
    assert (example_project / "dist" / "platform" / "clusters").is_dir()


def test_a_project_with_cdk8s_charts_runs_them_on_node(write_fleet: FleetWriter) -> None:
    # GIVEN a project whose clusters name a cdk8s chart
    root = write_fleet(envs={"staging": TWO_CLUSTERS})
    _charts(root, {"fleet_info.py": FLEET_INFO, "_common.py": COMMON, "quota.py": QUOTA})
    # WHEN synthesized with the Node.js fluxplane installs
    done = _synth_loading(root, node=os.environ.get("JSII_NODE") or "node")
    # THEN cdk8s runs the charts
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "['cdk8s', 'constructs', 'jsii']"
    # AND with a JSII_NODE that names no Node.js, synth says so instead
    failed = _synth_loading(root, node=str(root / "no-node"))
    assert failed.returncode == 2
    assert "Node.js" in failed.stderr and "Traceback" not in failed.stderr


#: The charts loaded as the library loads a project (``Pipeline.load``), with no command to check Node.js first: what
#: diff and plan do for a base ref whose dist/ is not committed, in a worktree of that ref.
LIBRARY_LOAD = """
import sys
from pathlib import Path
from fluxplane import synth
from fluxplane.errors import FluxplaneError
try:
    synth.Pipeline(Path(sys.argv[1])).load()
except FluxplaneError as exc:
    print(type(exc).__name__, *exc.problems, sep="\\n")
    sys.exit(2)
"""


def test_charts_loaded_without_a_command_say_that_node_is_missing(write_fleet: FleetWriter) -> None:
    # GIVEN a project whose clusters name a cdk8s chart, and a JSII_NODE that names no Node.js
    root = write_fleet(envs={"staging": TWO_CLUSTERS})
    _charts(root, {"fleet_info.py": FLEET_INFO, "_common.py": COMMON, "quota.py": QUOTA})
    env = {**os.environ, "JSII_NODE": str(root / "no-node")}
    # WHEN the library loads it
    done = subprocess.run(
        [sys.executable, "-c", LIBRARY_LOAD, str(root)], capture_output=True, text=True, env=env, check=False
    )
    # THEN the load stops on fluxplane's own error, which names the Node.js it could not start, before cdk8s starts
    assert done.returncode == 2, done.stderr
    assert done.stdout.splitlines()[0] == "NodeError"
    assert f"JSII_NODE={root / 'no-node'}" in done.stdout and "Traceback" not in done.stderr


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


def _exit_code(argv: Sequence[str]) -> int | str:
    """main()'s exit code; what escapes it instead (a SystemExit would end the process with its code, anything
    else with a traceback), as a value a test compares, so that it does not end the test session."""
    try:
        return main(argv)
    except BaseException as exc:  # whatever escapes is the failure under test
        return f"escaped main(): {exc!r}"


def _tree(folder: Path) -> dict[str, str]:
    return {path.relative_to(folder).as_posix(): path.read_text() for path in folder.rglob("*") if path.is_file()}


#: A chart raising something other than an Exception, at import or while built for a cluster (QUOTA's
#: chart() ends on line 5), and the line that reports it.
ENDED = [
    pytest.param("import sys\nsys.exit(0)\n", "importing it failed: line 2: SystemExit: 0", id="exit 0 at import"),
    pytest.param("import sys\n\nsys.exit()\n", "importing it failed: line 3: SystemExit", id="exit at import"),
    pytest.param("raise KeyboardInterrupt\n", "importing it failed: line 1: KeyboardInterrupt", id="Ctrl-C at import"),
    pytest.param(
        "class Stop(BaseException):\n    pass\nraise Stop('no charts today')\n",
        "importing it failed: line 3: Stop: no charts today",
        id="BaseException at import",
    ),
    pytest.param(
        QUOTA + "    raise SystemExit(0)\n", "for cluster 'staging-1': line 6: SystemExit: 0", id="exit 0 while built"
    ),
    pytest.param(
        QUOTA + "    import sys; sys.exit('done')\n",
        "for cluster 'staging-1': line 6: SystemExit: done",
        id="exit with a text while built",
    ),
    pytest.param(
        QUOTA + "    raise KeyboardInterrupt\n",
        "for cluster 'staging-1': line 6: KeyboardInterrupt",
        id="Ctrl-C while built",
    ),
    pytest.param(
        QUOTA + "    raise GeneratorExit('x')\n",
        "for cluster 'staging-1': line 6: GeneratorExit: x",
        id="BaseException while built",
    ),
]


@pytest.mark.parametrize(("chart", "line"), ENDED)
@pytest.mark.parametrize(
    "command", [["synth"], ["synth", "--check"], ["graph", "--cluster", "staging-1"]], ids=["synth", "check", "graph"]
)
def test_a_chart_that_exits_or_raises_a_base_exception_is_that_charts_error(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str], chart: str, line: str, command: list[str]
) -> None:
    # GIVEN a stale dist/, and a chart that calls sys.exit() (with any code), raises KeyboardInterrupt itself or
    # another BaseException, at import or while built for a cluster
    root = write_fleet(envs={"staging": {**MINIMAL_ENV, "clusterDefaults": {"cdk8sCharts": ["quota"]}}})
    (root / "dist" / "platform").mkdir(parents=True)
    (root / "dist" / "platform" / "stale.yaml").write_text("stale: true\n")
    _charts(root, {"quota.py": chart})
    # WHEN synth, synth --check or graph runs
    code = _exit_code(["--root", str(root), *command])
    # THEN it is the chart's error: one line with its file, its line and the cluster; exit 2; dist/ untouched
    assert (code, capsys.readouterr().err) == (2, f"charts/quota.py: {line}\n")
    assert _tree(root / "dist") == {"platform/stale.yaml": "stale: true\n"}


#: argv: the project's root. Runs the CLI as the fluxplane command does, in a process of its own.
_CLI = "import sys; from fluxplane.cli import main; sys.exit(main(['--root', sys.argv[1], 'synth']))"


@pytest.mark.parametrize(
    ("chart", "code", "first_word"),
    [
        ("import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(30)\n", 130, "interrupted"),
        ("import os, signal, time\nos.kill(os.getpid(), signal.SIGTERM)\ntime.sleep(30)\n", 143, "terminated"),
        (
            QUOTA + "    import os, signal, time\n    os.kill(os.getpid(), signal.SIGINT)\n    time.sleep(30)\n",
            130,
            "interrupted",
        ),
        (
            "import os, signal, time\ntry:\n    os.kill(os.getpid(), signal.SIGINT)\n    time.sleep(30)\n"
            "except KeyboardInterrupt:\n    raise SystemExit(0)\n",
            130,
            "interrupted",
        ),
        ("raise KeyboardInterrupt\n", 2, "charts/quota.py: importing it failed: line 1: KeyboardInterrupt"),
    ],
    ids=["SIGINT at import", "SIGTERM at import", "SIGINT while built", "SIGINT turned into an exit", "own raise"],
)
def test_a_signal_while_a_chart_runs_stops_synth_as_it_does_anywhere(
    write_fleet: FleetWriter, chart: str, code: int, first_word: str
) -> None:
    # GIVEN a dist/, and a chart during which the process gets SIGINT or SIGTERM (or that raises
    # KeyboardInterrupt itself, with no signal)
    root = write_fleet(envs={"staging": {**MINIMAL_ENV, "clusterDefaults": {"cdk8sCharts": ["quota"]}}})
    (root / "dist").mkdir()
    (root / "dist" / "old.yaml").write_text("old: true\n")
    _charts(root, {"quota.py": chart})
    # WHEN synth runs as a command
    done = subprocess.run(
        [sys.executable, "-c", _CLI, str(root)], capture_output=True, text=True, timeout=120, check=False
    )
    # THEN a signal stops it as anywhere else: 128 + the signal, one line; the chart's own raise is its error
    assert done.returncode == code, done.stderr
    assert done.stderr.startswith(first_word) and done.stderr.count("\n") == 1, done.stderr
    assert _tree(root / "dist") == {"old.yaml": "old: true\n"}


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


def test_a_link_deep_in_a_helper_package_is_refused_before_any_chart_code_runs(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # GIVEN a chart that imports a helper package whose module is a symbolic link to code outside the project
    root = write_fleet(envs={"staging": {**MINIMAL_ENV, "clusterDefaults": {"cdk8sCharts": ["quota"]}}})
    ran = tmp_path / "ran"
    outside = tmp_path / "outside.py"
    outside.write_text(f"open({str(ran)!r}, 'w').close()\n")
    _charts(root, {"quota.py": "from charts._lib import x\n" + QUOTA})
    (root / "charts" / "_lib").mkdir()
    (root / "charts" / "_lib" / "__init__.py").write_text("")
    os.symlink(outside, root / "charts" / "_lib" / "x.py")
    # WHEN synthesized THEN one line names the link, exit 2, and neither the chart nor the linked code ran
    assert main(["--root", str(root), "synth"]) == 2
    assert capsys.readouterr().err == "charts/_lib/x.py: a symbolic link; charts/ holds the project's own files\n"
    assert not ran.exists()
    assert not (root / "dist").exists()


def test_a_module_at_the_projects_root_stands_in_for_no_library(write_fleet: FleetWriter) -> None:
    # GIVEN a file named like a library at the project's root, beside a chart that imports the library
    root = write_fleet(envs={"staging": {**MINIMAL_ENV, "clusterDefaults": {"cdk8sCharts": ["quota"]}}})
    _charts(root, {"quota.py": "import colorsys\n" + QUOTA})
    (root / "colorsys.py").write_text("raise ImportError('the project root was on sys.path')\n")
    sys.modules.pop("colorsys", None)
    # WHEN synthesized THEN the chart gets the real library
    assert main(["--root", str(root), "synth"]) == 0
    assert (root / "dist/platform/clusters/staging-1/manifests/apps/charts/quota.yaml").is_file()
