"""``fluxplane synth`` end to end through the CLI: writing, --check, and errors found in the tree."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fluxplane.cli import EXIT_BAD_INPUT, EXIT_STALE, main
from fluxplane.constructs.config_map import ConfigMap, ConfigMapProps
from fluxplane.constructs.props import DNS_SUBDOMAIN
from fluxplane.packs.api import Pack, PackConfig, PackContext
from fluxplane.packs.registry import PackRegistry
from tests.conftest import MINIMAL_BASE, FleetWriter
from tests.support.files import read_tree
from tests.support.packs import DEMO_HUB, DEMO_REPOSITORIES, demo_builder


def test_synth_writes_dist_and_check_reports_staleness(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a small fleet WHEN synthesized THEN dist/ is written and reported
    root = write_fleet()
    assert main(["--root", str(root), "synth"]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {len(read_tree(root / 'dist'))} files to {root / 'dist'} in ")
    # THEN --check finds it up to date
    assert main(["--root", str(root), "synth", "--check"]) == 0
    # WHEN a generated file is edited by hand and a stray file added THEN --check exits 1 and lists them
    vars_file = root / "dist/platform/clusters/hub/cluster-vars.yaml"
    vars_file.write_text(vars_file.read_text() + "# edited\n")
    (root / "dist/platform/stray.yaml").write_text("{}\n")
    capsys.readouterr()
    assert main(["--root", str(root), "synth", "--check"]) == EXIT_STALE
    out = capsys.readouterr()
    assert out.out.splitlines() == [
        f"changed: {vars_file}",
        f"removed: {root / 'dist/platform/stray.yaml'}",
    ]
    assert "stale; run 'fluxplane synth'" in out.err


def test_synth_records_every_clusters_range_and_check_reports_the_record_stale(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a fleet with one workload cluster WHEN synthesized
    root = write_fleet()
    assert main(["--root", str(root), "synth"]) == 0
    # THEN environments/allocations.yaml records its range, the block its name hashes to
    recorded = root / "environments/allocations.yaml"
    assert "clusters:\n  staging-1: 10.100.0.0/16\n" in recorded.read_text()
    # WHEN the record is lost THEN --check says so, and synth writes it again, the same
    recorded.unlink()
    capsys.readouterr()
    assert main(["--root", str(root), "synth", "--check"]) == EXIT_STALE
    assert capsys.readouterr().out.splitlines() == [f"changed: {recorded}"]
    assert main(["--root", str(root), "synth"]) == 0
    assert "clusters:\n  staging-1: 10.100.0.0/16\n" in recorded.read_text()


def test_a_new_cluster_whose_name_hashes_to_a_taken_block_moves_no_existing_cluster(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the example fleet, synthesized (staging-usw2 holds 10.198.0.0/16, the block its name hashes to)
    assert main(["--root", str(example_project), "synth"]) == 0
    recorded = (example_project / "environments/allocations.yaml").read_text()
    assert "  staging-usw2: 10.198.0.0/16\n" in recorded
    # WHEN a cluster is added whose name hashes to the same block and sorts first
    assert main(["--root", str(example_project), "new-cluster", "ml-afc", "--env", "staging"]) == 0
    # (its Git credentials are sealed as the command asks; a copy of another cluster's serves here)
    secrets = example_project / "environments/secrets"
    (secrets / "ml-afc/flux-system").mkdir(parents=True)
    source = (secrets / "staging-usw2/flux-system/flux-system.yaml").read_text()
    (secrets / "ml-afc/flux-system/flux-system.yaml").write_text(source)
    capsys.readouterr()
    assert main(["--root", str(example_project), "synth"]) == 0, capsys.readouterr().err
    # THEN every existing cluster keeps its range and the newcomer probes past the taken block
    after = (example_project / "environments/allocations.yaml").read_text()
    assert after == recorded.replace("clusters:\n", "clusters:\n  ml-afc: 10.199.0.0/16\n").replace(
        '  hub: "1.35"\n', '  hub: "1.35"\n  ml-afc: "1.35"\n'
    )


def test_synth_into_cdk8s_outdir(write_fleet: FleetWriter, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    root = write_fleet()
    monkeypatch.setenv("CDK8S_OUTDIR", str(tmp_path / "cdk8s-out"))
    assert main(["--root", str(root), "synth"]) == 0
    assert "platform/clusters/hub/kustomization.yaml" in read_tree(tmp_path / "cdk8s-out")
    assert not (root / "dist").exists()


def test_synth_for_cdk8s_cli_writes_dist_and_a_copy_or_only_the_folder_outside(
    write_fleet: FleetWriter, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = write_fleet()
    # GIVEN cdk8s-cli's scratch folder inside the project (cdk8s.yaml's output)
    monkeypatch.setenv("CDK8S_OUTDIR", str(root / ".cdk8s.out"))
    assert main(["--root", str(root), "synth", "--cdk8s"]) == 0
    # THEN dist/ is the tree, and the scratch folder a copy of it
    assert read_tree(root / "dist") == read_tree(root / ".cdk8s.out")
    assert "platform/clusters/hub/kustomization.yaml" in read_tree(root / "dist")
    # GIVEN a folder outside the project (cdk8s synth --stdout) THEN only it is written
    dist = read_tree(root / "dist")
    (root / "environments" / "base.yaml").write_text(
        (root / "environments" / "base.yaml").read_text().replace("metrics-server: {}", "metrics-server: {replicas: 2}")
    )
    monkeypatch.setenv("CDK8S_OUTDIR", str(tmp_path / "printed"))
    assert main(["--root", str(root), "synth", "--cdk8s"]) == 0
    assert read_tree(root / "dist") == dist
    assert read_tree(tmp_path / "printed") != dist
    assert "platform/clusters/hub/kustomization.yaml" in read_tree(tmp_path / "printed")


def test_a_requirement_cycle_between_packs_is_bad_input(
    write_fleet: FleetWriter, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN two installed packs that require each other
    def cyclic() -> PackRegistry:
        packs = [
            Pack(
                name=n,
                version="1",
                description=n,
                config=PackConfig,
                layer="controllers",
                bind=lambda c, v: None,
                requires=r,
            )
            for n, r in (("a", ("b",)), ("b", ("a",)))
        ]
        return PackRegistry(packs)

    monkeypatch.setattr(PackRegistry, "from_entry_points", staticmethod(cyclic))
    # WHEN synth runs THEN exit 2 names the cycle
    assert main(["--root", str(write_fleet()), "synth"]) == EXIT_BAD_INPUT
    assert capsys.readouterr().err.splitlines() == ["packs require each other in a cycle: a -> b -> a"]


def test_a_tree_error_is_bad_input_and_leaves_dist_untouched(
    write_fleet: FleetWriter, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a pack that defines one ConfigMap twice, and an existing dist/
    def bind(ctx: PackContext, config: PackConfig) -> None:
        for construct_id in ("one", "two"):
            ConfigMap(ctx.scope, construct_id, {"name": "same", "namespace": "default"})

    twice = Pack(name="twice", version="1", description="twice", config=PackConfig, layer="configs", bind=bind)
    monkeypatch.setattr(PackRegistry, "from_entry_points", staticmethod(lambda: PackRegistry([twice, demo_builder()])))
    root = write_fleet(base={"repositories": DEMO_REPOSITORIES, "management": DEMO_HUB})
    assert main(["--root", str(root), "synth"]) == 0
    capsys.readouterr()
    before = read_tree(root / "dist")
    (root / "environments/staging.yaml").write_text(
        "packs:\n  twice: {}\nclusters:\n  - {name: s1, region: us-west-2}\n"
    )
    # WHEN synth runs THEN exit 2 with the construct paths, and dist/ is as it was
    assert main(["--root", str(root), "synth"]) == EXIT_BAD_INPUT
    assert capsys.readouterr().err.splitlines() == [
        "catalogue-twice/base/two: ConfigMap 'same' is already defined in "
        "platform/infrastructure/configs/twice/base/twice.yaml by catalogue-twice/base/one"
    ]
    assert read_tree(root / "dist") == before


class _NamedConfig(PackConfig):
    name: str = "settings"


def test_props_a_pack_builds_that_its_construct_refuses_are_bad_input_in_one_located_line(
    write_fleet: FleetWriter, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a pack that names its ConfigMap from its config, which lets through a name no ConfigMap may have
    def bind(ctx: PackContext, config: _NamedConfig) -> None:
        ConfigMap(ctx.scope, "settings", ConfigMapProps(name=config.name, namespace="default"))

    named = Pack(name="named", version="1", description="named", config=_NamedConfig, layer="configs", bind=bind)
    monkeypatch.setattr(PackRegistry, "from_entry_points", staticmethod(lambda: PackRegistry([named, demo_builder()])))
    root = write_fleet(base={"repositories": DEMO_REPOSITORIES, "management": DEMO_HUB})
    (root / "environments/staging.yaml").write_text(
        "packs:\n  named: {name: Settings}\nclusters:\n  - {name: s1, region: us-west-2}\n"
    )
    # WHEN synth runs THEN exit 2 with the pack's scope, the model and the field, and no traceback
    assert main(["--root", str(root), "synth"]) == EXIT_BAD_INPUT
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("catalogue-named/")
    assert line.endswith(": ConfigMapProps.name: string should match pattern '" + DNS_SUBDOMAIN + "'")


def test_values_aws_does_not_have_are_bad_input_reported_together(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a synthesized fleet
    root = write_fleet()
    assert main(["--root", str(root), "synth"]) == 0
    before = read_tree(root / "dist")
    capsys.readouterr()
    # AND then a misspelt instance type, a misspelt region, a version EKS does not have, six zones in a
    # three-zone region and a private-only endpoint the hub (public by default) cannot reach
    (root / "environments/production.yaml").write_text(
        "clusters:\n"
        "  - name: p-1\n"
        "    region: us-west-2\n"
        "    nodeGroups:\n"
        "      - {name: system, instanceTypes: [m7i.lrage]}\n"
        "  - name: p-2\n"
        "    region: eu-wst-1\n"
        '    kubernetesVersion: "1.99"\n'
        "  - name: p-3\n"
        "    region: ca-central-1\n"
        "    network: {availabilityZones: 6}\n"
        "    endpoint: {publicAccess: false}\n"
    )

    # WHEN synth runs THEN it exits 2 with one located line per problem, no traceback, and dist/ as it was
    assert main(["--root", str(root), "synth"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "environments/production.yaml: clusters[0].nodeGroups[0].instanceTypes[0]: unknown EC2 instance type "
        '"m7i.lrage"; did you mean "m7i.large"? (a type newer than fluxplane\'s data: add it to '
        "awsData.instanceTypes in environments/base.yaml)",
        'environments/production.yaml: clusters[1].region: unknown AWS region "eu-wst-1"; did you mean '
        '"eu-west-1"? (a region newer than fluxplane\'s data: add it with its availability zones to '
        "awsData.regions in environments/base.yaml)",
        "environments/production.yaml: clusters[1].kubernetesVersion: expected a Kubernetes version EKS supports "
        '(1.31 to 1.37), got "1.99" (a version newer than fluxplane\'s data: add it to '
        "awsData.kubernetesVersions in environments/base.yaml)",
        "environments/production.yaml: clusters[2].network.availabilityZones: ca-central-1 has 3 availability "
        "zones (ca-central-1a, ca-central-1b, ca-central-1d), got 6; use at most 3, or list your account's zones "
        "there under awsData.regions in environments/base.yaml",
        "environments/production.yaml: clusters[2].endpoint.publicAccess: the hub reaches this API server over "
        "the internet (endpoint.fromHub: public, the default), so publicAccess must be true; or set "
        "endpoint.fromHub: private and connect the hub's VPC to the cluster's (VPC peering or a Transit Gateway)",
    ]
    assert "Traceback" not in err
    assert read_tree(root / "dist") == before


def test_a_pack_left_off_the_hub_is_a_note_on_standard_error(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN karpenter for every cluster, in base.yaml (its role made on the hub by app-compositions)
    hub = {**MINIMAL_BASE["management"], "packs": {**MINIMAL_BASE["management"]["packs"], "app-compositions": {}}}
    root = write_fleet(base={**MINIMAL_BASE, "management": hub, "packs": {"metrics-server": {}, "karpenter": {}}})
    # WHEN synthesized THEN it succeeds, saying on standard error that the hub goes without it
    assert main(["--root", str(root), "synth"]) == 0
    note, *started = capsys.readouterr().err.splitlines()
    assert note.startswith("note: environments/base.yaml: packs.karpenter: pack 'karpenter' is left off the management")
    assert [line.split(":")[1] for line in started] == [" hub", " staging-1"]  # the versions they start on
    hub_kustomizations = (root / "dist/platform/clusters/hub/infrastructure.yaml").read_text()
    assert "name: karpenter\n" not in hub_kustomizations
    assert "name: karpenter\n" in (root / "dist/platform/clusters/staging-1/infrastructure.yaml").read_text()


def _state(root: Path) -> dict[str, tuple[bytes | str, int]]:
    """Every path below ``root`` (hidden ones too), with its content (a link's target) and time."""
    found: dict[str, tuple[bytes | str, int]] = {}
    for path in sorted(root.rglob("*")):
        stat = path.lstat()
        if path.is_symlink():
            found[path.relative_to(root).as_posix()] = (str(path.readlink()), stat.st_mtime_ns)
        elif path.is_file():
            found[path.relative_to(root).as_posix()] = (path.read_bytes(), stat.st_mtime_ns)
        else:
            found[path.relative_to(root).as_posix() + "/"] = (b"", stat.st_mtime_ns)
    return found


def test_check_writes_nothing_at_all(write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a synthesized project (cache, spare, allocations) whose definition then changed
    root = write_fleet()
    assert main(["--root", str(root), "synth"]) == 0
    assert main(["--root", str(root), "synth"]) == 0
    write_fleet(envs={"staging": {"clusters": [{"name": "staging-2", "region": "us-west-2"}]}})
    before = _state(root)
    assert any(path.startswith(".fluxplane-cache/") for path in before)
    # WHEN --check runs
    assert main(["--root", str(root), "synth", "--check"]) == EXIT_STALE
    # THEN not a file, folder or time in the project changed
    assert _state(root) == before


@pytest.mark.parametrize("outdir", [".", "environments"])
def test_an_outdir_that_holds_the_project_is_refused_before_anything_is_read(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str], outdir: str
) -> None:
    root = write_fleet()
    before = _state(root)
    assert main(["--root", str(root), "synth", "--outdir", str(root / outdir)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "synth replaces the whole output folder; pass an --outdir of its own" in err[0]
    assert _state(root) == before


def test_a_foreign_outdir_is_left_as_it_was(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = write_fleet()
    foreign = tmp_path / "documents"
    foreign.mkdir()
    (foreign / "thesis.txt").write_text("years of work\n")
    assert main(["--root", str(root), "synth", "--outdir", str(foreign)]) == EXIT_BAD_INPUT
    assert "none of which synth writes" in capsys.readouterr().err
    assert read_tree(foreign) == {"thesis.txt": b"years of work\n"}
    assert sorted(path.name for path in tmp_path.iterdir() if path.name.startswith(".")) == []


def test_synth_warns_about_clusters_past_eks_standard_support(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a cluster held on a version whose standard support ended on 2026-07-29
    root = write_fleet(
        envs={"staging": {"clusters": [{"name": "staging-1", "region": "us-west-2", "kubernetesVersion": "1.33"}]}}
    )
    # WHEN synthesized (on any day after that) THEN synth writes, and says what it costs and what to do
    assert main(["--root", str(root), "synth"]) == 0
    assert (
        "warning: Kubernetes 1.33 left EKS standard support on 2026-07-29: staging-1 runs on paid extended support "
        "until 2027-07-29, when EKS upgrades it; upgrade to 1.34 (kubernetesVersion)"
    ) in capsys.readouterr().err.splitlines()


def test_synth_records_the_version_a_new_cluster_starts_on_and_says_what_holds_it_back(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a new fleet whose definition names no Kubernetes version
    root = write_fleet()
    # WHEN synthesized THEN each cluster starts on the newest version every controller on it supports, recorded
    assert main(["--root", str(root), "synth"]) == 0
    recorded = yaml.safe_load((root / "environments/allocations.yaml").read_text())["kubernetesVersions"]
    assert recorded == {"hub": "1.36", "staging-1": "1.36"}
    # AND standard error says, after the work, which controllers hold each back from the newest EKS offers
    assert capsys.readouterr().err.splitlines() == [
        "note: hub: kubernetesVersion 1.36, the newest every controller on it supports (crossplane 2.4.3 and flux 2.9 "
        "support up to 1.36; EKS offers 1.37)",
        "note: staging-1: kubernetesVersion 1.36, the newest every controller on it supports (external-secrets 2.14.0 "
        "and flux 2.9 support up to 1.36; EKS offers 1.37)",
    ]
    # AND once recorded, the version is the cluster's: the next synth keeps it and has nothing to say
    assert main(["--root", str(root), "synth"]) == 0
    assert capsys.readouterr().err == ""
