"""fluxplane.commands.aws_setup: the files it writes, and the lines it prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxplane.cli import main
from fluxplane.commands import aws_setup
from fluxplane.synth.aws_setup import MARKER
from tests.conftest import FleetWriter
from tests.support.commands import parse


def test_aws_setup_needs_no_lock_and_writes_into_the_project_by_default() -> None:
    args = parse(aws_setup, "aws-setup")
    assert (aws_setup.NAMES, aws_setup.LOCKS_PROJECT, args.out) == (("aws-setup",), False, None)
    assert aws_setup.stopped(args) == "the templates written so far are complete files; run it again"


def test_run_writes_the_templates_and_prints_how_to_deploy_them(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_fleet()
    assert aws_setup.run(parse(aws_setup, "aws-setup", root=root)) == 0
    out = capsys.readouterr().out.splitlines()
    template = root / "aws-setup" / "fluxplane-hub.yaml"
    assert template.read_text().startswith(MARKER)
    assert out[0] == (
        f"wrote {template}: the hub's own account (111122223333), us-west-2: the Crossplane providers' role "
        "crossplane-providers (irsa); the sealing key's secret fluxplane/sealing-key"
    )
    assert out[1] == "the hub must already have:"
    assert out[2].startswith(
        "  the hub's IAM OIDC provider (IRSA): eksctl utils associate-iam-oidc-provider --cluster hub"
    )
    assert out[3].startswith("  the EKS Pod Identity Agent add-on on the hub")
    assert out[4].startswith("deploy, in this order")
    assert out[5].startswith(
        "  aws cloudformation deploy --stack-name fluxplane-hub --template-file "
        f"{root.as_posix()}/aws-setup/fluxplane-hub.yaml "
    )
    assert out[6].startswith("then: fluxplane sealing-key")
    assert len(out) == 7


def test_out_names_the_folder_and_a_template_no_stack_has_is_named(
    write_fleet: FleetWriter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_fleet()
    folder = tmp_path / "setup"
    folder.mkdir()
    (folder / "fluxplane-hub-account-gone.yaml").write_text(f"{MARKER} from environments/: stack gone\n")
    assert main(["--root", str(root), "aws-setup", "--out", str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {folder / 'fluxplane-hub.yaml'}: " in out
    assert (
        f"note: {folder / 'fluxplane-hub-account-gone.yaml'}: a template of a stack the definition no longer has; "
        "delete the stack, then the file\n"
    ) in out
    assert not (root / "aws-setup").exists()
