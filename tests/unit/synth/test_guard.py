"""The replacement guard: replacing, deleting or moving a live object needs the user's word."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fluxplane.cli import EXIT_BAD_INPUT, main
from fluxplane.config.network import FollowedVersion
from fluxplane.constructs.composition import CompositionProps
from fluxplane.core.codec import dump_documents, parse_documents
from fluxplane.core.tree import Folders, LazyDocuments
from fluxplane.errors import ConfigError
from fluxplane.kinds.app import AppKind
from fluxplane.synth import guard as guard_module
from fluxplane.synth import synthesize
from fluxplane.synth.guard import guard, read_tree
from fluxplane.synth.scan import list_tree
from tests.conftest import ROOT, FleetWriter

_guard = guard


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Each test that calls guard() runs twice (the ``listing`` fixture)."""
    if "guard" in metafunc.function.__code__.co_names:
        metafunc.parametrize("listing", ["listed here", "listed beforehand"], indirect=True)


@pytest.fixture(autouse=True)
def listing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The guard lists and looks at dist/ itself, or ("listed beforehand") reads a listing taken just before it
    (fluxplane.synth.scan), as synth's writes of a large tree do."""
    chosen = getattr(request, "param", "listed here")
    if chosen == "listed beforehand":

        def listed_first(files: Any, outdir: Path, **options: Any) -> list[str]:
            return _guard(files, outdir, listed=list_tree(outdir), **options)

        monkeypatch.setattr(sys.modules[__name__], "guard", listed_first)
    return str(chosen)


APPLIED_BY = "fluxplane.io/applied-by"


def cluster(cidr: str = "10.1.0.0/16", region: str = "us-west-2", applier: str | None = "a/cluster") -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "a", "namespace": "a"}
    if applier:
        metadata["annotations"] = {APPLIED_BY: applier}
    return {
        "apiVersion": "platform.fluxplane.io/v1alpha1",
        "kind": "EKSCluster",
        "metadata": metadata,
        "spec": {"region": region, "network": {"vpcCidr": cidr}},
    }


def table(name: str = "shop-table-orders") -> dict[str, Any]:
    return {
        "apiVersion": "platform.fluxplane.io/v1alpha1",
        "kind": "AppTable",
        "metadata": {"name": name, "namespace": "a"},
        "spec": {"region": "us-west-2", "tableName": f"a-{name}", "hashKey": "id"},
    }


def write(root: Path, files: dict[str, list[dict[str, Any]]]) -> Path:
    for path, documents in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(dump_documents(documents))
    return root


def texts(files: dict[str, list[dict[str, Any]]]) -> dict[str, str]:
    return {path: dump_documents(documents) for path, documents in files.items()}


FILE = "platform/spokes/a/cluster/cluster.yaml"


def test_a_new_tree_over_nothing_is_never_refused(tmp_path: Path) -> None:
    assert guard(texts({FILE: [cluster()]}), tmp_path / "dist", hub="hub") == []


def test_an_unchanged_tree_is_never_refused(tmp_path: Path) -> None:
    dist = write(tmp_path / "dist", {FILE: [cluster()]})
    assert guard(texts({FILE: [cluster()]}), dist, hub="hub") == []


def test_a_changed_vpc_cidr_and_region_are_refused_one_line_each_unless_allowed(tmp_path: Path) -> None:
    # GIVEN a cluster whose CIDR and region change
    dist = write(tmp_path / "dist", {FILE: [cluster()]})
    files = texts({FILE: [cluster(cidr="10.2.0.0/16", region="us-east-1")]})
    # WHEN guarded THEN each replacing field is one line, naming the flag that allows it
    assert guard(files, dist, hub="hub") == [
        f"{FILE}: EKSCluster a/a: spec.region changes from us-west-2 to us-east-1, which replaces the cloud resource "
        "(deleted and made anew); to do it on purpose, run synth with --replace 'EKSCluster/a/a'",
        f"{FILE}: EKSCluster a/a: spec.network.vpcCidr changes from 10.1.0.0/16 to 10.2.0.0/16, which replaces the "
        "cloud resource (deleted and made anew); to do it on purpose, run synth with --replace 'EKSCluster/a/a'",
    ]
    # AND the user's word, exact or with wildcards, allows it
    assert guard(files, dist, hub="hub", replace=["EKSCluster/a/a"]) == []
    assert guard(files, dist, hub="hub", replace=["EKSCluster/*"]) == []
    assert len(guard(files, dist, hub="hub", replace=["AppTable/*"])) == 2


def test_a_kubernetes_immutable_field_is_refused_as_the_api_server_would(tmp_path: Path) -> None:
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "shop", "namespace": "shop"},
        "roleRef": {"kind": "Role", "name": "shop"},
    }
    dist = write(tmp_path / "dist", {"workloads/shop.yaml": [binding]})
    changed = {**binding, "roleRef": {"kind": "ClusterRole", "name": "admin"}}
    (line,) = guard(texts({"workloads/shop.yaml": [changed]}), dist, hub="hub")
    assert line == (
        "workloads/shop.yaml: RoleBinding shop/shop: roleRef changes, which is refused by the API server: the object "
        "has to be made anew; to do it on purpose, run synth with --replace 'RoleBinding/shop/shop'"
    )


def test_an_object_moved_to_another_file_is_still_the_same_object(tmp_path: Path) -> None:
    # GIVEN the cluster written elsewhere, with the same fields WHEN guarded THEN nothing is refused
    dist = write(tmp_path / "dist", {"platform/old/cluster.yaml": [cluster()]})
    assert guard(texts({FILE: [cluster()]}), dist, hub="hub") == []
    # AND a changed field is found across files
    assert len(guard(texts({FILE: [cluster(cidr="10.9.0.0/16")]}), dist, hub="hub")) == 1


def test_removing_a_cluster_or_an_apps_data_is_refused_unless_allowed(tmp_path: Path) -> None:
    # GIVEN a cluster and a table that the new tree no longer has (an app renamed, say)
    dist = write(tmp_path / "dist", {FILE: [cluster()], "platform/cloud/a/shop.yaml": [table()]})
    # WHEN guarded THEN each deletion is one line saying what AWS loses
    assert guard({}, dist, hub="hub") == [
        "platform/cloud/a/shop.yaml: AppTable a/shop-table-orders: removed, so Crossplane deletes the DynamoDB table "
        "and its data in AWS (renaming is removing and adding); to do it on purpose, run synth with --delete "
        "'AppTable/a/shop-table-orders'",
        f"{FILE}: EKSCluster a/a: removed, so Crossplane deletes the EKS cluster, its node groups and its VPC in AWS "
        "(renaming is removing and adding); to do it on purpose, run synth with --delete 'EKSCluster/a/a'",
    ]
    assert guard({}, dist, hub="hub", delete=["*"]) == []


def test_a_move_to_another_kustomization_is_refused_until_the_old_one_is_suspended(tmp_path: Path) -> None:
    # GIVEN a cluster applied by one Kustomization, now by another
    dist = write(tmp_path / "dist", {FILE: [cluster(applier="flux-system/workload-clusters")]})
    files = texts({FILE: [cluster(applier="a/cluster")]})
    # WHEN guarded THEN the move is refused, saying what to suspend, and a last line gives every command
    assert guard(files, dist, hub="hub") == [
        f"{FILE}: EKSCluster a/a: now applied by Kustomization a/cluster instead of flux-system/workload-clusters, "
        "which deletes it when it stops applying it, before a/cluster takes it over; suspend "
        "flux-system/workload-clusters on the hub first, then run synth with --move 'EKSCluster/a/a'",
        "to move them all: on the hub, flux suspend kustomization workload-clusters -n flux-system; then run synth "
        "with --move '*', merge, and resume those that remain once the objects are adopted",
    ]
    assert guard(files, dist, hub="hub", move=["EKSCluster/a/*"]) == []


