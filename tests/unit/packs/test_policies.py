"""Tests for fluxplane.packs.policies: the add-ons' IAM policies, shipped as JSON package data of each pack."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from fluxplane.packs.crossplane_providers import SCOPED_SERVICES
from fluxplane.packs.policies import load_policy
from tests.conftest import ROOT

PACKS = ROOT / "src" / "fluxplane" / "packs"
#: Every policy file of the built-in packs, as <pack's folder>/<name>.json.
FILES = sorted(path.relative_to(PACKS).as_posix() for path in PACKS.glob("*/*.json"))


def _load(file: str) -> dict[str, Any]:
    folder, name = file.removesuffix(".json").split("/")
    return load_policy(name, f"fluxplane.packs.{folder}")


def test_the_policies_are_those_the_packs_load() -> None:
    assert FILES == [
        "aws_load_balancer_controller/controller.json",
        "cert_manager/route53.json",
        "crossplane_providers/dynamodb.json",
        "crossplane_providers/rds-password.json",
        "crossplane_providers/s3.json",
        "crossplane_providers/sqs.json",
        "external_dns/route53.json",
        "karpenter/controller.json",
    ]


@pytest.mark.parametrize("file", FILES)
def test_each_policy_is_an_iam_document_of_a_pack(file: str) -> None:
    # GIVEN a policy file WHEN loaded from its pack's package THEN it is an IAM document of allowed statements
    document = _load(file)
    assert document["Version"] == "2012-10-17"
    statements = document["Statement"]
    assert isinstance(statements, list) and statements
    assert {statement["Effect"] for statement in statements} == {"Allow"}
    # AND the folder it is in is a built-in pack's
    assert (PACKS / file).parent.joinpath("__init__.py").read_text().count("\nPACK = ") == 1, file


@pytest.mark.parametrize("file", FILES)
def test_a_policy_uses_no_variable_but_the_clusters(file: str) -> None:
    # Flux substitutes only the cluster's variables; IAM's own would be written as ${aws:...}
    variables = set(re.findall(r"\$\{([^}]*)\}", (PACKS / file).read_text()))
    assert variables <= {"cluster_name", "cluster_region"}


def test_each_load_is_a_fresh_copy() -> None:
    # GIVEN a loaded policy WHEN a pack fills it in THEN the next load is as the file has it
    first = load_policy("route53", "fluxplane.packs.external_dns")
    first["Statement"].clear()
    expected = json.loads((PACKS / "external_dns" / "route53.json").read_text())
    assert load_policy("route53", "fluxplane.packs.external_dns") == expected


def test_a_policy_is_its_packages_own() -> None:
    # GIVEN two packs with a policy of the same name WHEN each is loaded THEN each is its own package's file
    assert load_policy("route53", "fluxplane.packs.cert_manager") != load_policy(
        "route53", "fluxplane.packs.external_dns"
    )
    # AND a package without the file has none: no pack reads another's by accident
    with pytest.raises(FileNotFoundError):
        load_policy("controller", "fluxplane.packs.cert_manager")


def test_every_policy_is_loaded_by_its_pack() -> None:
    # a file its pack does not load would ship unused: each is named in its own pack's source, or is a scoped
    # provider's (crossplane-providers loads those by service)
    def unused(file: str) -> bool:
        folder, name = file.removesuffix(".json").split("/")
        source = "".join(path.read_text() for path in (PACKS / folder).glob("*.py"))
        scoped = folder == "crossplane_providers" and name in SCOPED_SERVICES
        return f'load_policy("{name}", __name__)' not in source and not scoped

    assert [file for file in FILES if unused(file)] == []
    assert {f"crossplane_providers/{service}.json" for service in SCOPED_SERVICES} <= set(FILES)


def test_no_policy_is_left_where_the_packs_shared_them() -> None:
    # the packs' policies live in the packs' folders: packs/ itself holds the framework's modules alone
    left = PACKS / "policies"
    assert [path for path in left.rglob("*") if path.is_file() and "__pycache__" not in path.parts] == []
    assert sorted(path.name for path in PACKS.glob("*.json")) == []
