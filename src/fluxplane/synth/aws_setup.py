"""``fluxplane aws-setup``: what the fleet needs in AWS before the hub can build anything, as CloudFormation.

The hub's Crossplane, the hub's Flux (keyless access) and every spoke's External Secrets act in AWS through
roles and a secret that exist before the fleet does: made once per account, by hand until now. This module
writes them from the definition instead, one CloudFormation template (one stack) per AWS account:

* the hub's own account: the Crossplane providers' role, trusting exactly the providers' service accounts
  (IRSA through the hub's OIDC provider, or EKS Pod Identity with its associations, as crossplane-providers'
  ``identity`` says), with the pack's policy (fluxplane.packs.crossplane_providers.policy); the hub's Flux
  role when a workload cluster uses keyless hub access (``management.fluxRoleArn``, trusting
  kustomize-controller and helm-controller the same way); the sealing key's secret when a spoke is made here;
* each account of ``accounts``: the role the hub's providers assume there (``roleName``, trusting the hub's
  providers' role, with the ``externalId`` when one is set), with the same policy; and the sealing key's
  secret when a spoke is made there.

What the hub cluster itself has is assumed to exist, as for any hub made by hand: its IAM OIDC provider
(IRSA) or its Pod Identity Agent add-on. The templates hold no key material: the secrets are made empty,
``fluxplane sealing-key`` fills them, and a stack deleted keeps them (``DeletionPolicy: Retain``). The same
definition gives the same bytes; a new account, or keyless access switched on, changes them.

A stack holds resources of one region: when the hub's account needs Pod Identity associations (in the hub's
region) and the sealing key's secret lives in another region (``sealingKey.region``), the secret gets a stack
of its own there.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxplane.config.accounts import FleetAccount, fleet_accounts, profile, sealing_key_region
from fluxplane.config.awsdata import partition
from fluxplane.config.loader import load_fleet
from fluxplane.config.models import Fleet, WorkloadCluster
from fluxplane.constructs.props import FLUX_NAMESPACE, HELM_CONTROLLER, KUSTOMIZE_CONTROLLER
from fluxplane.core.codec import dump_documents
from fluxplane.errors import ConfigError
from fluxplane.packs import crossplane_providers
from fluxplane.packs.crossplane import NAMESPACE as CROSSPLANE_NAMESPACE
from fluxplane.synth import project_registry
from fluxplane.synth.plan import FleetPlan, plan_fleet
from fluxplane.system.files import write_atomic

#: Where the templates go by default, in the project: reviewed with the definition that made them.
DEFAULT_OUT = "aws-setup"
#: The first line of every template: what made it. A file of the folder without it is not one of ours.
MARKER = "# Written by 'fluxplane aws-setup'"
#: The parameter of the hub's OIDC issuer (IRSA): the hub exists, the definition does not know its issuer.
OIDC_ISSUER = "HubOidcIssuer"
#: The parameter of the hub's account id, in the other accounts, when no role ARN of the definition names it.
HUB_ACCOUNT_ID = "HubAccountId"
_ARN = re.compile(r"^arn:(?P<partition>[a-z-]+):iam::(?P<account>[0-9]{12}):role(?P<path>/(?:.*/)?)(?P<name>[^/]+)$")
_POLICY_VERSION = "2012-10-17"


@dataclass(frozen=True)
class IamRole:
    """An IAM role of the definition: its name and path, and the account its ARN names (None: not named yet)."""

    name: str
    path: str = "/"
    account: str | None = None

    @classmethod
    def from_arn(cls, arn: str) -> IamRole:
        found = _ARN.match(arn)
        if found is None:
            raise ValueError(f"not an IAM role ARN: {arn!r}")
        return cls(found["name"], found["path"], found["account"])


@dataclass(frozen=True)
class Stack:
    """One CloudFormation stack: its template, and where and how it is deployed."""

    name: str
    account: FleetAccount
    region: str
    #: What it holds, for the line that names its file.
    holds: tuple[str, ...]
    template: dict[str, Any]
    #: The deploy command's parameter overrides: (parameter, a shell word that gives its value).
    parameters: tuple[tuple[str, str], ...] = ()

    @property
    def file_name(self) -> str:
        return f"{self.name}.yaml"

    @property
    def text(self) -> str:
        what = "the hub's own AWS account" if self.account.name is None else f"AWS account {self.account.name!r}"
        header = (
            f"{MARKER} from environments/: stack {self.name}, {what}, region {self.region}.\n"
            "# Change the definition and run it again rather than edit this file.\n"
        )
        return header + dump_documents([self.template])


@dataclass(frozen=True)
class Setup:
    """The stacks, in the order they deploy (the hub's account first), and what the hub must already have."""

    fleet: Fleet
    stacks: tuple[Stack, ...]
    prerequisites: tuple[str, ...] = field(default_factory=tuple)

    def deploy_command(self, stack: Stack, folder: str) -> str:
        """The ``aws cloudformation deploy`` of ``stack``, its template in ``folder``."""
        template = shlex.quote(f"{folder.rstrip('/')}/{stack.file_name}")
        words = [
            "aws cloudformation deploy",
            f"--stack-name {stack.name}",
            f"--template-file {template}",
            "--capabilities CAPABILITY_NAMED_IAM --no-fail-on-empty-changeset",
            f"--region {stack.region}",
            f"--profile {profile(self.fleet, stack.account)}",
        ]
        if stack.parameters:
            words.append("--parameter-overrides " + " ".join(f"{key}={value}" for key, value in stack.parameters))
        return " ".join(words)


def aws_setup(root: Path) -> Setup:
    """The setup of the definition under ``root``. Sealed secrets may still be missing: the setup comes first."""
    registry = project_registry(root)

    def check_packs(sections: dict[str, Any], origins: Any) -> list[str]:
        return registry.configure(sections, origins)[1]

    return plan_setup(plan_fleet(load_fleet(root, check_packs), registry, require_secrets=False))


def plan_setup(plan: FleetPlan) -> Setup:
    """The stacks ``plan``'s fleet needs, from its definition alone."""
    fleet = plan.fleet
    config = plan.hub.packs.get("crossplane-providers")
    providers = config if isinstance(config, crossplane_providers.CrossplaneProvidersConfig) else None
    identity = providers.identity if providers is not None else "irsa"
    keyless = [cluster for cluster in fleet.clusters if cluster.hub_access == "keyless"]
    flux = IamRole.from_arn(fleet.management.flux_role_arn) if fleet.management.flux_role_arn and keyless else None
    providers_role: IamRole | None = None
    if providers is not None:
        providers_role = (
            IamRole.from_arn(providers.role_arn)
            if providers.role_arn
            else IamRole(f"{fleet.management.name}-crossplane-providers")
        )
    hub_id = _hub_account_id(fleet, providers_role, flux)
    accounts = fleet_accounts(fleet)
    accounts[0] = dataclasses.replace(accounts[0], id=hub_id)
    builder = _Builder(fleet, identity, partition(fleet.management.region), hub_id)
    stacks = builder.hub(accounts[0], providers, providers_role, flux, keyless, accounts[1:])
    for account in accounts[1:]:
        stack = builder.account(account, providers, providers_role)
        if stack is not None:
            stacks.append(stack)
    prerequisites = []
    hub = fleet.management.name
    if any(OIDC_ISSUER in dict(stack.parameters) for stack in stacks):
        prerequisites.append(
            f"the hub's IAM OIDC provider (IRSA): eksctl utils associate-iam-oidc-provider --cluster {hub} "
            f"--region {fleet.management.region} --profile {hub} --approve, if 'aws iam "
            "list-open-id-connect-providers' does not list its issuer"
        )
    prerequisites.append(
        f"the EKS Pod Identity Agent add-on on the hub, which its add-ons' roles need: aws eks create-addon "
        f"--cluster-name {hub} --addon-name eks-pod-identity-agent --region {fleet.management.region} "
        f"--profile {hub}, if "
        "'aws eks list-addons' does not list it"
    )
    if flux is not None and identity == "irsa":
        prerequisites.append(
            f"the hub's {KUSTOMIZE_CONTROLLER} and {HELM_CONTROLLER} service accounts annotated "
            f"eks.amazonaws.com/role-arn: {fleet.management.flux_role_arn} (IRSA), as Flux's workload identity "
            "documentation patches them"
        )
    return Setup(fleet, tuple(stacks), tuple(prerequisites))


def _hub_account_id(fleet: Fleet, providers: IamRole | None, flux: IamRole | None) -> str | None:
    """The hub's account id, as the definition's role ARNs name it (both the hub's roles are in the hub's account)."""
    named = {role.account for role in (providers, flux) if role is not None and role.account is not None}
    if len(named) > 1:
        raise ConfigError(
            f"environments/base.yaml: management.fluxRoleArn: names account {flux.account if flux else ''}, and "
            f"crossplane-providers' roleArn account {providers.account if providers else ''}; both are roles of the "
            "hub, in the hub's own account"
        )
    hub_id = next(iter(named), None)
    for name, account in sorted(fleet.accounts.items()):
        if account.id == hub_id:
            raise ConfigError(
                f"environments/base.yaml: accounts.{name}.id: {account.id!r} is the hub's own account (its roles' "
                "ARNs name it); its clusters need no account: leave 'account' unset for them"
            )
    return hub_id


def _logical(name: str) -> str:
    """A CloudFormation logical id from a Kubernetes name: ``provider-aws-ec2`` -> ``ProviderAwsEc2``."""
    return "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", name) if part)


