"""Accounts: workload clusters in AWS accounts of their own, reached by the hub's Crossplane through a provider config
per account; the definition's checks, the provider configs, the compositions, the composites and the guard; and
fluxplane.config.accounts, the accounts as aws-setup and sealing-key name them."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.cli import EXIT_BAD_INPUT, main
from fluxplane.config.accounts import FleetAccount, fleet_accounts, profile, sealing_key_region
from fluxplane.config.loader import load_fleet
from fluxplane.constructs import Manifest, Root
from fluxplane.kinds import APP_KINDS
from fluxplane.kinds import eks_api as eks
from fluxplane.packs import crossplane_provider_configs
from fluxplane.packs.api import PackContext
from fluxplane.synth import load_plan, render_plan
from tests.conftest import MINIMAL_BASE, MINIMAL_ENV, FleetWriter
from tests.support.config import problems_of

ACCOUNTS = {
    "production": {"id": "012345678912"},
    "sandbox": {"id": "210987654321", "roleName": "xp", "externalId": "x1"},
}


def base(**extra: Any) -> dict[str, Any]:
    return {**copy.deepcopy(MINIMAL_BASE), **extra}


def env(**cluster: Any) -> dict[str, Any]:
    return {"clusters": [{**MINIMAL_ENV["clusters"][0], **cluster}]}


# -- the definition ---------------------------------------------------------------------------------


def test_a_cluster_names_an_account_of_the_base_file(write_fleet: FleetWriter) -> None:
    fleet = load_fleet(write_fleet(base=base(accounts=ACCOUNTS), envs={"staging": env(account="sandbox")})).fleet
    assert fleet.clusters[0].account == "sandbox"
    assert fleet.accounts["sandbox"].id == "210987654321"
    assert fleet.accounts["production"].role_name == "fluxplane-crossplane"


def test_an_environment_names_its_account_in_its_cluster_defaults(write_fleet: FleetWriter) -> None:
    environment = {**env(), "clusterDefaults": {"account": "production"}}
    fleet = load_fleet(write_fleet(base=base(accounts=ACCOUNTS), envs={"production": environment})).fleet
    assert [cluster.account for cluster in fleet.clusters] == ["production"]


def test_an_account_without_a_provider_config_is_refused_where_it_is_named(
    write_fleet: FleetWriter, tmp_path: Path
) -> None:
    environment = {**env(), "clusterDefaults": {"account": "prod"}}
    assert problems_of(write_fleet(base=base(accounts=ACCOUNTS), envs={"production": environment})) == [
        'environments/production.yaml: clusterDefaults.account: "prod" is not an account of environments/base.yaml '
        "(accounts: production, sandbox); add it under accounts with its id, so the hub's Crossplane has a provider "
        "config to reach it"
    ]
    assert problems_of(write_fleet(envs={"staging": env(account="prod")}, root=tmp_path / "other")) == [
        'environments/staging.yaml: clusters[0].account: "prod" is not an account of environments/base.yaml '
        "(accounts: none); add it under accounts with its id, so the hub's Crossplane has a provider config to reach it"
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # YAML reads an unquoted id as a number
        (
            "12345678912",
            "accounts.production.id: an account id is a string of 12 digits in quotes; unquoted, YAML reads the number "
            "12345678912 (an id starting with 0 loses it, or is even read as an octal number)",
        ),
        ('"1234"', 'accounts.production.id: expected a value matching ^[0-9]{12}$, got "1234"'),
    ],
)
def test_an_account_id_is_twelve_digits_in_quotes(write_fleet: FleetWriter, text: str, expected: str) -> None:
    document = yaml.safe_dump(base(), sort_keys=False) + f"accounts:\n  production:\n    id: {text}\n"
    problems = problems_of(write_fleet(base=document))
    assert [problem.removeprefix("environments/base.yaml: ") for problem in problems] == [expected]


def test_the_hubs_provider_config_name_and_a_repeated_id_are_refused(write_fleet: FleetWriter) -> None:
    (problem,) = problems_of(write_fleet(base=base(accounts={"default": {"id": "012345678912"}})))
    assert "'default' is the hub's own account's provider config; name the account otherwise" in problem
    twice = {"a": {"id": "012345678912"}, "b": {"id": "012345678912"}}
    (problem,) = problems_of(write_fleet(base=base(accounts=twice)))
    assert "each account once, id '012345678912' named twice" in problem


# -- what the hub makes -----------------------------------------------------------------------------


def test_each_account_gets_a_provider_config_that_assumes_its_role(write_fleet: FleetWriter) -> None:
    fleet = load_fleet(write_fleet(base=base(accounts=ACCOUNTS))).fleet
    context = PackContext(Manifest(Root(), "m", path="x.yaml"), fleet=fleet)
    pack = crossplane_provider_configs.PACK
    pack.bind(context, pack.config.model_validate({}))
    assert [(d["metadata"]["name"], d["spec"]) for d in context.manifest.documents()] == [
        ("default", {"credentials": {"source": "IRSA"}}),
        (
            "production",
            {
                "credentials": {"source": "IRSA"},
                "assumeRoleChain": [{"roleARN": "arn:aws:iam::012345678912:role/fluxplane-crossplane"}],
            },
        ),
        (
            "sandbox",
            {
                "credentials": {"source": "IRSA"},
                "assumeRoleChain": [{"roleARN": "arn:aws:iam::210987654321:role/xp", "externalID": "x1"}],
            },
        ),
    ]


def _compositions() -> list[dict[str, Any]]:
    shapes = [
        eks.composition_props(eks.Shape(zones=2, node_groups=1)).dump(),
        eks.composition_props(eks.Shape(zones=3, node_groups=2, nat_gateways="Single", keyless=True)).dump(),
    ]
    return [*shapes, *(declared.composition_props().dump() for declared in APP_KINDS.values())]


def test_every_aws_resource_of_every_composition_is_made_in_the_composites_account() -> None:
    account = {"type": "PatchSet", "patchSetName": "account"}
    for composition in _compositions():
        for resource in composition["pipeline"][0]["input"]["resources"]:
            aws = resource["base"]["apiVersion"].endswith(".aws.m.upbound.io/v1beta1")
            assert (account in resource["patches"]) is aws, (composition["name"], resource["name"])
            if aws:
                assert resource["base"]["spec"]["providerConfigRef"] == {
                    "kind": "ClusterProviderConfig",
                    "name": "default",
                }
    (patch_set,) = [item for item in eks.PATCH_SETS if item["name"] == "account"]
    assert patch_set["patches"] == [
        {
            "type": "FromCompositeFieldPath",
            "fromFieldPath": "spec.providerConfigName",
            "toFieldPath": "spec.providerConfigRef.name",
        }
    ]


def test_every_composite_kind_takes_the_account_defaulting_to_the_hubs() -> None:
    specs = [eks.xrd_props().dump()["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]]
    specs += [
        declared.xrd_props().dump()["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        for declared in APP_KINDS.values()
    ]
    for spec in specs:
        assert spec["properties"]["providerConfigName"]["default"] == "default"
        assert "providerConfigName" not in spec["required"]


def test_a_clusters_composites_and_hub_namespace_name_its_account(write_fleet: FleetWriter) -> None:
    # GIVEN a cluster in the sandbox account with an add-on needing an identity, and one in the hub's account
    hub_packs = {**MINIMAL_BASE["management"]["packs"], "app-compositions": {}}
    management = {**MINIMAL_BASE["management"], "packs": hub_packs}
    environment = {
        "clusters": [
            {"name": "sandbox-1", "region": "us-west-2", "account": "sandbox"},
            {"name": "staging-1", "region": "us-west-2"},
        ]
    }
    root = write_fleet(
        base=base(accounts=ACCOUNTS, management=management, packs={"external-dns": {"domainFilters": ["example.com"]}}),
        envs={"staging": environment},
    )
    files = render_plan(load_plan(root))
    # WHEN synthesized THEN the sandbox cluster's composites and namespace name the account, the other's do not
    cluster = next(yaml.safe_load_all(files["platform/spokes/sandbox-1/cluster/cluster.yaml"]))
    assert (cluster["kind"], cluster["spec"]["providerConfigName"]) == ("EKSCluster", "sandbox")
    identities = list(yaml.safe_load_all(files["platform/addon-identities/sandbox-1/addon-identities.yaml"]))
    assert {doc["spec"]["providerConfigName"] for doc in identities if doc["kind"] == "AddonIdentity"} == {"sandbox"}
    namespace = next(yaml.safe_load_all(files["platform/spokes/sandbox-1/bootstrap.yaml"]))
    assert namespace["metadata"]["labels"]["fluxplane.io/account"] == "sandbox"
    other = next(yaml.safe_load_all(files["platform/spokes/staging-1/cluster/cluster.yaml"]))
    assert other["kind"] == "EKSCluster" and "providerConfigName" not in other["spec"]
    other_namespace = next(yaml.safe_load_all(files["platform/spokes/staging-1/bootstrap.yaml"]))
    assert "fluxplane.io/account" not in other_namespace["metadata"]["labels"]


# -- day two ----------------------------------------------------------------------------------------


def test_moving_an_existing_cluster_to_another_account_needs_the_users_word(
    example_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the example, whose staging cluster lives in the hub's account, moved to the production account
    staging = example_project / "environments" / "staging.yaml"
    staging.write_text(
        staging.read_text().replace("  - name: staging-usw2\n", "  - name: staging-usw2\n    account: production\n")
    )
    written = example_project / "dist" / "platform" / "spokes" / "staging-usw2" / "cluster" / "cluster.yaml"
    before = written.read_bytes()
    capsys.readouterr()
    # WHEN synthesized THEN refused: its resources would be made anew in the other account
    assert main(["--root", str(example_project), "synth"]) == EXIT_BAD_INPUT
    assert (
        "platform/spokes/staging-usw2/cluster/cluster.yaml: EKSCluster staging-usw2/staging-usw2: "
        "spec.providerConfigName changes from default to production, which makes the cloud resources anew in the "
        "other AWS account, leaving the old ones unmanaged; to do it on purpose, run synth with --replace "
        "'EKSCluster/staging-usw2/staging-usw2'"
    ) in capsys.readouterr().err.splitlines()
    assert written.read_bytes() == before
    # AND with the user's word it is written
    assert main(["--root", str(example_project), "synth", "--replace", "*/staging-usw2/*"]) == 0
    assert "providerConfigName: production" in written.read_text()


# -- fluxplane.config.accounts: the accounts as aws-setup and sealing-key see them ------------------------


def test_the_fleets_accounts_are_the_hubs_then_each_named_one_with_the_clusters_made_there(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN staging-1 in the hub's account, prod-1 in production, and sandbox named by no cluster
    envs = {
        "staging": env(),
        "production": {"clusters": [{"name": "prod-1", "region": "us-east-1", "account": "production"}]},
    }
    fleet = load_fleet(write_fleet(base=base(accounts=ACCOUNTS), envs=envs)).fleet
    # THEN the hub's account comes first, then the others by name, each with its clusters
    assert fleet_accounts(fleet) == [
        FleetAccount(None, None, ("staging-1",)),
        FleetAccount("production", "012345678912", ("prod-1",)),
        FleetAccount("sandbox", "210987654321", ()),
    ]
    # AND the sealing key is read where clusters are, each account named by its profile
    assert [
        (account.name, account.holds_sealing_key, profile(fleet, account)) for account in fleet_accounts(fleet)
    ] == [
        (None, True, "hub"),
        ("production", True, "production"),
        ("sandbox", False, "sandbox"),
    ]


def test_the_sealing_keys_region_is_its_own_or_the_hubs(write_fleet: FleetWriter, tmp_path: Path) -> None:
    assert sealing_key_region(load_fleet(write_fleet(base=base())).fleet) == "us-west-2"
    moved = base(sealingKey={"region": "eu-west-1"})
    assert sealing_key_region(load_fleet(write_fleet(base=moved, root=tmp_path / "moved")).fleet) == "eu-west-1"
