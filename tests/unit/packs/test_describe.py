"""``fluxplane packs list`` and ``packs show``: the catalogue as people read it."""

from __future__ import annotations

import re

import pytest
import yaml

from fluxplane.cli import EXIT_BAD_INPUT, main
from fluxplane.packs.describe import list_packs, show_pack
from fluxplane.packs.registry import PackRegistry
from tests.support.packs import ISSUER, IssuerConfig, demo_registry


def test_list_has_a_line_per_pack_with_version_layer_requires_and_description() -> None:
    lines = list_packs(demo_registry(ISSUER)).splitlines()
    assert lines[0].split() == ["NAME", "VERSION", "LAYER", "REQUIRES", "DESCRIPTION"]
    assert [line.split()[:4] for line in lines[1:]] == [
        ["build", "1.0.0", "configs", "-"],
        ["conf", "1.0.0", "configs", "ctrl"],
        ["ctrl", "1.0.0", "controllers", "-"],
        ["issuer", "1.0.0", "controllers", "-"],
        ["web", "1.0.0", "apps", "-"],
    ]
    assert lines[4].endswith("an issuer")


def test_show_gives_config_keys_what_is_emitted_and_an_example() -> None:
    text = show_pack(ISSUER)
    assert text.startswith("issuer 1.0.0: an issuer\n")
    assert "its issuer.example.com objects: configs (Kustomization 'issuer-configs', after 'issuer' is Ready)" in text
    assert any(line.split()[:3] == ["email", "string", '"ops@example.com"'] for line in text.splitlines())
    assert "namespaces: none of its own" in text.splitlines()
    assert "  Namespace issuer-system (v1, controllers)" in text
    assert "  Issuer default (issuer.example.com/v1, configs)" in text
    assert "IAM role" not in text
    example = text[text.index("example:\n") + len("example:\n") :]
    assert yaml.safe_load("\n".join(line[2:] for line in example.splitlines())) == {"packs": {"issuer": {}}}


def test_show_names_the_roles_the_hub_makes_for_the_pack() -> None:
    from dataclasses import replace

    class WithIdentity(IssuerConfig):
        identity: bool = True

    text = show_pack(replace(ISSUER, config=WithIdentity))
    role = "IAM role 'controller' for service account issuer-system/issuer (EKS Pod Identity, made by the hub): x"
    assert role in text


def test_show_names_the_namespaces_the_pack_installs_into() -> None:
    # GIVEN a built-in pack that installs into its own namespace WHEN shown THEN the namespace is listed
    text = show_pack(PackRegistry.from_entry_points().get("cert-manager"))
    assert "namespaces: cert-manager (the add-on's: no app runs there)" in text.splitlines()


def test_show_names_the_crds_the_pack_installs() -> None:
    # GIVEN a built-in pack whose chart installs CRDs, and one whose does not WHEN shown THEN the first names them
    text = show_pack(PackRegistry.from_entry_points().get("cert-manager"))
    assert "CRDs of:  cert-manager.io, acme.cert-manager.io (what applies their kinds waits for 'cert-manager')" in (
        text.splitlines()
    )
    assert "CRDs of:" not in show_pack(PackRegistry.from_entry_points().get("fluent-bit"))


def test_show_of_a_pack_that_needs_values_says_which() -> None:
    text = show_pack(PackRegistry.from_entry_points().get("crossplane-providers"))
    assert "(nothing without values: roleArn is required when identity is 'irsa')" in text


def test_the_commands_print_the_installed_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["packs", "list"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()[1:]] == list(PackRegistry.from_entry_points().names)
    assert main(["packs", "show", "metrics-server"]) == 0
    assert re.search(r"\n  replicas +integer 1\.\.10 ", capsys.readouterr().out)
    assert main(["packs", "show", "metrics-servr"]) == EXIT_BAD_INPUT
    assert capsys.readouterr().err.startswith(
        "unknown pack 'metrics-servr'; did you mean 'metrics-server'? (installed: app-compositions, "
    )


def test_the_catalogue_loads_without_the_javascript_runtime() -> None:
    # packs list, packs show and the definition commands never start Node: no pack imports cdk8s
    import subprocess
    import sys

    code = (
        "import sys; from fluxplane.packs.registry import PackRegistry; PackRegistry.from_entry_points(); "
        "print(sorted(name for name in sys.modules if name.split('.')[0] in ('jsii', 'cdk8s', 'constructs')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_a_section_of_its_own_lists_its_keys_below_it() -> None:
    text = show_pack(PackRegistry.from_entry_points().get("cert-manager"))
    rows = {line.split()[0]: line for line in text.splitlines() if line.startswith("  issuer")}
    assert rows["issuer"].split()[1:3] == ["mapping", "(below)"]
    assert '"dns01"' in rows["issuer.solver"] and "{" not in rows["issuer"]


@pytest.mark.parametrize("name", ["eks-compositions", "workload-clusters"])
def test_the_packs_that_follow_the_fleet_are_shown_without_one(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN no fleet at all WHEN a pack whose output follows from the fleet is shown
    assert main(["--root", "/nonexistent", "packs", "show", name]) == 0
    out = capsys.readouterr().out
    # THEN it is rendered for a fleet of one default cluster
    emitted = out[out.index("emits, with the defaults:\n") :].splitlines()[1:4]
    if name == "eks-compositions":
        assert "  Composition eks-3-zones-1-node-group (apiextensions.crossplane.io/v1, configs)" in emitted
    else:
        assert emitted[:2] == [
            "  EKSCluster example/example (platform.fluxplane.io/v1alpha1, configs)",
            "  ProviderConfig example/spoke (kubernetes.m.crossplane.io/v1alpha1, configs)",
        ]
        assert "builds:   each workload cluster, on the hub" in out


def test_show_says_where_a_pack_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["packs", "show", "karpenter"]) == 0
    assert "runs on:  workload clusters only (needs fluxplane-network)\n" in capsys.readouterr().out
    assert main(["packs", "show", "eks-compositions"]) == 0
    assert "runs on:  the management cluster only\n" in capsys.readouterr().out
    assert main(["packs", "show", "crossplane"]) == 0
    assert "runs on:  any cluster\n" in capsys.readouterr().out
