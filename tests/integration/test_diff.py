"""``fluxplane diff`` end to end on the example fleet in a Git repository of its own.

The base commit is the example; the next commit raises production's metrics-server replicas and
removes the cluster production-usw2 with ``fluxplane remove-cluster``. The diff must show the new
value on the production cluster that stays, everything the removed cluster loses, and flag the
removal, its composite and its namespaces as risky.

With the example's dist/ committed, a change to one cluster builds only the folders it reaches; and for a change of
each kind the diff of what the change reaches is the diff of both trees walked whole: the same sections, files,
risks and plan.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from fluxplane.cli import main
from fluxplane.core.tree import Document, KubectlBuilder, KubectlFolders
from fluxplane.review import diff as diff_module
from fluxplane.review import plan
from fluxplane.review.diff.fleet import DistSnapshot
from fluxplane.review.diff.report import COMMITTED
from fluxplane.review.diff.trees import head_tree
from tests.support.files import read_tree
from tests.support.git import git

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed: diff builds with it"),
]


@pytest.fixture
def changed_fleet(example_project: Path) -> Path:
    """The example in Git: a first commit, then a commit changing a pack value and removing a cluster."""
    git(example_project, "init", "-q")
    git(example_project, "add", "environments")
    git(example_project, "commit", "-qm", "example")
    production = example_project / "environments" / "production.yaml"
    text = production.read_text()
    assert "  metrics-server:\n    replicas: 2\n" in text
    production.write_text(text.replace("  metrics-server:\n    replicas: 2\n", "  metrics-server:\n    replicas: 3\n"))
    assert main(["--root", str(example_project), "remove-cluster", "production-usw2"]) == 0
    git(example_project, "add", "-A", "environments")
    git(example_project, "commit", "-qm", "change")
    return example_project


def diff(root: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    dist = read_tree(root / "dist")
    capsys.readouterr()
    assert main(["--root", str(root), "diff", "--base", "HEAD~1", *args]) == 0
    # nothing is written to dist/
    assert read_tree(root / "dist") == dist
    return capsys.readouterr().out


def test_text_report_counts_each_cluster_and_flags_the_removal(
    changed_fleet: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = diff(changed_fleet, capsys)
    lines = out.splitlines()
    # THEN the summary counts what each repository changes on each cluster
    table = lines[lines.index("REPOSITORY  CLUSTER                    ADDED  CHANGED  REMOVED") :][:8]
    assert table == [
        "REPOSITORY  CLUSTER                    ADDED  CHANGED  REMOVED",
        # the removed cluster's chain goes, and nothing the hub shares with the other clusters changes
        "platform    hub                            0        0       28",
        "platform    production-euc1                0        1        0",
        "platform    production-euw1                0        1        0",
        "platform    production-use1                0        1        0",
        "platform    production-usw2 (removed)      0        0       87",
        "workloads   production-usw2 (removed)      0        0        9",
        "files       (no cluster)                   0        1        1",
    ]
    # AND the remaining production cluster gets the new value as a diff of its HelmRelease
    use1 = out[out.index("platform / production-use1: 0 added, 1 changed, 0 removed") :]
    assert use1.splitlines()[1] == "  ~ helm.toolkit.fluxcd.io/v2 HelmRelease flux-system/metrics-server"
    assert "      -    replicas: 2\n      +    replicas: 3\n" in use1
    # AND the risks come first: the cluster, its app's database (made by the hub), its composite, its AWS table
    # (made on the cluster itself) and every namespace it loses
    risks = lines[lines.index("risky changes (14):") + 1 : lines.index("risky changes (14):") + 15]
    assert risks[:4] == [
        "  ! platform / production-usw2: cluster: cluster removed: dist/platform/clusters/production-usw2/ is gone",
        "  ! platform / hub: platform.fluxplane.io/v1alpha1 AppDatabase production-usw2/orders-database-main: "
        "AppDatabase removed: Crossplane deletes the cloud resource and its data",
        "  ! platform / hub: platform.fluxplane.io/v1alpha1 EKSCluster production-usw2/production-usw2: "
        "workload cluster removed: Crossplane deletes the EKS cluster and its network",
        "  ! platform / hub: v1 Namespace production-usw2: Namespace deleted: everything in it is deleted",
    ]
    assert risks[-2:] == [
        "  ! workloads / production-usw2: platform.fluxplane.io/v1alpha1 AppTable orders/orders-table-orders: "
        "AppTable removed: Crossplane deletes the cloud resource and its data",
        "  ! workloads / production-usw2: v1 Namespace orders: Namespace deleted: everything in it is deleted",
    ]
    assert sum("Namespace deleted" in line for line in risks) == 10


def test_markdown_report_is_a_pull_request_comment(changed_fleet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = diff(changed_fleet, capsys, "--format", "markdown")
    lines = out.splitlines()
    assert lines[0].startswith("## fluxplane diff: `HEAD~1` (")
    assert lines[2:7] == [
        "Base: its definition, synthesized at `HEAD~1`.",
        "",
        "### Risky changes",
        "",
        "- :warning: **platform / production-usw2** `cluster`: cluster removed: "
        "dist/platform/clusters/production-usw2/ is gone",
    ]
    assert lines.index("### Summary") < lines.index("| platform | production-usw2 (removed) | 0 | 0 | 87 |")
    assert out.count("<details>") == out.count("</details>") == 7
    assert "<summary><b>platform / production-use1</b>: 0 added, 1 changed, 0 removed</summary>" in lines
    assert "```diff" in lines
    assert len(out) <= 65_536
    # AND it ends with the plan of the same change: the removed cluster's EKS cluster and data go first
    section = lines[lines.index(next(line for line in lines if line.startswith("### fluxplane plan: `HEAD~1`"))) :]
    assert "#### :warning: Data-bearing resources replaced or deleted" in section
    assert (
        "- **deletes EKS cluster production-usw2 in account 444455556666 (us-west-2, cluster hub): destroys the "
        "Kubernetes cluster and everything running on it**"
    ) in section
    assert section[-1].startswith("**Plan: AWS 0 to create, 0 to update in place, 0 to replace, 72 to delete")


def test_an_empty_base_adds_everything(example_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a first commit without environments/ and the example only in the working tree
    (example_project / "README.md").write_text("fleet\n")
    git(example_project, "init", "-q")
    git(example_project, "add", "README.md")
    git(example_project, "commit", "-qm", "empty")
    capsys.readouterr()
    assert main(["--root", str(example_project), "diff"]) == 0
    out = capsys.readouterr().out
    # THEN the report says so and every cluster is added
    assert out.splitlines()[1] == "base: nothing: it has no dist/ and no environments/ at HEAD"
    assert "platform    hub (added)" in out
    assert "risky changes: none" in out


def edit(root: Path, path: str, old: str, new: str) -> None:
    file = root / path
    text = file.read_text()
    assert old in text
    file.write_text(text.replace(old, new, 1))


def test_a_one_cluster_change_builds_only_what_it_reaches(
    example_project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the example with its dist/ committed, and one cluster's pack value changed in the working tree
    git(example_project, "init", "-q")
    git(example_project, "add", "environments", "dist")
    git(example_project, "commit", "-qm", "example")
    edit(
        example_project,
        "environments/production.yaml",
        "      podinfo:\n        replicas: 4\n",
        "      podinfo:\n        replicas: 5\n",
    )
    builds: list[str] = []
    build = KubectlBuilder._run

    def counted(self: KubectlBuilder, folders: KubectlFolders, folder: str) -> list[Document]:
        builds.append(folder)
        return build(self, folders, folder)

    monkeypatch.setattr(KubectlBuilder, "_run", counted)
    out = diff(example_project, capsys, "--base", "HEAD")
    # THEN the base is the committed dist/, and only the two folders the change reaches are built with kubectl
    lines = out.splitlines()
    assert lines[1:3] == [
        "base: dist/ as committed at HEAD",
        "read: 1 changed files reach 10 folders and 2 of 7 clusters; 2 folders built",
    ]
    assert len(builds) == 2
    # AND the report is the cluster's new value alone
    table = lines[lines.index("REPOSITORY  CLUSTER          ADDED  CHANGED  REMOVED") :][:3]
    assert table == [
        "REPOSITORY  CLUSTER          ADDED  CHANGED  REMOVED",
        "platform    production-use1      0        1        0",
        "",
    ]
    assert "      -    replicaCount: 4\n      +    replicaCount: 5\n" in out


def _cluster_value(root: Path) -> None:
    edit(
        root,
        "environments/production.yaml",
        "      podinfo:\n        replicas: 4\n",
        "      podinfo:\n        replicas: 5\n",
    )


def _shared_value(root: Path) -> None:
    edit(root, "environments/base.yaml", "    retentionDays: 30\n", "    retentionDays: 14\n")


def _pack_version(root: Path) -> None:
    edit(
        root,
        "environments/production.yaml",
        "    workspaceRegion: us-west-2\n",
        "    workspaceRegion: us-west-2\n    version: 91.6.0\n",
    )


def _added_cluster(root: Path) -> None:
    assert main(["--root", str(root), "new-cluster", "staging-use2", "--env", "staging", "--region", "us-east-2"]) == 0
    sealed = ["--cluster", "staging-use2", "--namespace", "flux-system", "--name", "flux-system"]
    literals = ["--from-literal", "identity=x", "--from-literal", "known_hosts=y"]
    assert main(["--root", str(root), "seal", *sealed, *literals]) == 0


def _removed_cluster(root: Path) -> None:
    assert main(["--root", str(root), "remove-cluster", "production-usw2"]) == 0


APP_COMPOSITIONS = "platform/infrastructure/configs/app-compositions/base/app-compositions.yaml"
EKS_DEFINITIONS = "platform/infrastructure/configs/eks-compositions/base/eks-compositions.yaml"


def _definitions(files: dict[str, str]) -> None:
    """The AppTable Composition bills tables another way, and the EKSCluster XRD prints another column."""
    text = files[APP_COMPOSITIONS]
    assert text.count("billingMode: PAY_PER_REQUEST") == 1
    files[APP_COMPOSITIONS] = text.replace("billingMode: PAY_PER_REQUEST", "billingMode: PROVISIONED")
    column = "    - name: Region\n      type: string\n      jsonPath: .spec.region\n"
    assert files[EKS_DEFINITIONS].count(column) == 1
    files[EKS_DEFINITIONS] = files[EKS_DEFINITIONS].replace(
        column, column + "    - name: Access\n      type: string\n      jsonPath: .spec.hubAccess\n"
    )


@pytest.mark.parametrize(
    ("change", "tree_change"),
    [
        (_cluster_value, None),
        (_shared_value, None),
        (_pack_version, None),
        (_added_cluster, None),
        (_removed_cluster, None),
        (None, _definitions),
    ],
    ids=["cluster value", "shared value", "pack version", "added cluster", "removed cluster", "composition and xrd"],
)
def test_the_diff_of_what_a_change_reaches_is_the_whole_diff(
    example_project: Path,
    change: Callable[[Path], None] | None,
    tree_change: Callable[[dict[str, str]], None] | None,
) -> None:
    # GIVEN the example's dist/ as the base, and the definition changed (or the head's definitions edited)
    base = DistSnapshot("HEAD", {path: data.decode() for path, data in read_tree(example_project / "dist").items()})
    if change is not None:
        change(example_project)
    head = head_tree(example_project)
    if tree_change is not None:
        files = dict(head.files)
        tree_change(files)
        head = DistSnapshot(head.label, files, head.repositories, head.support, head.hub)
    # WHEN diffed by what the change reaches, and with both trees walked whole
    scoped = diff_module.compare(base, head, "HEAD", "0" * 40, COMMITTED)
    whole = diff_module.compare(base, head, "HEAD", "0" * 40, COMMITTED, whole=True)
    # THEN the reports say the same: sections, files, risks, notes; and so do their plans
    assert scoped.sections
    assert (scoped.sections, scoped.files, scoped.risks, scoped.notes) == (
        whole.sections,
        whole.files,
        whole.risks,
        whole.notes,
    )
    planned, reference = plan.from_diff(scoped), plan.from_diff(whole)
    assert (planned.resources, planned.kubernetes, planned.notes) == (
        reference.resources,
        reference.kubernetes,
        reference.notes,
    )
    # AND the scoped diff built fewer folders
    assert int(scoped.scope.split("; ")[1].split()[0]) < int(whole.scope.split("; ")[1].split()[0])