class _Builder:
    """The templates' resources, for one fleet."""

    def __init__(self, fleet: Fleet, identity: str, partition_name: str, hub_id: str | None) -> None:
        self.fleet = fleet
        self.identity = identity
        self.partition = partition_name
        self.hub_id = hub_id

    # -- the hub's account ---------------------------------------------------------------------

    def hub(
        self,
        account: FleetAccount,
        providers: crossplane_providers.CrossplaneProvidersConfig | None,
        providers_role: IamRole | None,
        flux: IamRole | None,
        keyless: Sequence[WorkloadCluster],
        others: Sequence[FleetAccount],
    ) -> list[Stack]:
        hub = self.fleet.management.name
        resources: dict[str, Any] = {}
        parameters: dict[str, Any] = {}
        outputs: dict[str, Any] = {}
        holds: list[str] = []
        associations = False
        if providers is not None and providers_role is not None:
            assumed = [
                f"arn:{self.partition}:iam::{other.id}:role/{self.fleet.accounts[other.name].role_name}"
                for other in others
                if other.name is not None
            ]
            accounts = crossplane_providers.service_accounts(providers)
            resources["CrossplaneProvidersRole"] = self._role(
                providers_role,
                f"fluxplane: the Crossplane AWS providers of hub {hub} ({CROSSPLANE_NAMESPACE}: {', '.join(accounts)})",
                self._trust(CROSSPLANE_NAMESPACE, accounts),
                {"crossplane-providers": crossplane_providers.policy(providers, assumed)},
            )
            associations |= self._associations(resources, "CrossplaneProviders", CROSSPLANE_NAMESPACE, accounts)
            outputs["CrossplaneProvidersRoleArn"] = {
                "Description": "crossplane-providers' roleArn",
                "Value": {"Fn::GetAtt": ["CrossplaneProvidersRole", "Arn"]},
            }
            holds.append(f"the Crossplane providers' role {providers_role.name} ({self.identity})")
        if flux is not None:
            controllers = [KUSTOMIZE_CONTROLLER, HELM_CONTROLLER]
            resources["FluxRole"] = self._role(
                flux,
                f"fluxplane: the Flux controllers of hub {hub}, for keyless access to its workload clusters",
                self._trust(FLUX_NAMESPACE, controllers),
                {"keyless-access": self._describe_clusters(keyless)},
            )
            associations |= self._associations(resources, "Flux", FLUX_NAMESPACE, controllers)
            outputs["FluxRoleArn"] = {
                "Description": "management.fluxRoleArn",
                "Value": {"Fn::GetAtt": ["FluxRole", "Arn"]},
            }
            holds.append(f"the hub's Flux role {flux.name} (keyless access)")
        overrides: tuple[tuple[str, str], ...] = ()
        if self.identity == "irsa" and resources:
            parameters[OIDC_ISSUER] = {
                "Type": "String",
                "Description": f"The OIDC issuer of EKS cluster {hub}, without https:// (aws eks describe-cluster "
                f"--name {hub} --query cluster.identity.oidc.issuer); its IAM OIDC provider exists",
                "AllowedPattern": r"^oidc\.eks\.[a-z0-9-]+\.amazonaws\.com(\.cn)?/id/[A-Za-z0-9]+$",
            }
            region = self.fleet.management.region
            overrides = (
                (
                    OIDC_ISSUER,
                    f'"$(aws eks describe-cluster --name {hub} --region {region} --profile {hub} '
                    "--query cluster.identity.oidc.issuer --output text | sed 's|^https://||')\"",
                ),
            )
        key_region = sealing_key_region(self.fleet)
        hub_region = self.fleet.management.region
        stacks: list[Stack] = []
        own_stack = associations and account.holds_sealing_key and key_region != hub_region
        if account.holds_sealing_key and not own_stack:
            self._secret(resources, outputs)
            holds.append(f"the sealing key's secret {self.fleet.sealing_key.secret_name}")
        if resources:
            region = hub_region if associations or not account.holds_sealing_key else key_region
            stacks.append(
                self._stack(
                    f"fluxplane-{hub}",
                    account,
                    region,
                    holds,
                    f"fluxplane, hub {hub}: the hub's own account",
                    parameters,
                    resources,
                    outputs,
                    overrides,
                )
            )
        if own_stack:
            resources, outputs = {}, {}
            self._secret(resources, outputs)
            stacks.append(
                self._stack(
                    f"fluxplane-{hub}-sealing-key",
                    account,
                    key_region,
                    [f"the sealing key's secret {self.fleet.sealing_key.secret_name}"],
                    f"fluxplane, hub {hub}: the sealing key's secret in the hub's own account",
                    {},
                    resources,
                    outputs,
                )
            )
        return stacks

    def _trust(self, namespace: str, accounts: Sequence[str]) -> Any:
        """A trust policy admitting exactly ``accounts`` of ``namespace`` on the hub: through its OIDC provider
        (IRSA; the issuer is a parameter, and a condition's key can hold one only in a Fn::Sub of the whole
        document), or through EKS Pod Identity's session tags."""
        if self.identity == "irsa":
            issuer = f"${{{OIDC_ISSUER}}}"
            document = {
                "Version": _POLICY_VERSION,
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {
                            "Federated": f"arn:${{AWS::Partition}}:iam::${{AWS::AccountId}}:oidc-provider/{issuer}"
                        },
                        "Action": "sts:AssumeRoleWithWebIdentity",
                        "Condition": {
                            "StringEquals": {
                                f"{issuer}:aud": "sts.amazonaws.com",
                                f"{issuer}:sub": [f"system:serviceaccount:{namespace}:{name}" for name in accounts],
                            }
                        },
                    }
                ],
            }
            return {"Fn::Sub": json.dumps(document, indent=2) + "\n"}
        return {
            "Version": _POLICY_VERSION,
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": "pods.eks.amazonaws.com"},
                    "Action": ["sts:AssumeRole", "sts:TagSession"],
                    "Condition": {
                        "StringEquals": {
                            "aws:RequestTag/eks-cluster-name": self.fleet.management.name,
                            "aws:RequestTag/kubernetes-namespace": namespace,
                            "aws:RequestTag/kubernetes-service-account": list(accounts),
                        }
                    },
                }
            ],
        }

    def _associations(self, resources: dict[str, Any], role: str, namespace: str, accounts: Sequence[str]) -> bool:
        """With Pod Identity, an association per service account binds it to the role on the hub."""
        if self.identity != "pod-identity":
            return False
        for name in accounts:
            resources[f"{role}Association{_logical(name)}"] = {
                "Type": "AWS::EKS::PodIdentityAssociation",
                "Properties": {
                    "ClusterName": self.fleet.management.name,
                    "Namespace": namespace,
                    "ServiceAccount": name,
                    "RoleArn": {"Fn::GetAtt": [f"{role}Role", "Arn"]},
                },
            }
        return True

    def _describe_clusters(self, keyless: Sequence[WorkloadCluster]) -> dict[str, Any]:
        """What Flux's keyless access asks of AWS: the endpoint and certificate authority of each keyless cluster."""
        arns = []
        for cluster in keyless:
            account = self.fleet.accounts[cluster.account].id if cluster.account else "${AWS::AccountId}"
            arn = f"arn:{partition(cluster.region)}:eks:{cluster.region}:{account}:cluster/{cluster.name}"
            arns.append({"Fn::Sub": arn} if "${" in arn else arn)
        return {
            "Version": _POLICY_VERSION,
            "Statement": [
                {"Sid": "KeylessClusters", "Effect": "Allow", "Action": ["eks:DescribeCluster"], "Resource": arns}
            ],
        }

    # -- another account -----------------------------------------------------------------------

    def account(
        self,
        account: FleetAccount,
        providers: crossplane_providers.CrossplaneProvidersConfig | None,
        providers_role: IamRole | None,
    ) -> Stack | None:
        assert account.name is not None
        definition = self.fleet.accounts[account.name]
        hub = self.fleet.management.name
        resources: dict[str, Any] = {}
        parameters: dict[str, Any] = {}
        outputs: dict[str, Any] = {}
        holds: list[str] = []
        overrides: tuple[tuple[str, str], ...] = ()
        if providers is not None and providers_role is not None:
            principal: Any = (
                f"arn:{self.partition}:iam::{self.hub_id}:role{providers_role.path}{providers_role.name}"
                if self.hub_id is not None
                else {
                    "Fn::Sub": f"arn:${{AWS::Partition}}:iam::${{{HUB_ACCOUNT_ID}}}:role"
                    f"{providers_role.path}{providers_role.name}"
                }
            )
            if self.hub_id is None:
                parameters[HUB_ACCOUNT_ID] = {
                    "Type": "String",
                    "Description": f"The id of the AWS account of hub {hub}, whose providers' role assumes this "
                    "account's role",
                    "AllowedPattern": "^[0-9]{12}$",
                }
                overrides = (
                    (
                        HUB_ACCOUNT_ID,
                        f'"$(aws sts get-caller-identity --query Account --output text --profile {hub})"',
                    ),
                )
            statement: dict[str, Any] = {
                "Effect": "Allow",
                "Principal": {"AWS": principal},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
            }
            if definition.external_id is not None:
                statement["Condition"] = {"StringEquals": {"sts:ExternalId": definition.external_id}}
            resources["CrossplaneRole"] = self._role(
                IamRole(definition.role_name),
                f"fluxplane: assumed by the Crossplane AWS providers of hub {hub} (accounts.{account.name}.roleName)",
                {"Version": _POLICY_VERSION, "Statement": [statement]},
                {"crossplane-providers": crossplane_providers.policy(providers)},
            )
            outputs["CrossplaneRoleArn"] = {
                "Description": f"the role of account {account.name} the hub's providers assume",
                "Value": {"Fn::GetAtt": ["CrossplaneRole", "Arn"]},
            }
            holds.append(f"the role {definition.role_name} the hub's providers assume")
        if account.holds_sealing_key:
            self._secret(resources, outputs)
            holds.append(f"the sealing key's secret {self.fleet.sealing_key.secret_name}")
        if not resources:
            return None
        region = sealing_key_region(self.fleet) if account.holds_sealing_key else self.fleet.management.region
        return self._stack(
            f"fluxplane-{hub}-account-{account.name}",
            account,
            region,
            holds,
            f"fluxplane, hub {hub}: account {account.name} ({account.id})",
            parameters,
            resources,
            outputs,
            overrides,
        )

    # -- shared --------------------------------------------------------------------------------

    def _role(self, role: IamRole, description: str, trust: Any, policies: dict[str, dict[str, Any]]) -> dict[str, Any]:
        return {
            "Type": "AWS::IAM::Role",
            "Properties": {
                "RoleName": role.name,
                "Path": role.path,
                "Description": description[:1000],
                "AssumeRolePolicyDocument": trust,
                "Policies": [{"PolicyName": name, "PolicyDocument": document} for name, document in policies.items()],
            },
        }

    def _secret(self, resources: dict[str, Any], outputs: dict[str, Any]) -> None:
        """The sealing key's secret, made empty: ``fluxplane sealing-key`` stores the key pair in it. A stack deleted
        or a resource replaced keeps it, since every sealed secret in Git needs that key."""
        resources["SealingKeySecret"] = {
            "Type": "AWS::SecretsManager::Secret",
            "DeletionPolicy": "Retain",
            "UpdateReplacePolicy": "Retain",
            "Properties": {
                "Name": self.fleet.sealing_key.secret_name,
                "Description": "fluxplane: the fleet's Sealed Secrets key pair (JSON properties tls.crt and tls.key), "
                "which each workload cluster's External Secrets reads at bootstrap; stored by 'fluxplane sealing-key'",
            },
        }
        outputs["SealingKeySecretArn"] = {
            "Description": "sealingKey.secretName's ARN",
            "Value": {"Ref": "SealingKeySecret"},
        }

    def _stack(
        self,
        name: str,
        account: FleetAccount,
        region: str,
        holds: Sequence[str],
        description: str,
        parameters: dict[str, Any],
        resources: dict[str, Any],
        outputs: dict[str, Any],
        overrides: tuple[tuple[str, str], ...] = (),
    ) -> Stack:
        template: dict[str, Any] = {"AWSTemplateFormatVersion": "2010-09-09", "Description": description}
        if parameters:
            template["Parameters"] = parameters
        template["Resources"] = resources
        template["Outputs"] = outputs
        return Stack(name, account, region, tuple(holds), template, overrides)


@dataclass(frozen=True)
class Written:
    """What :func:`write` did: the files written, and templates of the folder no stack has any more."""

    written: tuple[Path, ...]
    stale: tuple[Path, ...]


def write(setup: Setup, folder: Path) -> Written:
    """Write every stack's template into ``folder``; a template of ours there that no stack has is left alone, and
    named (its stack is still deployed: delete the stack, then the file)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for stack in setup.stacks:
            path = folder / stack.file_name
            write_atomic(path, stack.text.encode("utf-8"))
            written.append(path)
    except OSError as exc:
        raise ConfigError(f"{folder}: cannot write the templates ({exc.strerror or exc})") from None
    names = {stack.file_name for stack in setup.stacks}
    stale = []
    for path in sorted(folder.glob("*.yaml")):
        if path.name in names or not path.is_file():
            continue
        try:
            with path.open(encoding="utf-8") as text:
                first = text.readline()
        except (OSError, UnicodeDecodeError):
            continue
        if first.startswith(MARKER):
            stale.append(path)
    return Written(tuple(written), tuple(stale))
