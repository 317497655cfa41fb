"""new-cluster, remove-cluster, onboard-app and offboard-app on a copy of the example fleet."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest
import yaml

from fluxplane.cli import EXIT_BAD_INPUT, main
from fluxplane.commands.edits import Edit, carry_out, parse_ref
from fluxplane.config.loader import load_fleet
from fluxplane.errors import ConfigError
from fluxplane.synth import load_plan


def tree(root: Path) -> dict[str, bytes]:
    """Every file of environments/, by path: to show a command left the definition as it was."""
    folder = root / "environments"
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def run(root: Path, *args: str) -> int:
    return main(["--root", str(root), *args])


def clusters_of(root: Path) -> dict[str, dict[str, object]]:
    fleet = load_fleet(root).fleet
    return {cluster.name: cluster.model_dump(by_alias=True) for cluster in fleet.clusters}


# -- new-cluster and remove-cluster ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("environment", "options"),
    [
        ("staging", []),
        ("staging", ["--region", "us-east-2", "--kubernetes-version", "1.32", "--availability-zones", "3"]),
        ("production", ["--region", "eu-west-1", "--hub-access", "keyless", "--cidr", "10.250.0.0/16"]),
    ],
)
def test_new_cluster_then_remove_cluster_gives_back_the_file_byte_for_byte(
    example_project: Path, environment: str, options: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree(example_project)
    assert run(example_project, "new-cluster", "fresh-1", "--env", environment, *options) == 0
    out = capsys.readouterr().out
    assert f"+++ b/environments/{environment}.yaml" in out
    assert "+  - name: fresh-1" in out
    assert "fluxplane seal --cluster fresh-1 --namespace flux-system --name flux-system" in out
    changed = tree(example_project)
    assert set(changed) == set(before)
    assert [path for path in before if before[path] != changed[path]] == [f"{environment}.yaml"]
    assert run(example_project, "remove-cluster", "fresh-1") == 0
    assert tree(example_project) == before


def test_new_cluster_in_a_fleet_with_its_own_charts(example_project: Path) -> None:
    # GIVEN a definition that enables a Helm chart file of its own and names a cdk8s chart of the project
    charts = example_project / "environments" / "charts"
    charts.mkdir()
    (charts / "podinfo-canary.yaml").write_text(
        "repository: oci://ghcr.io/stefanprodan/charts/podinfo\nversion: 6.7.1\nnamespace: podinfo-canary\n"
    )
    (example_project / "charts").mkdir()
    (example_project / "charts" / "fleet_info.py").write_text("def chart(scope, cluster):\n    pass\n")
    staging = example_project / "environments" / "staging.yaml"
    staging.write_text(
        staging.read_text().replace(
            "packs:\n", "clusterDefaults:\n  cdk8sCharts: [fleet-info]\npacks:\n  podinfo-canary: {}\n", 1
        )
    )
    assert load_plan(example_project).clusters
    # WHEN a cluster is added THEN the copy the edit is checked on knows the project's charts of both kinds
    assert run(example_project, "new-cluster", "fresh-1", "--env", "staging") == 0
    assert "fresh-1" in clusters_of(example_project)


def test_new_cluster_fields_reach_the_definition(example_project: Path) -> None:
    options = ["--region", "eu-west-1", "--kubernetes-version", "1.32", "--hub-access", "keyless"]
    options += ["--cidr", "10.250.0.0/16", "--availability-zones", "2"]
    assert run(example_project, "new-cluster", "production-euw2", "--env", "production", *options) == 0
    cluster = clusters_of(example_project)["production-euw2"]
    assert (cluster["region"], cluster["kubernetesVersion"], cluster["hubAccess"]) == ("eu-west-1", "1.32", "keyless")
    assert str(cluster["network"]["cidr"]) == "10.250.0.0/16"  # type: ignore[index]
    assert cluster["network"]["availabilityZones"] == 2  # type: ignore[index]
    # The rest comes from the environment's clusterDefaults, as for a cluster written by hand.
    assert cluster["nodeGroups"][0]["instanceTypes"] == ["m7i.xlarge", "m6i.xlarge"]  # type: ignore[index]
    text = (example_project / "environments/production.yaml").read_text()
    assert "# The hub's Flux reaches this cluster with its own IAM role" in text


def test_new_cluster_in_a_region_with_fewer_zones_than_the_default_uses_them_all(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(example_project, "new-cluster", "ml-usw1", "--env", "production", "--region", "us-west-1") == 0
    out = capsys.readouterr().out
    assert "us-west-1 has 2 availability zones, fewer than the environment's default" in out
    assert clusters_of(example_project)["ml-usw1"]["network"]["availabilityZones"] == 2  # type: ignore[index]
    # a region with the default's zones, and a count asked for, are written as given
    assert run(example_project, "new-cluster", "ml-use1", "--env", "production", "--region", "us-east-1") == 0
    assert "network" not in (example_project / "environments" / "production.yaml").read_text().split("ml-use1")[1]
    before = tree(example_project)
    assert (
        run(
            example_project,
            "new-cluster",
            "ml-usw1b",
            "--env",
            "production",
            "--region",
            "us-west-1",
            "--availability-zones",
            "3",
        )
        == EXIT_BAD_INPUT
    )
    assert "us-west-1 has 2 availability zones (us-west-1a, us-west-1b), got 3" in capsys.readouterr().err
    assert tree(example_project) == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["new-cluster", "staging-usw2", "--env", "staging"], "NAME: cluster 'staging-usw2' already exists"),
        (["new-cluster", "hub", "--env", "staging"], "NAME: cluster 'hub' already exists \\(environments/base.yaml"),
        (["new-cluster", "dev-1", "--env", "dev"], "--env: unknown environment 'dev' \\(environments: production, "),
        (["new-cluster", "Dev_1", "--env", "staging"], 'NAME: expected a DNS-1123 label (.*), got "Dev_1"'),
        (
            ["new-cluster", "s2", "--env", "staging", "--region", "mars-1"],
            'environments/staging.yaml: clusters\\[2\\].region: expected an AWS region such as us-west-2, got "mars-1"',
        ),
        (
            ["new-cluster", "s2", "--env", "staging", "--availability-zones", "1"],
            "environments/staging.yaml: clusters\\[2\\].network.availabilityZones: ",
        ),
        (["remove-cluster", "hub"], "NAME: 'hub' is the management cluster"),
        (["remove-cluster", "nowhere"], "NAME: unknown workload cluster 'nowhere' \\(clusters: production-euc1, "),
        (
            ["remove-cluster", "staging-usw2"],
            "environments/apps/notifications.yaml: clusters: app 'notifications' runs on cluster 'staging-usw2'; "
            "move it first \\(fluxplane offboard-app notifications --cluster staging-usw2\\)",
        ),
    ],
)
def test_bad_cluster_commands_exit_2_and_leave_every_file(
    example_project: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree(example_project)
    assert run(example_project, *args) == EXIT_BAD_INPUT
    captured = capsys.readouterr()
    assert captured.out == ""
    assert any(re.match(message, line) for line in captured.err.splitlines()), captured.err
    assert "Traceback" not in captured.err
    assert tree(example_project) == before


def test_remove_cluster_takes_its_sealed_secrets_and_says_what_goes(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(example_project, "remove-cluster", "production-usw2") == 0
    out = capsys.readouterr().out
    assert "deleted environments/secrets/production-usw2/flux-system/flux-system.yaml" in out
    assert "deleted environments/secrets/production-usw2/orders/orders-git.yaml" in out
    assert "Crossplane deletes the cluster" in out
    assert "apps that leave with it (placed by environment): orders" in out
    assert not (example_project / "environments/secrets/production-usw2").exists()
    assert "production-usw2" not in clusters_of(example_project)
    load_plan(example_project)  # what is left synthesizes


def test_removing_an_existing_cluster_says_its_aws_resources_stay(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the example's registered cluster WHEN removed THEN the note says AWS keeps it, and what the hub prunes
    assert run(example_project, "remove-cluster", "production-euc1") == 0
    out = capsys.readouterr().out
    assert (
        "environments/production.yaml: removed registered cluster 'production-euc1'; its AWS resources stay as they "
        "are, but when this change merges the hub prunes its chain, uninstalling what the hub installed there (its "
        "Flux among it, which synth asks you to confirm): fluxplane synth --delete '*/production-euc1/*'"
    ) in out
    assert "Crossplane deletes the cluster" not in out
    assert not (example_project / "environments/secrets/production-euc1").exists()
    # AND synth asks for that word: the hub would uninstall the cluster's Flux
    assert run(example_project, "synth") == EXIT_BAD_INPUT
    assert (
        "platform/spokes/production-euc1/flux/flux.yaml: HelmRelease production-euc1/flux: removed, so helm-controller "
        "uninstalls Flux from the cluster"
    ) in capsys.readouterr().err
    assert run(example_project, "synth", "--delete", "*/production-euc1/*") == 0


def test_dry_run_prints_the_change_and_writes_nothing(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree(example_project)
    assert run(example_project, "remove-cluster", "production-usw2", "--dry-run") == 0
    out = capsys.readouterr().out
    assert "-  - name: production-usw2" in out and out.rstrip().endswith("dry run: nothing written")
    assert tree(example_project) == before


# -- onboard-app and offboard-app ------------------------------------------------------------------

PAYMENTS = [
    "onboard-app",
    "payments",
    "--cluster",
    "staging-usw2",
    "--repo",
    "ssh://git@github.com/example-org/payments.git",
    "--path",
    "deploy",
    "--ref",
    "v2.0.1",
    "--team",
    "@example-org/payments",
    "--secret-ref",
    "payments-git",
]


def test_onboard_app_writes_the_app_file(example_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(example_project, *PAYMENTS) == 0
    out = capsys.readouterr().out
    assert "+++ b/environments/apps/payments.yaml" in out
    assert "fluxplane seal --cluster staging-usw2 --namespace payments --name payments-git --from-file identity=" in out
    text = (example_project / "environments/apps/payments.yaml").read_text()
    assert yaml.safe_load(text) == {
        "team": "@example-org/payments",
        "repository": {
            "url": "ssh://git@github.com/example-org/payments.git",
            "ref": {"tag": "v2.0.1"},
            "secretRef": "payments-git",
        },
        "path": "deploy",
        "clusters": ["staging-usw2"],
    }
    apps = {p.app.name: p for p in load_fleet(example_project).apps}
    assert apps["payments"].cluster == "staging-usw2"


def test_onboard_app_defaults_to_branch_main_and_the_app_namespace(example_project: Path) -> None:
    args = ["onboard-app", "web", "--env", "staging", "--repo", "https://github.com/example-org/web.git"]
    assert run(example_project, *args, "--path", "k8s", "--overlay", "cluster", "--namespace", "frontend") == 0
    data = yaml.safe_load((example_project / "environments/apps/web.yaml").read_text())
    assert data["repository"]["ref"] == {"branch": "main"}
    assert (data["overlay"], data["namespace"], data["environments"]) == ("cluster", "frontend", ["staging"])
    load_plan(example_project)  # a public repository needs no sealed secret: synth is ready


def test_onboard_app_adds_clusters_to_an_app_and_keeps_its_comments(example_project: Path) -> None:
    path = example_project / "environments/apps/orders.yaml"
    before = path.read_text()
    assert run(example_project, "onboard-app", "orders", "--cluster", "staging-usw2") == 0
    after = path.read_text()
    assert after == before.replace(
        "environments: [production]\n", "environments: [production]\nclusters: [staging-usw2]\n"
    )
    assert run(example_project, "onboard-app", "notifications", "--env", "production") == 0
    assert "environments: [production]" in (example_project / "environments/apps/notifications.yaml").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [*PAYMENTS[:4], "--repo", "git@github.com:example-org/payments.git", "--path", "deploy"],
            'environments/apps/payments.yaml: repository.url: expected an ssh:// or https:// Git URL, got "git@',
        ),
        (
            [*PAYMENTS[:6], "--path", "deploy", "--ref", "semver:latest"],
            "environments/apps/payments.yaml: repository.ref.semver: expected a semver range such as",
        ),
        (
            ["onboard-app", "payments", "--cluster", "staging-euw2", *PAYMENTS[4:]],
            "environments/apps/payments.yaml: clusters\\[0\\]: unknown workload cluster 'staging-euw2'",
        ),
        (
            [*PAYMENTS, "--namespace", "orders", "--env", "production"],
            "environments/apps/payments.yaml: namespace: app 'payments' and app 'orders' both claim namespace 'orders'",
        ),
        (["onboard-app", "payments", "--cluster", "staging-usw2"], "--repo and --path: required for a new app"),
        (["onboard-app", "payments", *PAYMENTS[4:]], "--cluster or --env: name at least one"),
        (["onboard-app", "orders", "--env", "production"], "environments/apps/orders.yaml: app 'orders' already runs"),
        (
            ["onboard-app", "orders", "--cluster", "staging-usw2", "--repo", "https://x.example/o.git"],
            "--repo: app 'orders' exists \\(environments/apps/orders.yaml\\); onboard-app only adds",
        ),
        (["onboard-app", "../etc", *PAYMENTS[2:]], 'NAME: expected a DNS-1123 label .*got "../etc"'),
        (["offboard-app", "ledger"], "NAME: unknown app 'ledger' \\(apps: notifications, orders\\)"),
        (
            ["offboard-app", "orders", "--cluster", "staging-usw2"],
            "--cluster: app 'orders' does not run on 'staging-usw2' \\(it runs on: production-usw2, production-use1, "
            "production-euw1\\)",
        ),
    ],
)
def test_bad_app_commands_exit_2_and_leave_every_file(
    example_project: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = tree(example_project)
    assert run(example_project, *args) == EXIT_BAD_INPUT
    captured = capsys.readouterr()
    assert captured.out == ""
    assert any(re.match(message, line) for line in captured.err.splitlines()), captured.err
    assert tree(example_project) == before


def test_offboard_app_from_one_cluster_of_its_environment_lists_the_others(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(example_project, "offboard-app", "orders", "--cluster", "production-use1") == 0
    out = capsys.readouterr().out
    assert "no longer follows environment 'production'" in out
    assert "deleted environments/secrets/production-use1/orders/orders-git.yaml" in out
    data = yaml.safe_load((example_project / "environments/apps/orders.yaml").read_text())
    # (the environment's other clusters it runs on: not the registered production-euc1, which it is left off)
    assert data["clusters"] == ["production-usw2", "production-euw1"] and "environments" not in data
    assert (example_project / "environments/secrets/production-usw2/orders/orders-git.yaml").exists()
    placements = [(p.app.name, p.cluster) for p in load_plan(example_project).apps]
    assert ("orders", "production-use1") not in placements and ("orders", "production-usw2") in placements


def test_offboard_app_everywhere_deletes_its_file_and_secrets(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(example_project, "offboard-app", "orders") == 0
    out = capsys.readouterr().out
    assert "deleted environments/apps/orders.yaml" in out
    assert "Crossplane deletes the app's AWS resources there" in out
    assert not (example_project / "environments/apps/orders.yaml").exists()
    assert not any((example_project / "environments/secrets").glob("*/orders"))
    assert [p.app.name for p in load_plan(example_project).apps] == ["notifications"]


def test_onboard_then_offboard_gives_back_the_definition(example_project: Path) -> None:
    before = tree(example_project)
    assert (
        run(
            example_project,
            "onboard-app",
            "web",
            "--cluster",
            "staging-usw2",
            "--repo",
            "https://github.com/example-org/web.git",
            "--path",
            "deploy",
        )
        == 0
    )
    assert run(example_project, "offboard-app", "web") == 0
    assert tree(example_project) == before


# -- symbolic links in the definition --------------------------------------------------------------

#: What a file outside the project might hold; no command may show, change or delete it.
SECRET_LINE = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
LINK_OUT = (
    "environments/{link}: a symbolic link to a {kind} outside environments/ ({target}); fluxplane reads only the "
    "definition's own files: replace the link with the {kind}"
)
LINK_IN = (
    "environments/{link}: a symbolic link (to {target}); the command writes and deletes only files of environments/ "
    "itself, never through a link: replace the link with what it points to, or make the change by hand; nothing written"
)


def files_of(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


@pytest.mark.parametrize("dry_run", [["--dry-run"], []], ids=["dry-run", "written"])
@pytest.mark.parametrize(
    ("link", "args"),
    [
        ("secrets/production-usw2", ["remove-cluster", "production-usw2"]),
        ("secrets/production-use1/orders", ["offboard-app", "orders", "--cluster", "production-use1"]),
        ("secrets/production-usw2/flux-system/flux-system.yaml", ["remove-cluster", "production-usw2"]),
        ("apps/orders.yaml", ["offboard-app", "orders"]),
    ],
)
def test_a_link_out_of_the_definition_is_neither_deleted_through_nor_shown(
    example_project: Path,
    tmp_path: Path,
    link: str,
    args: list[str],
    dry_run: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN what a command deletes as a link to a place beside the project: a folder of sealed secrets moved
    # there, or a file holding a secret-looking line
    outside = tmp_path / "outside"
    outside.mkdir()
    path = example_project / "environments" / link
    if path.is_dir():
        target, kind = outside / path.name, "folder"
        path.rename(target)
    else:
        target, kind = outside / "credentials", "file"
        target.write_text(SECRET_LINE)
        path.unlink()
    path.symlink_to(target, target_is_directory=kind == "folder")
    before, held = tree(example_project), files_of(outside)

    # WHEN the command runs THEN it refuses the link in one line, and shows, changes and deletes nothing
    assert run(example_project, *args, *dry_run) == EXIT_BAD_INPUT
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [LINK_OUT.format(link=link, kind=kind, target=target)]
    assert "AWS_SECRET_ACCESS_KEY" not in captured.err
    assert files_of(outside) == held
    assert tree(example_project) == before


@pytest.mark.parametrize("dry_run", [["--dry-run"], []], ids=["dry-run", "written"])
@pytest.mark.parametrize(
    ("link", "args", "absolute"),
    [
        ("secrets/production-usw2", ["remove-cluster", "production-usw2"], True),
        ("secrets/production-usw2", ["remove-cluster", "production-usw2"], False),
        (
            "secrets/production-use1/orders/orders-git.yaml",
            ["offboard-app", "orders", "--cluster", "production-use1"],
            True,
        ),
        ("apps/orders.yaml", ["onboard-app", "orders", "--cluster", "staging-usw2"], False),
    ],
)
def test_a_link_within_the_definition_is_neither_written_nor_deleted_through(
    example_project: Path,
    link: str,
    args: list[str],
    absolute: bool,
    dry_run: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # GIVEN what a command writes or deletes as a link to a file or folder kept elsewhere in environments/
    env_dir = example_project / "environments"
    path, shared = env_dir / link, env_dir / "shared"
    shared.mkdir()
    path.rename(shared / path.name)
    target = shared / path.name if absolute else Path(os.path.relpath(shared / path.name, path.parent))
    path.symlink_to(target, target_is_directory=(shared / path.name).is_dir())
    before, held = tree(example_project), files_of(shared)

    # WHEN the command runs THEN it refuses the link, and leaves the link and what it leads to as they were
    assert run(example_project, *args, *dry_run) == EXIT_BAD_INPUT
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [LINK_IN.format(link=link, target=target)]
    assert path.is_symlink()
    assert files_of(shared) == held
    assert tree(example_project) == before


def test_a_link_standing_where_a_command_stages_its_change_is_not_written_through(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a link to environments/ where an edit stages its change (it can come with a pull request)
    env_dir = example_project / "environments"
    (example_project / ".fluxplane-edit").symlink_to(env_dir)
    before = files_of(env_dir)

    # WHEN a command edits staging.yaml THEN the link goes as a link, and only staging.yaml changes
    assert run(example_project, "new-cluster", "staging-use2", "--env", "staging") == 0
    assert "note: .fluxplane-edit: removed (not a folder fluxplane made)" in capsys.readouterr().err
    assert not (example_project / ".fluxplane-edit").exists()
    after = files_of(env_dir)
    assert {name for name in after if after[name] != before.get(name)} == {"staging.yaml"}
    assert set(after) == set(before)


@pytest.mark.parametrize("path", ["environments/../notes.txt", "dist/notes.txt", "environments", "/tmp/notes.txt"])
def test_an_edit_writes_only_below_environments(example_project: Path, path: str) -> None:
    # GIVEN an edit of a path that is not below environments/ WHEN carried out THEN it is refused, writing nothing
    before = tree(example_project)
    with pytest.raises(ConfigError, match=f"^{re.escape(path)}: not a path below environments/; nothing written$"):
        carry_out(Edit(example_project, {path: SECRET_LINE}), dry_run=True)
    assert not (example_project / "notes.txt").exists() and not (example_project / "dist/notes.txt").exists()
    assert tree(example_project) == before


def test_a_link_within_the_definition_leads_within_the_copy_a_command_checks(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a sealed secret that is an absolute link to a file kept elsewhere in environments/
    env_dir = example_project / "environments"
    secret = env_dir / "secrets/production-usw2/orders/orders-git.yaml"
    (env_dir / "shared").mkdir()
    secret.rename(env_dir / "shared/orders-git.yaml")
    secret.symlink_to(env_dir / "shared/orders-git.yaml")
    held = files_of(env_dir / "shared")

    # WHEN a change elsewhere is made THEN it is checked with the link read as it is, and the link stays
    assert run(example_project, "offboard-app", "orders", "--cluster", "production-use1") == 0
    assert "deleted environments/secrets/production-use1/orders/orders-git.yaml" in capsys.readouterr().out
    assert secret.is_symlink() and files_of(env_dir / "shared") == held
    assert ("orders", "production-usw2") in [(p.app.name, p.cluster) for p in load_plan(example_project).apps]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("v1.4.2", ("tag", "v1.4.2")),
        ("1.4.2", ("tag", "1.4.2")),
        ("v2.0.0-rc.1", ("tag", "v2.0.0-rc.1")),
        (">=1.4.0 <2.0.0", ("semver", ">=1.4.0 <2.0.0")),
        ("~1.4", ("semver", "~1.4")),
        ("1.x", ("semver", "1.x")),
        ("main", ("branch", "main")),
        ("release/1.4", ("branch", "release/1.4")),
        ("tag:prod", ("tag", "prod")),
        ("branch:v1.2.3", ("branch", "v1.2.3")),
        ("semver:1.4.2", ("semver", "1.4.2")),
    ],
)
def test_parse_ref(value: str, expected: tuple[str, str]) -> None:
    assert parse_ref(value) == expected


def test_parse_ref_needs_a_value() -> None:
    with pytest.raises(ConfigError, match=r"^--ref: tag: needs a value, e.g. tag:v1.4.2$"):
        parse_ref("tag:")


def readme_transcripts() -> list[tuple[list[str], str]]:
    """Each ``$ fluxplane <edit command>`` in the guide to changing the definition from the command line, with the
    output shown."""
    guide = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "edit-from-the-command-line.md"
    section = guide.read_text()
    transcripts = []
    for block in re.findall(r"```text\n(.*?)```", section, flags=re.S):
        for command, output in re.findall(r"^\$ fluxplane (.*)\n((?:(?!\$ ).*\n)*)", block, flags=re.M):
            transcripts.append((shlex.split(command), output))
    return transcripts


@pytest.mark.parametrize(("args", "shown"), readme_transcripts(), ids=lambda value: str(value)[:40])
def test_the_guide_shows_what_the_commands_print(
    example_project: Path, args: list[str], shown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run(example_project, *args)
    captured = capsys.readouterr()
    assert captured.out + captured.err == shown
    assert code == (0 if captured.out else EXIT_BAD_INPUT)
