"""fluxplane.synth.aws_setup: the CloudFormation templates of what the fleet needs in each AWS account, checked with the
real cfn-lint and for what they grant: who may assume each role, and what it may do."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from cfnlint.api import ManualArgs, lint

from fluxplane.errors import ConfigError
from fluxplane.packs import crossplane_providers
from fluxplane.synth import aws_setup, load_plan
from fluxplane.synth.aws_setup import MARKER, Setup, Stack, plan_setup, write
from tests.conftest import HUB_PACKS, MINIMAL_BASE, MINIMAL_ENV, ROOT, FleetWriter

PROVIDERS_ROLE = "arn:aws:iam::111122223333:role/crossplane-providers"


def setup_of(root: Path) -> Setup:
    return aws_setup.aws_setup(root)


def by_name(setup: Setup) -> dict[str, Stack]:
    return {stack.name: stack for stack in setup.stacks}


def resources(stack: Stack) -> dict[str, Any]:
    return stack.template["Resources"]  # type: ignore[no-any-return]


def irsa_trust(role: dict[str, Any]) -> dict[str, Any]:
    """An IRSA trust policy, with the issuer parameter's placeholders as they stand (the template's Fn::Sub)."""
    document = role["Properties"]["AssumeRolePolicyDocument"]
    assert list(document) == ["Fn::Sub"]
    return json.loads(document["Fn::Sub"])  # type: ignore[no-any-return]


def cfn_lint(stack: Stack) -> list[str]:
    """cfn-lint's findings on ``stack``'s template as written, in its region (every rule, no exception)."""
    return [str(match) for match in lint(stack.text, config=ManualArgs(regions=[stack.region]))]


def base(**extra: Any) -> dict[str, Any]:
    return {**copy.deepcopy(MINIMAL_BASE), **extra}


def pod_identity_base(**extra: Any) -> dict[str, Any]:
    packs = copy.deepcopy(HUB_PACKS)
    packs["crossplane-providers"] = {"identity": "pod-identity"}
    packs["crossplane-provider-configs"] = {"identity": "pod-identity"}
    data = base(**extra)
    data["management"] = {**data["management"], "packs": packs}
    return data


# -- the example fleet ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def example() -> Setup:
    return setup_of(ROOT)


def test_the_example_needs_a_stack_for_the_hubs_account_and_one_for_production(example: Setup) -> None:
    assert [(stack.name, stack.account.name, stack.region) for stack in example.stacks] == [
        ("fluxplane-hub", None, "us-west-2"),
        ("fluxplane-hub-account-production", "production", "us-west-2"),
    ]
    hub, production = example.stacks
    assert list(resources(hub)) == ["CrossplaneProvidersRole", "FluxRole", "SealingKeySecret"]
    assert list(resources(production)) == ["CrossplaneRole", "SealingKeySecret"]


def test_every_template_of_the_example_passes_cfn_lint(example: Setup) -> None:
    for stack in example.stacks:
        assert cfn_lint(stack) == [], stack.name


def test_the_providers_role_trusts_exactly_the_providers_service_accounts_on_the_hub(example: Setup) -> None:
    hub = by_name(example)["fluxplane-hub"]
    role = resources(hub)["CrossplaneProvidersRole"]
    config = load_plan(ROOT).hub.packs["crossplane-providers"]
    assert isinstance(config, crossplane_providers.CrossplaneProvidersConfig)
    # THEN it is the role the definition names
    assert (role["Properties"]["RoleName"], role["Properties"]["Path"]) == ("fleet-crossplane-providers", "/")
    # AND it trusts the hub's OIDC provider for exactly the service accounts the providers run as
    assert irsa_trust(role) == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {
                    "Federated": "arn:${AWS::Partition}:iam::${AWS::AccountId}:oidc-provider/${HubOidcIssuer}"
                },
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {
                    "StringEquals": {
                        "${HubOidcIssuer}:aud": "sts.amazonaws.com",
                        "${HubOidcIssuer}:sub": [
                            f"system:serviceaccount:crossplane-system:{name}"
                            for name in ["provider-family-aws", *(f"provider-aws-{s}" for s in sorted(config.services))]
                        ],
                    }
                },
            }
        ],
    }
    assert crossplane_providers.service_accounts(config)[0] == "provider-family-aws"
    # AND the issuer is the stack's one parameter, which the deploy command reads from the hub cluster
    assert list(hub.template["Parameters"]) == ["HubOidcIssuer"]
    assert example.deploy_command(hub, "aws-setup") == (
        "aws cloudformation deploy --stack-name fluxplane-hub --template-file aws-setup/fluxplane-hub.yaml "
        "--capabilities CAPABILITY_NAMED_IAM --no-fail-on-empty-changeset --region us-west-2 --profile hub "
        '--parameter-overrides HubOidcIssuer="$(aws eks describe-cluster --name hub --region us-west-2 --profile hub '
        "--query cluster.identity.oidc.issuer --output text | sed 's|^https://||')\""
    )
    # AND its policy is the pack's, with the production account's role to assume
    assert role["Properties"]["Policies"] == [
        {
            "PolicyName": "crossplane-providers",
            "PolicyDocument": crossplane_providers.policy(
                config, ["arn:aws:iam::444455556666:role/fluxplane-crossplane"]
            ),
        }
    ]


def test_the_policy_grants_each_service_the_providers_manage_and_what_rds_keeps_passwords_with() -> None:
    config = crossplane_providers.CrossplaneProvidersConfig.model_validate(
        {"roleArn": PROVIDERS_ROLE, "services": ["ec2", "rds", "cloudwatchlogs"]}
    )
    statements = crossplane_providers.policy(config)["Statement"]
    assert [(item["Sid"], item["Action"]) for item in statements] == [
        ("Cloudwatchlogs", ["logs:*"]),
        ("Ec2", ["ec2:*"]),
        ("Rds", ["rds:*"]),
        ("RdsMasterPasswords", statements[3]["Action"]),
    ]
    assert statements[3]["Resource"] == ["arn:aws:secretsmanager:*:*:secret:rds!*"]
    assert all(action.startswith("secretsmanager:") for action in statements[3]["Action"])


def test_each_account_role_trusts_the_hubs_providers_role_alone(example: Setup) -> None:
    production = by_name(example)["fluxplane-hub-account-production"]
    role = resources(production)["CrossplaneRole"]["Properties"]
    assert role["RoleName"] == "fluxplane-crossplane"
    assert role["AssumeRolePolicyDocument"] == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"AWS": "arn:aws:iam::111122223333:role/fleet-crossplane-providers"},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
            }
        ],
    }
    config = load_plan(ROOT).hub.packs["crossplane-providers"]
    assert isinstance(config, crossplane_providers.CrossplaneProvidersConfig)
    assert role["Policies"] == [
        {"PolicyName": "crossplane-providers", "PolicyDocument": crossplane_providers.policy(config)}
    ]
    assert "Parameters" not in production.template


def test_the_flux_role_trusts_the_hubs_kustomize_and_helm_controllers_and_reads_the_keyless_clusters(
    example: Setup,
) -> None:
    role = resources(by_name(example)["fluxplane-hub"])["FluxRole"]
    assert role["Properties"]["RoleName"] == "fleet-hub-flux"
    condition = irsa_trust(role)["Statement"][0]["Condition"]["StringEquals"]
    assert condition["${HubOidcIssuer}:sub"] == [
        "system:serviceaccount:flux-system:kustomize-controller",
        "system:serviceaccount:flux-system:helm-controller",
    ]
    assert role["Properties"]["Policies"][0]["PolicyDocument"]["Statement"] == [
        {
            "Sid": "KeylessClusters",
            "Effect": "Allow",
            "Action": ["eks:DescribeCluster"],
            "Resource": [
                "arn:aws:eks:us-east-1:444455556666:cluster/production-use1",
                "arn:aws:eks:eu-central-1:444455556666:cluster/production-euc1",
            ],
        }
    ]


def test_the_sealing_key_secret_is_made_empty_and_kept_when_its_stack_goes(example: Setup) -> None:
    for stack in example.stacks:
        secret = resources(stack)["SealingKeySecret"]
        assert secret["Type"] == "AWS::SecretsManager::Secret"
        assert (secret["DeletionPolicy"], secret["UpdateReplacePolicy"]) == ("Retain", "Retain")
        assert set(secret["Properties"]) == {"Name", "Description"}
        assert secret["Properties"]["Name"] == "fluxplane/sealing-key"


def test_the_templates_are_the_same_bytes_for_the_same_definition(example: Setup) -> None:
    again = setup_of(ROOT)
    assert [stack.text for stack in again.stacks] == [stack.text for stack in example.stacks]
    for stack in example.stacks:
        assert stack.text.startswith(f"{MARKER} from environments/: stack {stack.name}, ")
        assert stack.text.endswith("\n") and "&" not in stack.text and "*id" not in stack.text
        assert yaml.safe_load(stack.text) == stack.template


# -- the definition changes, the templates with it ------------------------------------------------------


def test_an_account_added_gets_its_stack_and_the_hubs_role_may_assume_its_role(
    write_fleet: FleetWriter, tmp_path: Path
) -> None:
    # GIVEN the minimal fleet: one cluster, in the hub's account
    before = setup_of(write_fleet())
    assert [stack.name for stack in before.stacks] == ["fluxplane-hub"]
    hub_policy = resources(before.stacks[0])["CrossplaneProvidersRole"]["Properties"]["Policies"][0]["PolicyDocument"]
    assert "AccountRoles" not in [item["Sid"] for item in hub_policy["Statement"]]
    # WHEN an account with an external id is added, and the cluster moves there
    accounts = {"sandbox": {"id": "210987654321", "roleName": "xp", "externalId": "fleet-1"}}
    env = {"clusters": [{**MINIMAL_ENV["clusters"][0], "account": "sandbox"}]}
    after = setup_of(write_fleet(base=base(accounts=accounts), envs={"staging": env}, root=tmp_path / "sandbox"))
    # THEN the account has its stack: its role for the hub's providers (with the external id), and the sealing key
    stacks = by_name(after)
    sandbox = resources(stacks["fluxplane-hub-account-sandbox"])
    assert list(sandbox) == ["CrossplaneRole", "SealingKeySecret"]
    statement = sandbox["CrossplaneRole"]["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]
    assert statement["Principal"] == {"AWS": PROVIDERS_ROLE}
    assert statement["Condition"] == {"StringEquals": {"sts:ExternalId": "fleet-1"}}
    # AND the hub's providers may assume it, and the hub's account no longer holds the sealing key
    hub = resources(stacks["fluxplane-hub"])
    assert list(hub) == ["CrossplaneProvidersRole"]
    policy = hub["CrossplaneProvidersRole"]["Properties"]["Policies"][0]["PolicyDocument"]
    assert policy["Statement"][-1] == {
        "Sid": "AccountRoles",
        "Effect": "Allow",
        "Action": ["sts:AssumeRole", "sts:TagSession"],
        "Resource": ["arn:aws:iam::210987654321:role/xp"],
    }
    for stack in after.stacks:
        assert cfn_lint(stack) == [], stack.name


def test_keyless_access_switched_on_adds_the_flux_role(write_fleet: FleetWriter, tmp_path: Path) -> None:
    management = {**MINIMAL_BASE["management"], "fluxRoleArn": "arn:aws:iam::111122223333:role/hub/flux"}
    # GIVEN the hub's Flux role named, but no cluster keyless THEN no Flux role is made
    root = write_fleet(base=base(management=management))
    assert "FluxRole" not in resources(setup_of(root).stacks[0])
    # WHEN a cluster switches to keyless access THEN the Flux role is made, under its path, reading that cluster
    env = {"clusters": [{**MINIMAL_ENV["clusters"][0], "hubAccess": "keyless"}]}
    root = write_fleet(base=base(management=management), envs={"staging": env}, root=tmp_path / "keyless")
    hub = setup_of(root).stacks[0]
    flux = resources(hub)["FluxRole"]["Properties"]
    assert (flux["RoleName"], flux["Path"]) == ("flux", "/hub/")
    assert flux["Policies"][0]["PolicyDocument"]["Statement"][0]["Resource"] == [
        {"Fn::Sub": "arn:aws:eks:us-west-2:${AWS::AccountId}:cluster/staging-1"}
    ]
    assert hub.template["Outputs"]["FluxRoleArn"]["Value"] == {"Fn::GetAtt": ["FluxRole", "Arn"]}
    assert cfn_lint(hub) == []


# -- EKS Pod Identity --------------------------------------------------------------------------------------


def test_with_pod_identity_the_roles_trust_the_hubs_session_tags_and_are_associated(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN providers on Pod Identity (no role ARN), and an account
    data = pod_identity_base(accounts={"production": {"id": "444455556666"}})
    setup = setup_of(write_fleet(base=data))
    hub, production = setup.stacks
    role = resources(hub)["CrossplaneProvidersRole"]["Properties"]
    # THEN the role is named after the hub, and admits only its providers' service accounts through Pod Identity
    assert role["RoleName"] == "hub-crossplane-providers"
    accounts = ["provider-family-aws", "provider-aws-ec2", "provider-aws-eks", "provider-aws-iam"]
    assert role["AssumeRolePolicyDocument"]["Statement"] == [
        {
            "Effect": "Allow",
            "Principal": {"Service": "pods.eks.amazonaws.com"},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
            "Condition": {
                "StringEquals": {
                    "aws:RequestTag/eks-cluster-name": "hub",
                    "aws:RequestTag/kubernetes-namespace": "crossplane-system",
                    "aws:RequestTag/kubernetes-service-account": accounts,
                }
            },
        }
    ]
    # AND each service account is associated with it on the hub; no OIDC issuer is asked for
    associations = {
        name: item["Properties"]
        for name, item in resources(hub).items()
        if item["Type"] == "AWS::EKS::PodIdentityAssociation"
    }
    assert sorted(item["ServiceAccount"] for item in associations.values()) == sorted(accounts)
    assert {(item["ClusterName"], item["Namespace"]) for item in associations.values()} == {
        ("hub", "crossplane-system")
    }
    assert "CrossplaneProvidersAssociationProviderAwsEc2" in associations
    assert "Parameters" not in hub.template
    # AND the account's role, the hub's account id being unknown to the definition, takes it as a parameter
    principal = resources(production)["CrossplaneRole"]["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]
    assert principal["Principal"] == {
        "AWS": {"Fn::Sub": "arn:${AWS::Partition}:iam::${HubAccountId}:role/hub-crossplane-providers"}
    }
    assert setup.deploy_command(production, "out").endswith(
        "--parameter-overrides "
        'HubAccountId="$(aws sts get-caller-identity --query Account --output text --profile hub)"'
    )
    for stack in setup.stacks:
        assert cfn_lint(stack) == [], stack.name


def test_a_sealing_key_in_another_region_gets_its_own_stack_beside_the_associations(
    write_fleet: FleetWriter, tmp_path: Path
) -> None:
    data = pod_identity_base(sealingKey={"region": "eu-west-1"})
    setup = setup_of(write_fleet(base=data))
    assert [(stack.name, stack.region, list(resources(stack))[-1]) for stack in setup.stacks] == [
        ("fluxplane-hub", "us-west-2", "CrossplaneProvidersAssociationProviderAwsIam"),
        ("fluxplane-hub-sealing-key", "eu-west-1", "SealingKeySecret"),
    ]
    for stack in setup.stacks:
        assert cfn_lint(stack) == [], stack.name
    # AND with IRSA, IAM alone, one stack in the key's region holds it all
    irsa = setup_of(write_fleet(base=base(sealingKey={"region": "eu-west-1"}), root=tmp_path / "irsa"))
    assert [(stack.name, stack.region) for stack in irsa.stacks] == [("fluxplane-hub", "eu-west-1")]


# -- what the definition cannot mean ------------------------------------------------------------------------


def test_roles_of_the_hub_in_two_accounts_are_refused(write_fleet: FleetWriter) -> None:
    management = {**MINIMAL_BASE["management"], "fluxRoleArn": "arn:aws:iam::999999999999:role/flux"}
    env = {"clusters": [{**MINIMAL_ENV["clusters"][0], "hubAccess": "keyless"}]}
    with pytest.raises(ConfigError) as caught:
        setup_of(write_fleet(base=base(management=management), envs={"staging": env}))
    assert caught.value.problems == (
        "environments/base.yaml: management.fluxRoleArn: names account 999999999999, and crossplane-providers' roleArn "
        "account 111122223333; both are roles of the hub, in the hub's own account",
    )


def test_an_account_that_is_the_hubs_own_is_refused(write_fleet: FleetWriter) -> None:
    with pytest.raises(ConfigError) as caught:
        setup_of(write_fleet(base=base(accounts={"main": {"id": "111122223333"}})))
    assert caught.value.problems == (
        "environments/base.yaml: accounts.main.id: '111122223333' is the hub's own account (its roles' ARNs name it); "
        "its clusters need no account: leave 'account' unset for them",
    )


# -- writing --------------------------------------------------------------------------------------------


def test_write_puts_each_template_in_the_folder_and_names_the_ones_no_stack_has(example: Setup, tmp_path: Path) -> None:
    folder = tmp_path / "aws-setup"
    folder.mkdir()
    (folder / "fluxplane-hub-account-gone.yaml").write_text(f"{MARKER} from environments/: stack gone\n")
    (folder / "notes.yaml").write_text("mine: true\n")
    written = write(example, folder)
    assert written.written == tuple(folder / stack.file_name for stack in example.stacks)
    assert [path.read_text() for path in written.written] == [stack.text for stack in example.stacks]
    assert written.stale == (folder / "fluxplane-hub-account-gone.yaml",)
    assert (folder / "notes.yaml").read_text() == "mine: true\n"


def test_a_fleet_without_the_hubs_providers_needs_no_role(write_fleet: FleetWriter) -> None:
    # GIVEN a hub that builds nothing: no providers, no workload clusters
    data = base()
    data["management"] = {"name": "hub", "region": "us-west-2"}
    plan = load_plan(write_fleet(base=data, envs={"staging": {"clusters": []}}))
    assert plan_setup(plan).stacks == ()
