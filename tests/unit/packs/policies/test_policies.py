"""Tests for fluxplane.packs.policies: the add-ons' IAM policies, shipped as JSON package data."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fluxplane.packs import policies
from fluxplane.packs.crossplane_providers import SCOPED_SERVICES
from fluxplane.packs.policies import load_policy
from tests.conftest import ROOT

FOLDER = Path(policies.__file__).parent
NAMES = sorted(path.stem for path in FOLDER.glob("*.json"))
PACK_SOURCES = "".join(path.read_text() for path in (ROOT / "src" / "fluxplane" / "packs").rglob("*.py"))


def test_the_policies_are_those_the_packs_load() -> None:
    assert NAMES == [
        "aws-load-balancer-controller-controller",
        "cert-manager-route53",
        "crossplane-providers-dynamodb",
        "crossplane-providers-rds-password",
        "crossplane-providers-s3",
        "crossplane-providers-sqs",
        "external-dns-route53",
        "karpenter-controller",
    ]


@pytest.mark.parametrize("name", NAMES)
def test_each_policy_is_an_iam_document_named_after_its_pack(name: str) -> None:
    # GIVEN a policy file WHEN loaded THEN it is an IAM policy document of allowed statements
    document = load_policy(name)
    assert document["Version"] == "2012-10-17"
    assert document["Statement"] and {statement["Effect"] for statement in document["Statement"]} == {"Allow"}
    # AND its name starts with a pack's module name, spelt as the pack is named
    assert any(name.startswith(f"{module.replace('_', '-')}-") for module in _pack_modules()), name


@pytest.mark.parametrize("name", NAMES)
def test_a_policy_uses_no_variable_but_the_clusters(name: str) -> None:
    # Flux substitutes only the cluster's variables; IAM's own would be written as ${aws:...}
    variables = set(re.findall(r"\$\{([^}]*)\}", (FOLDER / f"{name}.json").read_text()))
    assert variables <= {"cluster_name", "cluster_region"}


def test_each_load_is_a_fresh_copy() -> None:
    # GIVEN a loaded policy WHEN a pack fills it in THEN the next load is as the file has it
    first = load_policy("external-dns-route53")
    first["Statement"].clear()
    assert load_policy("external-dns-route53") == json.loads((FOLDER / "external-dns-route53.json").read_text())


def test_a_policy_of_another_package() -> None:
    # GIVEN a package that ships its own policies WHEN one is loaded from it THEN it is that package's file
    assert load_policy("karpenter-controller", "fluxplane.packs.policies") == load_policy("karpenter-controller")
    with pytest.raises(FileNotFoundError):
        load_policy("karpenter-controller", "fluxplane.packs")


def _pack_modules() -> list[str]:
    return sorted(path.parent.name for path in (ROOT / "src" / "fluxplane" / "packs").glob("*/__init__.py"))


def test_every_policy_is_loaded_by_a_pack() -> None:
    # a file no pack loads would ship unused: each is named in a pack's source, or is a scoped provider's
    scoped = {f"crossplane-providers-{service}" for service in SCOPED_SERVICES}
    assert [name for name in NAMES if f'"{name}"' not in PACK_SOURCES and name not in scoped] == []
    assert scoped <= set(NAMES)