RELEASES = "platform/infrastructure/controllers/goldilocks/base/goldilocks.yaml"


def helm_release(name: str = "goldilocks", **spec: str) -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": name, "namespace": "flux-system"},
        "spec": {"interval": "30m", "chartRef": {"kind": "OCIRepository", "name": name}, **spec},
    }


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # the names helm-controller gives the release when none is set, now written out
        ({"targetNamespace": "goldilocks"}, {"targetNamespace": "goldilocks", "releaseName": "goldilocks-goldilocks"}),
        ({}, {"releaseName": "goldilocks", "targetNamespace": "flux-system", "storageNamespace": "flux-system"}),
        ({"targetNamespace": "goldilocks"}, {"targetNamespace": "goldilocks", "storageNamespace": "flux-system"}),
    ],
)
def test_naming_a_release_as_it_is_named_already_is_no_reinstallation(
    tmp_path: Path, before: dict[str, str], after: dict[str, str]
) -> None:
    # GIVEN a release whose name and namespaces are helm-controller's defaults, now written out as they are
    dist = write(tmp_path / "dist", {RELEASES: [helm_release(**before)]})
    # WHEN guarded THEN the release stays where it is: nothing is refused
    assert guard(texts({RELEASES: [helm_release(**after)]}), dist, hub="hub") == []


def test_a_release_name_helm_controller_shortened_is_the_same_release(tmp_path: Path) -> None:
    # GIVEN a release whose [targetNamespace-]name is longer than Helm allows: helm-controller shortened it
    long = {"targetNamespace": "release-name-with-very-long-name"}
    dist = write(tmp_path / "dist", {RELEASES: [helm_release("which-is-longer-than-53-characters", **long)]})
    # WHEN the release is named as helm-controller named it (its own test's example, internal/release/name_test.go)
    shortened = "release-name-with-very-long-name-which-i-788ca0d0d7b0"
    named = helm_release("which-is-longer-than-53-characters", **long, releaseName=shortened)
    # THEN nothing is refused
    assert guard(texts({RELEASES: [named]}), dist, hub="hub") == []


@pytest.mark.parametrize(
    ("after", "change"),
    [
        ({"releaseName": "vpa"}, "vpa in goldilocks (stored in flux-system)"),
        ({"storageNamespace": "goldilocks"}, "goldilocks in goldilocks"),
        ({"targetNamespace": "kube-system"}, "goldilocks in kube-system (stored in flux-system)"),
    ],
)
def test_another_release_name_or_namespace_is_a_reinstallation_refused_unless_named(
    tmp_path: Path, after: dict[str, str], change: str
) -> None:
    # GIVEN a release as a chart file's pack makes it (its name, its namespace, stored in flux-system)
    made = {"releaseName": "goldilocks", "targetNamespace": "goldilocks"}
    dist = write(tmp_path / "dist", {RELEASES: [helm_release(**made)]})
    files = texts({RELEASES: [helm_release(**{**made, **after})]})
    # WHEN its name, its storage or its namespace changes THEN the reinstallation is refused, in one line
    problems = guard(files, dist, hub="hub")
    assert problems == [
        f"{RELEASES}: HelmRelease flux-system/goldilocks: the release moves from goldilocks in goldilocks (stored in "
        f"flux-system) to {change}, so helm-controller uninstalls it, deleting what it installed, before it installs "
        "the new one; to do it on purpose, run synth with --replace 'HelmRelease/flux-system/goldilocks'"
    ]
    # AND the user's word allows it
    assert guard(files, dist, hub="hub", replace=["HelmRelease/flux-system/goldilocks"]) == []


def test_another_chart_under_the_same_release_is_a_reinstallation_refused_unless_named(tmp_path: Path) -> None:
    # GIVEN a release of chart goldilocks from a HelmRepository
    def of(chart: str) -> dict[str, Any]:
        made = helm_release()
        del made["spec"]["chartRef"]
        made["spec"]["chart"] = {"spec": {"chart": chart, "sourceRef": {"kind": "HelmRepository", "name": "charts"}}}
        return made

    dist = write(tmp_path / "dist", {RELEASES: [of("goldilocks")]})
    files = texts({RELEASES: [of("vpa")]})
    # WHEN it installs chart vpa under the same release THEN the reinstallation is refused, in one line
    assert guard(files, dist, hub="hub") == [
        f"{RELEASES}: HelmRelease flux-system/goldilocks: the chart of release goldilocks in flux-system changes from "
        "goldilocks to vpa, so helm-controller uninstalls it, deleting what it installed, before it installs the new "
        "one; to do it on purpose, run synth with --replace 'HelmRelease/flux-system/goldilocks'"
    ]
    # AND the user's word allows it
    assert guard(files, dist, hub="hub", replace=["HelmRelease/flux-system/goldilocks"]) == []


def test_a_tree_written_before_objects_named_their_applier_is_followed_to_find_it(tmp_path: Path) -> None:
    # GIVEN an old tree whose cluster has no annotation: the hub's Kustomization workload-clusters applies
    # the folder that holds it, the way Flux reads the tree (from the GitRepository of the hub's bootstrap)
    def kustomization(name: str, path: str) -> dict[str, Any]:
        return {
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "metadata": {"name": name, "namespace": "flux-system"},
            "spec": {"path": path, "sourceRef": {"kind": "GitRepository", "name": "flux-system"}, "prune": True},
        }

    source = {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "GitRepository",
        "metadata": {"name": "flux-system", "namespace": "flux-system"},
        "spec": {"url": "ssh://git@example.com/org/fleet.git", "ref": {"branch": "main"}},
    }
    bootstrap = kustomization("flux-system", "./dist/platform/clusters/hub")
    hub_kustomization = kustomization("workload-clusters", "./dist/platform/legacy")
    old: dict[str, list[dict[str, Any]]] = {
        "platform/clusters/hub/kustomization.yaml": [
            {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": ["infra.yaml"]}
        ],
        "platform/clusters/hub/infra.yaml": [source, bootstrap, hub_kustomization],
        "platform/legacy/kustomization.yaml": [
            {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": ["c.yaml"]}
        ],
        "platform/legacy/c.yaml": [cluster(applier=None)],
    }
    dist = write(tmp_path / "dist", old)
    # WHEN the new tree says its chain applies it THEN the move is found
    (line, _) = guard(texts({FILE: [cluster()]}), dist, hub="hub")
    assert "now applied by Kustomization a/cluster instead of flux-system/workload-clusters" in line


def test_the_old_tree_is_read_without_following_symlinks(tmp_path: Path) -> None:
    # GIVEN a dist/ with a symlink to a file outside it
    outside = tmp_path / "outside.yaml"
    outside.write_text(dump_documents([cluster()]))
    dist = write(tmp_path / "dist", {"platform/own.yaml": [table()]})
    os.symlink(outside, dist / "platform" / "link.yaml")
    (dist / "platform" / "folder-link").symlink_to(tmp_path, target_is_directory=True)
    # WHEN read THEN only its own files are
    assert sorted(read_tree(dist)) == ["platform/own.yaml"]


@pytest.mark.parametrize("text", ["bad: 2024-02-30\n", "bad: !!int x\n", "kind: Kustomization\nbad: !!float y\n"])
def test_an_old_file_that_yaml_reads_but_python_cannot_guards_nothing(tmp_path: Path, text: str) -> None:
    # GIVEN a file of the old tree with a value the YAML reader cannot make (an impossible date, a bad tag)
    dist = write(tmp_path / "dist", {"platform/own.yaml": [table()]})
    (dist / "platform" / "odd.yaml").write_text("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n" + text)
    (dist / "platform" / "kustomization.yaml").write_text(text)
    # WHEN guarded THEN it is read as no object, without a traceback, and never quoted
    assert guard(texts({"platform/own.yaml": [table()]}), dist, hub="hub") == []


def test_synth_refuses_a_replacement_writes_nothing_and_allows_it_on_the_users_word(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the example fleet synthesized, then staging-usw2 pinned to another range
    assert main(["--root", str(example_project), "synth"]) == 0
    dist = read_tree(example_project / "dist")
    recorded = (example_project / "environments/allocations.yaml").read_bytes()
    staging = example_project / "environments/staging.yaml"
    staging.write_text(
        staging.read_text().replace(
            "  - name: staging-usw2\n", "  - name: staging-usw2\n    network: {cidr: 10.50.0.0/16}\n"
        )
    )
    capsys.readouterr()
    # WHEN synthesized THEN exit 2, one line per refused change, and neither dist/ nor the record is touched
    assert main(["--root", str(example_project), "synth"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.splitlines()
    assert (
        "platform/spokes/staging-usw2/cluster/cluster.yaml: EKSCluster staging-usw2/staging-usw2: spec.network.vpcCidr "
        "changes from 10.198.0.0/16 to 10.50.0.0/16, which replaces the cloud resource (deleted and made anew); to do "
        "it on purpose, run synth with --replace 'EKSCluster/staging-usw2/staging-usw2'"
    ) in err
    assert err[-1] == f"{example_project / 'dist'}: nothing written"
    assert read_tree(example_project / "dist") == dist
    assert (example_project / "environments/allocations.yaml").read_bytes() == recorded
    # AND with the user's word it is written, and recorded
    assert main(["--root", str(example_project), "synth", "--replace", "EKSCluster/staging-usw2/*"]) == 0
    assert "  staging-usw2: 10.50.0.0/16\n" in (example_project / "environments/allocations.yaml").read_text()


def test_a_new_cluster_added_with_the_command_is_never_refused(example_project: Path) -> None:
    # GIVEN the example fleet synthesized WHEN a cluster is added and synthesized THEN nothing is refused
    assert main(["--root", str(example_project), "synth"]) == 0
    assert main(["--root", str(example_project), "new-cluster", "staging-use2", "--env", "staging"]) == 0
    secrets = example_project / "environments/secrets"
    (secrets / "staging-use2/flux-system").mkdir(parents=True)
    source = secrets / "staging-usw2/flux-system/flux-system.yaml"
    (secrets / "staging-use2/flux-system/flux-system.yaml").write_text(source.read_text())
    assert main(["--root", str(example_project), "synth"]) == 0


def test_removing_a_cluster_with_the_command_needs_the_word_at_synth(
    example_project: Path, capsys: pytest.CaptureFixture[str], write_fleet: FleetWriter
) -> None:
    # GIVEN the example fleet synthesized WHEN production-usw2 is removed and synthesized
    assert main(["--root", str(example_project), "synth"]) == 0
    assert main(["--root", str(example_project), "offboard-app", "orders", "--cluster", "production-usw2"]) == 0
    assert main(["--root", str(example_project), "remove-cluster", "production-usw2"]) == 0
    capsys.readouterr()
    # THEN the cluster and the app's table there are named, and --delete allows them
    assert main(["--root", str(example_project), "synth"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "EKSCluster production-usw2/production-usw2: removed, so Crossplane deletes the EKS cluster" in err
    # (production-usw2 makes its apps' resources: the table's composite is in the app's namespace there)
    assert "AppTable orders/orders-table-orders: removed" in err
    delete = ["--delete", "*/production-usw2/*", "--delete", "AppTable/orders/*"]
    assert main(["--root", str(example_project), "synth", *delete]) == 0


def versioned(version: str) -> dict[str, Any]:
    document = cluster()
    document["spec"]["kubernetesVersion"] = version
    return document


@pytest.mark.parametrize(
    ("old", "new", "refused"),
    [
        ("1.34", "1.35", None),
        ("1.34", "1.34", None),
        ("1.9", "1.10", None),
        ("1.34", "1.36", "EKS upgrades a cluster one minor version at a time"),
        ("1.35", "1.34", "EKS cannot downgrade a cluster"),
    ],
)
def test_a_kubernetes_version_eks_refuses_is_refused_whatever_the_recorded_versions_say(
    tmp_path: Path, old: str, new: str, refused: str | None
) -> None:
    dist = write(tmp_path / "dist", {FILE: [versioned(old)]})
    problems = guard(texts({FILE: [versioned(new)]}), dist, hub="hub", replace=["*"])
    if refused is None:
        assert problems == []
    else:
        assert problems == [
            f"{FILE}: EKSCluster a/a: spec.kubernetesVersion changes from {old} to {new}, which {refused}; set "
            "kubernetesVersion to the next minor version of the one in dist/ (the versions recorded in "
            "environments/allocations.yaml disagree with it)"
        ]


def test_a_tampered_recorded_version_cannot_skip_a_clusters_upgrade(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the record claims staging-usw2 runs 1.36 while dist/ has it on 1.35, and the definition asks for 1.37
    allocations = example_project / "environments" / "allocations.yaml"
    text = allocations.read_text()
    assert 'staging-usw2: "1.35"' in text
    allocations.write_text(text.replace('staging-usw2: "1.35"', 'staging-usw2: "1.36"'))
    staging = example_project / "environments" / "staging.yaml"
    staging.write_text(
        staging.read_text().replace(
            "  - name: staging-usw2\n", '  - name: staging-usw2\n    kubernetesVersion: "1.37"\n'
        )
    )
    written = example_project / "dist" / "platform" / "spokes" / "staging-usw2" / "cluster" / "cluster.yaml"
    before = written.read_bytes()
    capsys.readouterr()
    # WHEN synthesized, even with --replace THEN exit 2 with the reason, and dist/ is untouched
    assert main(["--root", str(example_project), "synth", "--replace", "*"]) == EXIT_BAD_INPUT
    assert "spec.kubernetesVersion changes from 1.35 to 1.37, which EKS upgrades a cluster one minor version" in (
        capsys.readouterr().err
    )
    assert written.read_bytes() == before


def cluster_vars(version: str | None) -> dict[str, Any]:
    data = {"cluster_name": "a"} | ({"kubernetes_version": version} if version else {})
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cluster-vars"}, "data": data}


VARS = "platform/clusters/a/cluster-vars.yaml"
FOLLOWED = FollowedVersion(
    "1.36", "environments/allocations.yaml: kubernetesVersions.a", "environments/e.yaml: clusters[0].kubernetesVersion"
)


def test_a_version_only_the_record_moves_is_refused_at_the_record_in_one_line(tmp_path: Path) -> None:
    # GIVEN a cluster on 1.34 in dist/, whose definition names no version, and a record that says 1.36
    dist = write(tmp_path / "dist", {FILE: [versioned("1.34")], VARS: [cluster_vars("1.34")]})
    files = texts({FILE: [versioned("1.36")], VARS: [cluster_vars("1.36")]})
    # WHEN guarded, whatever the flags THEN one line, at the record, says where the definition upgrades it
    assert guard(files, dist, hub="hub", replace=["*"], followed_versions={"a": FOLLOWED}) == [
        'environments/allocations.yaml: kubernetesVersions.a: "1.36" would move the cluster from Kubernetes 1.34, '
        f"its version in dist/ ({VARS}), though its definition names no version; the record only follows the "
        'definition: put back "1.34", or upgrade the cluster with kubernetesVersion: "1.35" at environments/e.yaml: '
        "clusters[0].kubernetesVersion"
    ]
    # AND a record without the cluster's entry, which gives it the default, is refused the same way
    missing = replace(FOLLOWED, recorded=None)
    assert guard(files, dist, hub="hub", followed_versions={"a": missing})[0].startswith(
        'environments/allocations.yaml: kubernetesVersions.a: nothing recorded, so the default "1.36" would move the '
        "cluster from Kubernetes 1.34"
    )
    # AND the hub, which has variables but no EKSCluster, too
    hub = "platform/clusters/hub/cluster-vars.yaml"
    dist = write(tmp_path / "hub", {hub: [cluster_vars("1.34")]})
    assert len(guard(texts({hub: [cluster_vars("1.35")]}), dist, hub="hub", followed_versions={"hub": FOLLOWED})) == 1


@pytest.mark.parametrize(
    ("old", "followed"),
    [
        ("1.34", {}),  # the definition names the version: its upgrade is checked at the definition
        (None, {"a": FOLLOWED}),  # a tree from before clusters' variables held their version
    ],
)
def test_a_version_the_definition_names_or_a_tree_without_one_is_not_the_records(
    tmp_path: Path, old: str | None, followed: dict[str, FollowedVersion]
) -> None:
    dist = write(tmp_path / "dist", {VARS: [cluster_vars(old)]})
    assert guard(texts({VARS: [cluster_vars("1.35")]}), dist, hub="hub", followed_versions=followed) == []


def test_variables_that_do_not_change_are_not_parsed_for_their_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a cluster whose definition names no version, whose variables stay as they are while another file changes
    dist = write(tmp_path / "dist", {FILE: [versioned("1.34")], VARS: [cluster_vars("1.34")]})
    files = texts({FILE: [cluster(cidr="10.1.0.0/16")], VARS: [cluster_vars("1.34")]})
    parsed: list[str | None] = []
    monkeypatch.setattr(guard_module, "_kubernetes_version", lambda text: parsed.append(text))
    # WHEN guarded THEN only changed variables are read for their version: none here (a fleet's thousand are not)
    guard(files, dist, hub="hub", followed_versions={"a": FOLLOWED})
    assert parsed == []


def test_an_edited_record_alone_never_upgrades_a_cluster(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN clusters whose definition names no kubernetesVersion: staging-usw2 follows its record, 1.35 as in dist/
    base = example_project / "environments" / "base.yaml"
    base.write_text(base.read_text().replace('  kubernetesVersion: "1.35"\n  tags:\n', "  tags:\n"))
    staging = (example_project / "environments" / "staging.yaml").read_text()
    assert "kubernetesVersion" not in staging
    # AND its record edited to 1.36
    allocations = example_project / "environments" / "allocations.yaml"
    text = allocations.read_text()
    allocations.write_text(text.replace('staging-usw2: "1.35"', 'staging-usw2: "1.36"'))
    dist = read_tree(example_project / "dist")
    capsys.readouterr()
    # WHEN synthesized, even with every flag THEN exit 2, at the record, and nothing is written
    every = ["--replace", "*", "--delete", "*", "--move", "*"]
    assert main(["--root", str(example_project), "synth", *every]) == EXIT_BAD_INPUT
    # (the example's notes aside: an app left off its registered cluster)
    assert [line for line in capsys.readouterr().err.splitlines() if not line.startswith("note: ")] == [
        'environments/allocations.yaml: kubernetesVersions.staging-usw2: "1.36" would move the cluster from '
        "Kubernetes 1.35, its version in dist/ (platform/clusters/staging-usw2/cluster-vars.yaml), though its "
        'definition names no version; the record only follows the definition: put back "1.35", or upgrade the '
        'cluster with kubernetesVersion: "1.36" at environments/staging.yaml: clusters[0].kubernetesVersion',
        f"{example_project / 'dist'}: nothing written",
    ]
    assert read_tree(example_project / "dist") == dist
    # AND the library refuses it alike
    with pytest.raises(ConfigError, match=r"kubernetesVersions\.staging-usw2: \"1\.36\" would move the cluster"):
        synthesize(example_project, replace=["*"])
    # AND the definition's own kubernetesVersion upgrades it, and the record follows
    (example_project / "environments" / "staging.yaml").write_text(
        staging.replace("  - name: staging-usw2\n", '  - name: staging-usw2\n    kubernetesVersion: "1.36"\n')
    )
    assert main(["--root", str(example_project), "synth"]) == 0
    assert 'staging-usw2: "1.36"' in allocations.read_text()


def test_an_edited_range_in_the_record_is_a_replacement_the_guard_refuses(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN staging-usw2's recorded range edited (its definition pins none)
    allocations = example_project / "environments" / "allocations.yaml"
    allocations.write_text(allocations.read_text().replace("staging-usw2: 10.198.0.0/16", "staging-usw2: 10.50.0.0/16"))
    dist = read_tree(example_project / "dist")
    capsys.readouterr()
    # WHEN synthesized THEN the move is refused as the replacement it is, and nothing is written
    assert main(["--root", str(example_project), "synth"]) == EXIT_BAD_INPUT
    assert (
        "platform/spokes/staging-usw2/cluster/cluster.yaml: EKSCluster staging-usw2/staging-usw2: spec.network.vpcCidr "
        "changes from 10.198.0.0/16 to 10.50.0.0/16, which replaces the cloud resource (deleted and made anew); to do "
        "it on purpose, run synth with --replace 'EKSCluster/staging-usw2/staging-usw2'"
    ) in capsys.readouterr().err.splitlines()
    assert read_tree(example_project / "dist") == dist


# -- what each cluster applies: overlays and their patches ----------------------------------------------------


def _encrypted_off(example_project: Path, where: str) -> None:
    """``storageClass.encrypted: false`` for the EBS CSI driver: for staging (``environment``), or for staging-usw2
    alone (``cluster``), so that it reaches the StorageClass only as a patch of an overlay."""
    staging = example_project / "environments/staging.yaml"
    text = staging.read_text()
    if where == "environment":
        text = text.replace(
            "  aws-ebs-csi-driver: {}\n", "  aws-ebs-csi-driver:\n    storageClass: {encrypted: false}\n"
        )
    else:
        text = text.replace(
            "  - name: staging-usw2\n",
            "  - name: staging-usw2\n    packs:\n      aws-ebs-csi-driver:\n        storageClass: {encrypted: false}\n",
        )
    assert text != staging.read_text()
    staging.write_text(text)


@pytest.mark.parametrize("where", ["environment", "cluster"])
def test_an_immutable_field_changed_only_through_an_overlay_is_refused(
    example_project: Path, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the example's dist/, and the StorageClass's parameters changed only for one environment or one cluster
    dist = read_tree(example_project / "dist")
    _encrypted_off(example_project, where)
    # WHEN synthesized THEN the change reaches the StorageClass through a patch, and is refused as the API server
    # would refuse it, naming the cluster that applies it; nothing is written
    assert main(["--root", str(example_project), "synth"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert (
        "platform/clusters/staging-usw2: StorageClass gp3 (platform/infrastructure/controllers/aws-ebs-csi-driver/base/"
        "aws-ebs-csi-driver.yaml, as Kustomization flux-system/aws-ebs-csi-driver applies it): parameters changes, "
        "which is refused by the API server: the object has to be made anew; to do it on purpose, run synth with "
        "--replace 'StorageClass/gp3'"
    ) in err
    assert read_tree(example_project / "dist") == dist
    # AND the library refuses it too, and writes with the user's word
    with pytest.raises(ConfigError, match="StorageClass gp3"):
        synthesize(example_project)
    synthesize(example_project, replace=["StorageClass/gp3"])
    assert read_tree(example_project / "dist") != dist


def test_a_change_through_one_clusters_overlay_reads_no_other_clusters_entry(
    example_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the example, and a change that only staging-usw2's overlay makes
    assert main(["--root", str(example_project), "synth"]) == 0
    _encrypted_off(example_project, "cluster")
    built: list[str] = []
    real = Folders.build

    def build(self: Folders, folder: str) -> Any:
        built.append(folder)
        return real(self, folder)

    monkeypatch.setattr(Folders, "build", build)
    # WHEN synth judges what the cluster applies (and refuses it)
    assert main(["--root", str(example_project), "synth"]) == EXIT_BAD_INPUT
    # THEN only the entry folders of that cluster and of the hub (which applies its chain) are built, in each tree:
    # where the repositories lie is read from them alone, so a change to one cluster builds no other cluster
    entries = {folder for folder in built if folder.startswith("platform/clusters/") and folder.count("/") == 2}
    assert entries <= {"platform/clusters/staging-usw2", "platform/clusters/hub"}
    assert "platform/clusters/staging-usw2" in entries


def test_a_file_added_to_dist_by_hand_counts_in_what_the_cluster_applies(
    example_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the example written by synth (which records dist/'s files), then a patch added to dist/ by hand, a file
    # the last write did not record: the clusters run gp3 unencrypted
    assert main(["--root", str(example_project), "synth"]) == 0
    base = example_project / "dist/platform/infrastructure/controllers/aws-ebs-csi-driver/base"
    (base / "kustomization.yaml").write_text(
        (base / "kustomization.yaml").read_text() + "patches:\n- path: hand.yaml\n"
    )
    (base / "hand.yaml").write_text(
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: gp3\nparameters:\n  encrypted: 'false'\n"
    )
    # WHEN synth would write the definition's gp3 again THEN the change of the running StorageClass is refused: the
    # old tree is what dist/ holds, not what the last write recorded
    with pytest.raises(ConfigError, match="StorageClass gp3"):
        synthesize(example_project)


def test_fleet_app_synth_refuses_a_change_made_through_an_overlay(example_project: Path) -> None:
    from fluxplane.synth import load_plan
    from fluxplane.synth.app import FleetApp

    _encrypted_off(example_project, "cluster")
    with pytest.raises(ConfigError, match="StorageClass gp3"):
        FleetApp(load_plan(example_project), outdir=example_project / "dist").synth()


def _release_tree(patches: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """A cluster whose Kustomization applies a HelmRelease through an overlay with ``patches``."""
    source = {"kind": "GitRepository", "name": "flux-system"}
    git = {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "GitRepository",
        "metadata": {"name": "flux-system", "namespace": "flux-system"},
        "spec": {"url": "ssh://git@example.com/fleet.git", "ref": {"branch": "main"}},
    }
    entry, apps = (
        {
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "metadata": {"name": name, "namespace": "flux-system"},
            "spec": {"path": f"./dist/platform/{path}", "sourceRef": source},
        }
        for name, path in (("flux-system", "clusters/a"), ("podinfo", "apps/podinfo/a"))
    )
    release = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "podinfo", "namespace": "flux-system"},
        "spec": {"targetNamespace": "podinfo", "chart": {"spec": {"chart": "podinfo"}}},
    }
    kustomize = "kustomize.config.k8s.io/v1beta1"
    return {
        "platform/clusters/a/kustomization.yaml": [
            {"apiVersion": kustomize, "kind": "Kustomization", "resources": ["apps.yaml"]}
        ],
        "platform/clusters/a/apps.yaml": [git, entry, apps],
        "platform/apps/podinfo/base/kustomization.yaml": [
            {"apiVersion": kustomize, "kind": "Kustomization", "resources": ["podinfo.yaml"]}
        ],
        "platform/apps/podinfo/base/podinfo.yaml": [release],
        "platform/apps/podinfo/a/kustomization.yaml": [
            {"apiVersion": kustomize, "kind": "Kustomization", "resources": ["../base"], "patches": patches}
        ],
    }


def test_a_release_target_changed_through_an_overlay_is_refused(tmp_path: Path) -> None:
    target = {"group": "helm.toolkit.fluxcd.io", "kind": "HelmRelease", "name": "podinfo"}
    values = {"patch": "- op: add\n  path: /spec/values\n  value: {replicaCount: 2}\n", "target": target}
    moved = {"patch": "- op: replace\n  path: /spec/targetNamespace\n  value: apps\n", "target": target}
    dist = write(tmp_path / "dist", _release_tree([]))
    # a patch of the values reinstalls nothing
    assert guard(texts(_release_tree([values])), dist, hub="hub") == []
    # WHEN the overlay moves the release to another namespace THEN it is refused as the reinstall it is
    (line,) = guard(texts(_release_tree([values, moved])), dist, hub="hub")
    assert line == (
        "platform/clusters/a: HelmRelease flux-system/podinfo (platform/apps/podinfo/base/podinfo.yaml, as "
        "Kustomization flux-system/podinfo applies it): the release moves from podinfo-podinfo in podinfo (stored "
        "in flux-system) to apps-podinfo in apps (stored in flux-system), so helm-controller uninstalls it, deleting "
        "what it installed, before it installs the new one; to do it on purpose, run synth with --replace "
        "'HelmRelease/flux-system/podinfo'"
    )
    assert guard(texts(_release_tree([moved])), dist, hub="hub", replace=["HelmRelease/*"]) == []


# -- who manages an existing cluster's AWS resources --------------------------------------------------------


def composed_by(composition: str) -> dict[str, Any]:
    """The cluster, composed by ``composition``: it says who holds the cluster's AWS resources."""
    document = cluster()
    document["spec"]["crossplane"] = {"compositionRef": {"name": composition}}
    return document


OBSERVED = "eks-observed-3-subnets-1-node-group"
MANAGED = "eks-managed-3-subnets-1-node-group"
CREATED = "eks-3-zones-1-node-group"


def test_an_observed_cluster_starts_to_be_managed_only_on_the_users_word(tmp_path: Path) -> None:
    # GIVEN an observed cluster, moved to full management
    dist = write(tmp_path / "dist", {FILE: [composed_by(OBSERVED)]})
    files = texts({FILE: [composed_by(MANAGED)]})
    # WHEN guarded THEN it is refused, saying what Crossplane starts to do, and the flag that allows it
    assert guard(files, dist, hub="hub") == [
        f"{FILE}: EKSCluster a/a: Crossplane starts to manage its imported VPC, subnets, EKS cluster and node groups: "
        "it keeps their Kubernetes version and node group sizes to the definition, and deletes them with the cluster; "
        "to do it on purpose, run synth with --manage 'EKSCluster/a/a'"
    ]
    # AND neither --replace nor --delete allows it; --manage does
    assert len(guard(files, dist, hub="hub", replace=["*"], delete=["*"])) == 1
    assert guard(files, dist, hub="hub", manage=["EKSCluster/a/*"]) == []
    # AND going back to observing writes nothing to AWS, and needs no word
    assert (
        guard(
            texts({FILE: [composed_by(OBSERVED)]}),
            write(tmp_path / "managed", {FILE: [composed_by(MANAGED)]}),
            hub="hub",
        )
        == []
    )


def test_a_cluster_managed_in_full_from_the_start_needs_the_users_word(tmp_path: Path) -> None:
    # GIVEN a live tree, and a new cluster whose imported resources are managed at once
    dist = write(tmp_path / "dist", {"platform/spokes/b/cluster/cluster.yaml": [table()]})
    files = texts({"platform/spokes/b/cluster/cluster.yaml": [table()], FILE: [composed_by(MANAGED)]})
    # WHEN guarded THEN it is refused as the move from observing is
    (line,) = guard(files, dist, hub="hub")
    assert line.startswith(
        f"{FILE}: EKSCluster a/a: its imported VPC, subnets, EKS cluster and node groups are "
        "managed in full from the start"
    )
    assert line.endswith("run synth with --manage 'EKSCluster/a/a'")
    # AND a new observed cluster, which writes nothing, is not
    live = {"platform/spokes/b/cluster/cluster.yaml": [table()]}
    assert guard(texts({**live, FILE: [composed_by(OBSERVED)]}), dist, hub="hub") == []


@pytest.mark.parametrize(
    ("old", "new", "flag", "effect"),
    [
        (OBSERVED, CREATED, "manage", "from one that imports the cluster to one that makes it: Crossplane takes over"),
        (MANAGED, CREATED, "replace", "from one that imports the cluster to one that makes it: Crossplane makes"),
        (CREATED, OBSERVED, "replace", "from one that made the cluster to one that imports it: Crossplane deletes"),
        (CREATED, MANAGED, "replace", "from one that made the cluster to one that imports it: Crossplane deletes"),
    ],
)
def test_moving_between_making_and_importing_a_cluster_needs_the_users_word(
    tmp_path: Path, old: str, new: str, flag: str, effect: str
) -> None:
    dist = write(tmp_path / "dist", {FILE: [composed_by(old)]})
    files = texts({FILE: [composed_by(new)]})
    (line,) = guard(files, dist, hub="hub")
    assert f"its Composition changes {effect}" in line
    assert line.endswith(f"run synth with --{flag} 'EKSCluster/a/a'")
    assert guard(files, dist, hub="hub", **{flag: ["EKSCluster/a/a"]}) == []
    # AND a created cluster that changes shape keeps its Composition's kind: nothing to allow
    assert (
        guard(
            texts({FILE: [composed_by("eks-3-zones-2-node-groups")]}),
            write(tmp_path / "c", {FILE: [composed_by(CREATED)]}),
            hub="hub",
        )
        == []
    )


def test_removing_an_observed_cluster_deletes_nothing_in_aws(tmp_path: Path) -> None:
    # GIVEN an observed cluster that leaves the fleet WHEN guarded THEN nothing is refused: Crossplane only read it
    assert guard({}, write(tmp_path / "dist", {FILE: [composed_by(OBSERVED)]}), hub="hub") == []
    # AND a managed one is refused as a created one is
    (line,) = guard({}, write(tmp_path / "managed", {FILE: [composed_by(MANAGED)]}), hub="hub")
    assert "removed, so Crossplane deletes the EKS cluster" in line


SPOKE_FLUX = "platform/spokes/a/flux/flux.yaml"


def spoke_flux() -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "flux", "namespace": "a", "annotations": {APPLIED_BY: "a/flux"}},
        "spec": {"releaseName": "flux2", "targetNamespace": "flux-system", "kubeConfig": {"secretRef": {"name": "x"}}},
    }


def test_a_spokes_flux_is_never_uninstalled_while_its_cluster_stays_unless_allowed(tmp_path: Path) -> None:
    # GIVEN a spoke whose Flux the hub installed, now said to run its own (bootstrap: flux)
    dist = write(tmp_path / "dist", {FILE: [cluster()], SPOKE_FLUX: [spoke_flux()]})
    # WHEN guarded THEN removing its HelmRelease is refused: helm-controller would uninstall Flux there
    assert guard(texts({FILE: [cluster()]}), dist, hub="hub") == [
        f"{SPOKE_FLUX}: HelmRelease a/flux: removed, so helm-controller uninstalls Flux from the cluster, with its "
        "CRDs and every Flux object there (renaming is removing and adding); to do it on purpose, run synth with "
        "--delete 'HelmRelease/a/flux'"
    ]
    assert guard(texts({FILE: [cluster()]}), dist, hub="hub", delete=["HelmRelease/a/flux"]) == []
    # AND a cluster removed whole is refused once, for its EKSCluster
    (line,) = guard({}, dist, hub="hub")
    assert line.startswith(f"{FILE}: EKSCluster a/a: removed")


# -- what composites compose --------------------------------------------------------------------------------------

APP_COMPOSITIONS = "platform/infrastructure/configs/app-compositions/base/app-compositions.yaml"
ORDERS = "platform/cloud/production-use1/orders.yaml"


def example_tree(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The example's dist/, as the tree a write replaces, and its files, as synth writes them again."""
    dist = tmp_path / "dist"
    shutil.copytree(ROOT / "dist", dist)
    return {path: data.decode() for path, data in read_tree(dist).items()}, dist


def edited(files: dict[str, str], path: str, edit: Callable[[dict[str, Any]], None]) -> dict[str, str]:
    """``files`` with each document of ``path`` passed through ``edit``."""
    documents = parse_documents(files[path])
    for document in documents:
        edit(document)
    return {**files, path: dump_documents(documents)}


def composed_resources(composition: dict[str, Any]) -> list[dict[str, Any]]:
    """The resource templates of a Composition's patch-and-transform step."""
    resources: list[dict[str, Any]] = composition["spec"]["pipeline"][0]["input"]["resources"]
    return resources


def mysql_databases(document: dict[str, Any]) -> None:
    """The AppDatabase Composition, setting the instance's engine itself: every database becomes a MySQL one."""
    if document["kind"] != "Composition" or document["metadata"]["name"] != "appdatabase":
        return
    [instance] = [resource for resource in composed_resources(document) if resource["name"] == "instance"]
    instance["base"]["spec"]["forProvider"]["engine"] = "mysql"
    instance["patches"] = [p for p in instance["patches"] if p.get("toFieldPath") != "spec.forProvider.engine"]


def test_a_composition_that_replaces_what_a_composite_composes_is_refused_unless_allowed(tmp_path: Path) -> None:
    # GIVEN the example's dist/, and the database Composition setting another engine, its composites unchanged
    files, dist = example_tree(tmp_path)
    files = edited(files, APP_COMPOSITIONS, mysql_databases)
    # WHEN guarded THEN each database's RDS instance is named, replaced, with the flag naming its composite
    assert guard(files, dist, hub="hub") == [
        f"platform/cloud/{cluster}/orders.yaml: AppDatabase {cluster}/orders-database-main: composes RDS instance "
        f"{cluster}-orders-main (instance), which is replaced: engine changed from postgres to mysql; to do it on "
        f"purpose, run synth with --replace 'AppDatabase/{cluster}/orders-database-main'"
        for cluster in ("production-euw1", "production-use1", "production-usw2")
    ]
    # AND the user's word for a composite allows its own resources; --delete allows no replacement
    allowed = guard(files, dist, hub="hub", replace=["AppDatabase/production-use1/*"], delete=["*"])
    assert [line.split(":")[0] for line in allowed] == [
        "platform/cloud/production-euw1/orders.yaml",
        "platform/cloud/production-usw2/orders.yaml",
    ]
    assert guard(files, dist, hub="hub", replace=["AppDatabase/*"]) == []


def test_a_composition_that_no_longer_composes_a_table_is_a_deletion_refused_unless_allowed(tmp_path: Path) -> None:
    # GIVEN the example's dist/, and the table Composition without its table
    files, dist = example_tree(tmp_path)

    def without_table(document: dict[str, Any]) -> None:
        if document["kind"] == "Composition" and document["metadata"]["name"] == "apptable":
            resources = composed_resources(document)
            resources[:] = [resource for resource in resources if resource["name"] != "table"]

    files = edited(files, APP_COMPOSITIONS, without_table)
    # WHEN guarded THEN each table is named, deleted with its items, and the policy that lets the app use it (which
    # reads the table's ARN), with --delete
    refused = guard(files, dist, hub="hub")
    assert refused == [
        line
        for cluster in ("production-euw1", "production-use1")
        for line in (
            f"platform/cloud/{cluster}/orders.yaml: AppTable {cluster}/orders-table-orders: composes DynamoDB table "
            f"{cluster}-orders-orders (table), which is deleted: destroys the table and its items; to do it on "
            f"purpose, run synth with --delete 'AppTable/{cluster}/orders-table-orders'",
            f"platform/cloud/{cluster}/orders.yaml: AppTable {cluster}/orders-table-orders: composes IAM role policy "
            f"(access), which is deleted; to do it on purpose, run synth with --delete "
            f"'AppTable/{cluster}/orders-table-orders'",
        )
    ]
    # AND --replace does not allow it; --delete does
    assert guard(files, dist, hub="hub", replace=["*"]) == refused
    assert guard(files, dist, hub="hub", delete=["AppTable/*"]) == []


def test_only_what_a_composite_change_replaces_is_refused_not_what_it_updates(tmp_path: Path) -> None:
    # GIVEN the example's dist/, and the production-use1 orders app with a larger database instance (updated in
    # place) and another service account (its pod identity association is replaced: AWS cannot change it in place,
    # though the app's identity lists no such field of its own)
    files, dist = example_tree(tmp_path)

    def changed(document: dict[str, Any]) -> None:
        if document["kind"] == "AppDatabase":
            document["spec"]["instanceClass"] = "db.t4g.small"
        if document["kind"] == "AppIdentity":
            document["spec"]["serviceAccount"] = "orders-api"

    files = edited(files, ORDERS, changed)
    # WHEN guarded THEN only the replacement is refused
    assert guard(files, dist, hub="hub") == [
        f"{ORDERS}: AppIdentity production-use1/orders: composes EKS pod identity association "
        "(pod-identity-association), which is replaced: serviceAccount changed from orders to orders-api; to do it "
        "on purpose, run synth with --replace 'AppIdentity/production-use1/orders'"
    ]
    assert guard(files, dist, hub="hub", replace=["AppIdentity/*"]) == []


def test_a_composite_refused_for_its_own_fields_is_not_named_again_for_what_it_composes(tmp_path: Path) -> None:
    # GIVEN the example's dist/, and a database whose engine changes on the composite itself
    files, dist = example_tree(tmp_path)

    def mysql(document: dict[str, Any]) -> None:
        if document["kind"] == "AppDatabase":
            document["spec"]["engine"] = "mysql"

    # WHEN guarded THEN one line says it, the composite's own
    (line,) = guard(edited(files, ORDERS, mysql), dist, hub="hub")
    assert line.startswith(f"{ORDERS}: AppDatabase production-use1/orders-database-main: spec.engine changes")


def test_synth_refuses_a_pack_upgrade_whose_composition_replaces_a_database(
    example_project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the example fleet, and an app-compositions pack whose database Composition sets the engine itself, as
    # an upgrade of the pack would: the definition and every composite stay as they are
    original = AppKind.composition_props

    def upgraded(self: AppKind, *, spoke: bool = False) -> CompositionProps:
        props = original(self, spoke=spoke)
        if self.kind != "AppDatabase":
            return props
        spec = props.dump()
        mysql_databases({"kind": "Composition", "metadata": {"name": "appdatabase"}, "spec": spec})
        return CompositionProps.model_validate(spec)

    monkeypatch.setattr(AppKind, "composition_props", upgraded)
    dist = read_tree(example_project / "dist")
    # WHEN synthesized THEN each database's replacement is refused, and nothing is written
    assert main(["--root", str(example_project), "synth"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.splitlines()
    assert (
        f"{ORDERS}: AppDatabase production-use1/orders-database-main: composes RDS instance "
        "production-use1-orders-main (instance), which is replaced: engine changed from postgres to mysql; to do it "
        "on purpose, run synth with --replace 'AppDatabase/production-use1/orders-database-main'"
    ) in err
    assert len([line for line in err if "composes RDS instance" in line]) == 3
    assert read_tree(example_project / "dist") == dist
    # AND with the user's word it is written
    assert main(["--root", str(example_project), "synth", "--replace", "AppDatabase/*"]) == 0
    assert "engine: mysql" in (example_project / "dist" / APP_COMPOSITIONS).read_text()


def test_a_change_of_management_allowed_is_not_refused_again_for_what_the_other_composition_drops(
    tmp_path: Path,
) -> None:
    # GIVEN the example's dist/, and staging-usw2 moved from a Composition that made it to one that imports it
    files, dist = example_tree(tmp_path)
    cluster_file = "platform/spokes/staging-usw2/cluster/cluster.yaml"

    def imported(document: dict[str, Any]) -> None:
        if document["kind"] == "EKSCluster":
            document["spec"]["crossplane"]["compositionRef"]["name"] = OBSERVED

    files = edited(files, cluster_file, imported)
    # WHEN guarded THEN one line says what the move deletes (its gateways, route tables, roles), and --replace, which
    # it names, allows it all: the resources the new Composition no longer composes are not refused one by one
    (line,) = guard(files, dist, hub="hub")
    assert line.endswith("run synth with --replace 'EKSCluster/staging-usw2/staging-usw2'")
    assert guard(files, dist, hub="hub", replace=["EKSCluster/staging-usw2/staging-usw2"]) == []


# -- switching a cluster into or out of EKS Auto Mode ---------------------------------------------------


def with_compute(auto_mode: dict[str, Any] | None, groups: tuple[str, ...] = ()) -> dict[str, Any]:
    """The cluster, with node groups of these names, or in EKS Auto Mode (``autoMode`` as the composite has it)."""
    document = cluster()
    document["spec"]["nodeGroups"] = [{"name": name} for name in groups]
    if auto_mode is not None:
        document["spec"]["autoMode"] = auto_mode
    return document


ON = {"enabled": True, "nodePools": ["general-purpose", "system"]}


def test_a_cluster_switched_into_auto_mode_is_refused_unless_allowed(tmp_path: Path) -> None:
    # GIVEN a cluster with two node groups, switched into EKS Auto Mode
    dist = write(tmp_path / "dist", {FILE: [with_compute(None, ("system", "batch"))]})
    files = texts({FILE: [with_compute(ON)]})
    # WHEN guarded THEN it is refused, saying what EKS takes over, which node groups go, and the flag that allows it
    (line,) = guard(files, dist, hub="hub")
    assert line.startswith(
        f"{FILE}: EKSCluster a/a: spec.autoMode.enabled changes from false to true, which switches EKS Auto Mode on in "
        "place: EKS launches the cluster's nodes from its node pools and runs its block storage and load balancing: "
        "its managed node groups are deleted"
    )
    assert line.endswith(
        "(node groups deleted: system, batch); to do it on purpose, run synth with --auto-mode 'EKSCluster/a/a'"
    )
    # AND neither --replace, --delete nor --manage allows it; --auto-mode does
    assert len(guard(files, dist, hub="hub", replace=["*"], delete=["*"], manage=["*"])) == 1
    assert guard(files, dist, hub="hub", auto_mode=["EKSCluster/a/*"]) == []


def test_a_cluster_switched_out_of_auto_mode_is_refused_unless_allowed(tmp_path: Path) -> None:
    dist = write(tmp_path / "dist", {FILE: [with_compute(ON)]})
    files = texts({FILE: [with_compute({"enabled": False}, ("system",))]})
    (line,) = guard(files, dist, hub="hub")
    assert line.startswith(
        f"{FILE}: EKSCluster a/a: spec.autoMode.enabled changes from true to false, which switches EKS Auto Mode off "
        "in place: EKS terminates the nodes it launched"
    )
    assert line.endswith("(node groups made: system); to do it on purpose, run synth with --auto-mode 'EKSCluster/a/a'")
    assert guard(files, dist, hub="hub", auto_mode=["EKSCluster/a/a"]) == []


def test_an_auto_mode_cluster_that_drops_auto_mode_is_refused_whatever_the_flags(tmp_path: Path) -> None:
    # GIVEN a cluster in Auto Mode whose composite no longer says so (its definition lost autoMode)
    dist = write(tmp_path / "dist", {FILE: [with_compute(ON)]})
    files = texts({FILE: [with_compute(None, ("system",))]})
    # WHEN guarded THEN it is refused: nothing would switch Auto Mode off in AWS; the definition has to say so
    expected = (
        f"{FILE}: EKSCluster a/a: spec.autoMode.enabled goes while EKS Auto Mode is on, which leaves it on in the "
        "cloud while the rest of the object reads as if it were off; to switch it off, say so: autoMode.enabled: "
        "false in the definition (and synth with --auto-mode)"
    )
    assert guard(files, dist, hub="hub") == [expected]
    assert guard(files, dist, hub="hub", auto_mode=["*"], replace=["*"]) == [expected]


def test_a_new_cluster_in_auto_mode_or_one_that_stays_there_needs_no_word(tmp_path: Path) -> None:
    assert guard(texts({FILE: [with_compute(ON)]}), tmp_path / "none", hub="hub") == []
    dist = write(tmp_path / "dist", {FILE: [with_compute(ON)]})
    assert guard(texts({FILE: [with_compute({**ON, "nodePools": ["general-purpose"]})]}), dist, hub="hub") == []
    # AND a cluster that never was in Auto Mode may say so
    plain = write(tmp_path / "plain", {FILE: [with_compute(None, ("system",))]})
    assert guard(texts({FILE: [with_compute({"enabled": False}, ("system",))]}), plain, hub="hub") == []


def test_synth_refuses_to_switch_an_example_cluster_into_auto_mode_without_its_flag(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the example fleet synthesized, then staging-usw2 switched into EKS Auto Mode
    assert main(["--root", str(example_project), "synth"]) == 0
    dist = read_tree(example_project / "dist")
    staging = example_project / "environments/staging.yaml"
    staging.write_text(
        staging.read_text().replace(
            "  - name: staging-usw2\n", "  - name: staging-usw2\n    autoMode: {enabled: true}\n"
        )
    )
    capsys.readouterr()
    # WHEN synthesized THEN exit 2: the switch is named with the flag that allows it, and nothing is written
    assert main(["--root", str(example_project), "synth"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.splitlines()
    (line,) = [line for line in err if "switches EKS Auto Mode on" in line]
    assert line.startswith(
        "platform/spokes/staging-usw2/cluster/cluster.yaml: EKSCluster staging-usw2/staging-usw2: "
        "spec.autoMode.enabled changes from false to true"
    )
    assert line.endswith(
        "(node groups deleted: system); to do it on purpose, run synth with --auto-mode "
        "'EKSCluster/staging-usw2/staging-usw2'"
    )
    # AND the default StorageClass gp3, which moves from the EBS CSI driver's provisioner to Auto Mode's, is named too:
    # the API server refuses the update, so it is made anew
    assert [
        line for line in err if "StorageClass gp3" in line and "run synth with --replace 'StorageClass/gp3'" in line
    ]
    assert err[-1] == f"{example_project / 'dist'}: nothing written"
    assert read_tree(example_project / "dist") == dist
    # AND with the user's word it is written
    allow = ["--auto-mode", "EKSCluster/staging-usw2/*", "--replace", "StorageClass/gp3"]
    assert main(["--root", str(example_project), "synth", *allow]) == 0
    assert (example_project / "dist/platform/clusters/staging-usw2/auto-mode/storage-class.yaml").is_file()


def test_the_new_trees_walk_takes_the_old_trees_build_of_a_folder_only_when_no_input_changed_in_either() -> None:
    # GIVEN two trees: a base two overlays read, one overlay's patch changed, and a generated folder lost a file
    base = {
        "base/kustomization.yaml": "resources:\n- cm.yaml\n",
        "base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: '1'\n",
        "same/kustomization.yaml": "resources:\n- ../base\n",
        "loose/one.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n",
        "loose/two.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\n",
    }
    patch = "patches:\n- patch: |\n    {}\n  target:\n    kind: ConfigMap\n"
    old_files = {**base, "changed/kustomization.yaml": "resources:\n- ../base\n" + patch.format("[]")}
    new_files = {
        **{path: text for path, text in base.items() if path != "loose/two.yaml"},
        "changed/kustomization.yaml": "resources:\n- ../base\n"
        + patch.format('[{"op": "replace", "path": "/data/a", "value": "2"}]'),
    }
    changed = {"changed/kustomization.yaml", "loose/two.yaml"}
    old = Folders(LazyDocuments({}, old_files))
    new = guard_module._SharedFolders(LazyDocuments({}, new_files), old, changed)
    # WHEN the new tree builds each folder
    # THEN a folder whose inputs did not change is the old tree's very build, and the others are built anew
    assert new.build("same") is old.build("same") and new.build("base") is old.build("base")
    assert [item.doc["data"]["a"] for item in new.build("changed").items] == ["2"]
    assert [item.doc["data"]["a"] for item in old.build("changed").items] == ["1"]
    assert [item.doc["metadata"]["name"] for item in new.build("loose").items] == ["one"]
    assert len(old.build("loose").items) == 2


def test_a_cluster_folder_is_judged_whole_when_it_holds_what_synth_writes_and_file_by_file_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fluxplane.synth.writer import write_tree

    # GIVEN a tree written twice by synth: its manifest records each cluster's folder as one unit
    dist = tmp_path / "dist"
    files = texts(
        {
            FILE: [cluster()],
            "platform/spokes/b/cluster/cluster.yaml": [cluster(applier="b/cluster") | {"metadata": {"name": "b"}}],
            "platform/spokes/kustomization.yaml": [{"resources": ["a", "b"]}],
        }
    )
    write_tree(files, dist)
    write_tree(files, dist)
    opened: list[str] = []
    real_open = open

    def recording(path: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(os.path.relpath(path, dist))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", recording)
    # WHEN the same tree is guarded THEN nothing is refused, and no file of a cluster's folder is read
    assert guard(files, dist, hub="hub") == []
    assert not [path for path in opened if path.startswith("platform/spokes/a/")]
    # GIVEN a file added by hand to one cluster's folder of dist/: what the last write did not record counts too, as
    # Flux would apply it
    hand = {"apiVersion": "platform.fluxplane.io/v1alpha1", "kind": "EKSCluster", "metadata": {"name": "hand"}}
    (dist / "platform/spokes/a/hand.yaml").write_text(dump_documents([hand | {"spec": {}}]))
    # WHEN synth would write the tree without it THEN removing it is refused
    assert guard(files, dist, hub="hub") == [
        "platform/spokes/a/hand.yaml: EKSCluster hand: removed, so Crossplane deletes the EKS cluster, its node groups "
        "and its VPC in AWS (renaming is removing and adding); to do it on purpose, run synth with --delete "
        "'EKSCluster/hand'"
    ]
