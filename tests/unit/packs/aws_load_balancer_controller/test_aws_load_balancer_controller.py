"""Tests for fluxplane.packs.aws_load_balancer_controller: its config, its documents, its Pod Identity and gate."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.constructs import NamespacedObjectKindReference
from fluxplane.kinds import eks_api as eks
from fluxplane.packs import versions
from fluxplane.packs.api import PodIdentity
from fluxplane.packs.aws_load_balancer_controller import (
    PACK,
    AwsLoadBalancerControllerConfig,
    iam_policy,
)
from fluxplane.testing import BoundPack, bind_pack

REPOSITORY = {
    "apiVersion": "source.toolkit.fluxcd.io/v1",
    "kind": "HelmRepository",
    "metadata": {"name": "aws-load-balancer-controller", "namespace": "flux-system"},
    "spec": {"interval": "1h", "url": "https://aws.github.io/eks-charts"},
}
DEFAULT_VALUES: dict[str, Any] = {
    "clusterName": "${cluster_name}",
    "region": "${cluster_region}",
    "vpcTags": {"Name": "${cluster_name}"},
    "serviceAccount": {"create": True, "name": "aws-load-balancer-controller"},
    "replicaCount": 2,
    "ingressClass": "alb",
    "createIngressClassResource": True,
    "ingressClassConfig": {"default": False},
    "enableServiceMutatorWebhook": True,
    "defaultTargetType": "instance",
    "keepTLSSecret": True,
    "controllerConfig": {"featureGates": {"ALBGatewayAPI": False, "NLBGatewayAPI": False}},
    "podDisruptionBudget": {"maxUnavailable": 1},
}


def _release(values: dict[str, Any], version: str = versions.AWS_LOAD_BALANCER_CONTROLLER.version) -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "aws-load-balancer-controller", "namespace": "flux-system"},
        "spec": {
            "interval": "30m",
            "chart": {
                "spec": {
                    "chart": "aws-load-balancer-controller",
                    "version": version,
                    "sourceRef": {"kind": "HelmRepository", "name": "aws-load-balancer-controller"},
                }
            },
            "releaseName": "aws-load-balancer-controller",
            "targetNamespace": "kube-system",
            "serviceAccountName": "helm-controller",
            "postRenderStrategy": "nohooks",
            "install": {"crds": "CreateReplace", "remediation": {"retries": 3}},
            "upgrade": {"crds": "CreateReplace", "remediation": {"retries": 3, "strategy": "rollback"}},
            "driftDetection": {"mode": "enabled"},
            "values": values,
        },
    }


def _values(ctx: BoundPack) -> dict[str, Any]:
    return ctx.objects[-1]["spec"]["values"]  # type: ignore[no-any-return]


def _statements_with(policy: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [statement for statement in policy["Statement"] if action in statement["Action"]]


def test_config_defaults() -> None:
    # GIVEN no values WHEN the config is made
    # THEN two replicas serve IngressClass alb (not the default), take new LoadBalancer Services, use instance
    # targets and find the VPC named like the cluster, with the pinned chart
    assert PACK.config() == AwsLoadBalancerControllerConfig.model_validate(
        {
            "enabled": True,
            "replicas": 2,
            "ingressClass": "alb",
            "defaultIngressClass": False,
            "enableServiceMutatorWebhook": True,
            "defaultTargetType": "instance",
            "vpcName": "${cluster_name}",
            "vpcId": None,
            "version": versions.AWS_LOAD_BALANCER_CONTROLLER.version,
            "values": {},
        }
    )
    assert versions.AWS_LOAD_BALANCER_CONTROLLER[:2] == (
        "https://aws.github.io/eks-charts",
        "aws-load-balancer-controller",
    )


@pytest.mark.parametrize(("replicas", "kind"), [(0, "greater_than_equal"), (11, "less_than_equal"), ("2", "int_type")])
def test_config_refuses_bad_replicas(replicas: Any, kind: str) -> None:
    # GIVEN replicas out of 1..10 or a string WHEN validated strictly from data THEN it is refused
    with pytest.raises(ValidationError) as exc:
        AwsLoadBalancerControllerConfig.model_validate({"replicas": replicas}, strict=True)
    assert [(e["loc"], e["type"]) for e in exc.value.errors()] == [(("replicas",), kind)]


@pytest.mark.parametrize(
    ("section", "loc", "message"),
    [
        ({"ingressClass": "ALB"}, ("ingressClass",), "should match pattern"),
        ({"defaultTargetType": "pod"}, ("defaultTargetType",), "'instance' or 'ip'"),
        ({"defaultIngressClass": "maybe"}, ("defaultIngressClass",), "valid boolean"),
        ({"vpcName": "${cluster}"}, ("vpcName",), r'expected a VPC Name tag .*got "\$\{cluster\}"'),
        ({"vpcName": "fleet,prod"}, ("vpcName",), 'got "fleet,prod"'),
        ({"vpcName": "Name=prod"}, ("vpcName",), 'got "Name=prod"'),
        ({"vpcName": ""}, ("vpcName",), 'got ""'),
        ({"vpcName": "v" * 257}, ("vpcName",), "at most 256 characters"),
        ({"vpcId": "vpc-123"}, ("vpcId",), 'expected a VPC ID such as vpc-0123456789abcdef0, got "vpc-123"'),
        ({"vpcId": "VPC-0123456789ABCDEF0"}, ("vpcId",), "expected a VPC ID"),
        (
            {"vpcName": "shared", "vpcId": "vpc-0123456789abcdef0"},
            (),
            'give vpcName or vpcId, not both: got vpcName "shared" and vpcId "vpc-0123456789abcdef0"',
        ),
        (
            {"values": {"serviceAccount": {"name": "other"}}},
            ("values",),
            "must not set serviceAccount.create or .name: the Pod Identity role is bound to service account "
            "kube-system/aws-load-balancer-controller",
        ),
        ({"values": {"serviceAccount": {"create": False}}}, ("values",), "must not set"),
        ({"region": "us-east-1"}, ("region",), "Extra inputs are not permitted"),
    ],
)
def test_config_refuses_bad_values(section: dict[str, Any], loc: tuple[str, ...], message: str) -> None:
    # GIVEN one bad field WHEN validated THEN that field alone is refused, saying what was expected
    with pytest.raises(ValidationError) as exc:
        AwsLoadBalancerControllerConfig.model_validate(section)
    errors = exc.value.errors()
    assert [e["loc"] for e in errors] == [loc]
    assert re.search(message, errors[0]["msg"]), errors[0]["msg"]


@pytest.mark.parametrize(
    "section",
    [
        {"vpcName": "${environment}-${cluster_region}/${cluster_name} vpc:1"},
        {"vpcId": "vpc-0123456789abcdef0"},
        {"vpcId": "vpc-0a1b2c3d"},
        {"ingressClass": "alb-internal", "defaultIngressClass": True},
        {"values": {"serviceAccount": {"annotations": {"team": "platform"}}}},
    ],
)
def test_config_accepts_good_values(section: dict[str, Any]) -> None:
    # GIVEN values in the documented forms WHEN validated THEN they are kept as given
    dumped = AwsLoadBalancerControllerConfig.model_validate(section).model_dump(by_alias=True)
    assert {key: dumped[key] for key in section} == section


def test_default_documents() -> None:
    # GIVEN the default config WHEN bound
    ctx = bind_pack(PACK, AwsLoadBalancerControllerConfig())

    # THEN the eks-charts repository and a release into kube-system are produced: the cluster's name and
    # region, the VPC found by its Name tag, a fixed service account, and a PodDisruptionBudget for two replicas
    assert ctx.objects == [REPOSITORY, _release(DEFAULT_VALUES)]


def test_vpc_id_replaces_the_tag_lookup() -> None:
    # GIVEN a cluster whose VPC is made elsewhere and known by ID WHEN bound
    ctx = bind_pack(PACK, AwsLoadBalancerControllerConfig.model_validate({"vpcId": "vpc-0123456789abcdef0"}))

    # THEN the controller is given that ID and no tags to look the VPC up by
    values = _values(ctx)
    assert values["vpcId"] == "vpc-0123456789abcdef0"
    assert "vpcTags" not in values


def test_vpc_name_is_the_tag_looked_up() -> None:
    # GIVEN the VPC's Name tag of an environment-wide VPC WHEN bound
    ctx = bind_pack(PACK, AwsLoadBalancerControllerConfig.model_validate({"vpcName": "${environment}-shared"}))

    # THEN the controller looks the VPC up by that Name tag alone
    assert _values(ctx)["vpcTags"] == {"Name": "${environment}-shared"}
    assert "vpcId" not in _values(ctx)


def test_typed_settings_reach_the_chart() -> None:
    # GIVEN one replica, a default IngressClass of another name, IP targets and Services left to EKS
    config = AwsLoadBalancerControllerConfig.model_validate(
        {
            "replicas": 1,
            "ingressClass": "public",
            "defaultIngressClass": True,
            "defaultTargetType": "ip",
            "enableServiceMutatorWebhook": False,
        }
    )

    # WHEN bound
    ctx = bind_pack(PACK, config)

    # THEN each lands in its chart value, and a single replica gets no PodDisruptionBudget (it could never drain)
    expected = {key: value for key, value in DEFAULT_VALUES.items() if key != "podDisruptionBudget"}
    expected |= {
        "replicaCount": 1,
        "ingressClass": "public",
        "ingressClassConfig": {"default": True},
        "defaultTargetType": "ip",
        "enableServiceMutatorWebhook": False,
    }
    assert _values(ctx) == expected


def test_custom_version_pins_the_chart() -> None:
    # GIVEN another chart version WHEN bound THEN the release asks for that version
    ctx = bind_pack(PACK, AwsLoadBalancerControllerConfig(version="3.6.0"))
    assert ctx.objects[-1] == _release(DEFAULT_VALUES, version="3.6.0")


def test_values_are_merged_last() -> None:
    # GIVEN values that override the replicas, extend the service account and the VPC tags, and add defaultTags
    config = AwsLoadBalancerControllerConfig.model_validate(
        {
            "values": {
                "replicaCount": 3,
                "serviceAccount": {"annotations": {"team": "platform"}},
                "vpcTags": {"Name": "override"},
                "defaultTags": {"fleet": "${environment}"},
            }
        }
    )

    # WHEN bound
    ctx = bind_pack(PACK, config)

    # THEN the user's values win, mappings merged key by key, their text escaped as synth escapes it
    assert _values(ctx) == {
        **DEFAULT_VALUES,
        "replicaCount": 3,
        "serviceAccount": {"create": True, "name": "aws-load-balancer-controller", "annotations": {"team": "platform"}},
        "vpcTags": {"Name": "override"},
        "defaultTags": {"fleet": "$${environment}"},
    }


def test_pod_identity_is_the_chart_service_account_with_the_controller_policy() -> None:
    # GIVEN the default config WHEN bound
    ctx = bind_pack(PACK, AwsLoadBalancerControllerConfig())

    # THEN one role with the controller's published policy is declared, for the service account the chart makes
    assert ctx.pod_identities == [
        PodIdentity(
            name="controller",
            namespace="kube-system",
            service_account="aws-load-balancer-controller",
            managed_policies=(),
            policy=iam_policy(),
        )
    ]
    release = ctx.objects[-1]
    identity = ctx.pod_identities[0]
    assert identity.namespace == release["spec"]["targetNamespace"]
    assert identity.service_account == release["spec"]["values"]["serviceAccount"]["name"]
    assert release["spec"]["values"]["serviceAccount"]["create"] is True
    # Pod Identity needs no IRSA annotation on the service account.
    assert "annotations" not in release["spec"]["values"]["serviceAccount"]


def test_policy_lets_the_controller_find_the_vpc_and_its_subnets() -> None:
    # GIVEN the controller's policy WHEN its read-only statement is looked up
    policy = iam_policy()
    [describe] = _statements_with(policy, "ec2:DescribeVpcs")

    # THEN the VPC (by tag), the subnets and the listener attributes the controller reads are allowed anywhere
    assert describe == {"Effect": "Allow", "Action": describe["Action"], "Resource": "*"}
    assert {
        "ec2:DescribeVpcs",
        "ec2:DescribeSubnets",
        "ec2:DescribeTags",
        "ec2:GetSecurityGroupsForVpc",
        "elasticloadbalancing:DescribeListenerAttributes",
    } <= set(describe["Action"])


def test_policy_limits_writes_to_what_the_controller_tagged() -> None:
    # GIVEN the controller's policy
    policy = iam_policy()

    # THEN load balancers and target groups may be created only with the controller's cluster tag,
    [create] = _statements_with(policy, "elasticloadbalancing:CreateLoadBalancer")
    assert create["Action"] == ["elasticloadbalancing:CreateLoadBalancer", "elasticloadbalancing:CreateTargetGroup"]
    assert create["Condition"] == {"Null": {"aws:RequestTag/elbv2.k8s.aws/cluster": "false"}}
    # AND deleted only when they carry it
    [delete] = _statements_with(policy, "elasticloadbalancing:DeleteLoadBalancer")
    assert delete["Condition"] == {"Null": {"aws:ResourceTag/elbv2.k8s.aws/cluster": "false"}}
    # AND the service-linked role may be created for Elastic Load Balancing only
    [linked] = _statements_with(policy, "iam:CreateServiceLinkedRole")
    assert linked["Condition"] == {"StringEquals": {"iam:AWSServiceName": "elasticloadbalancing.amazonaws.com"}}


def test_policy_is_a_valid_inline_policy() -> None:
    # GIVEN the controller's policy WHEN checked as IAM would
    policy = iam_policy()

    # THEN every statement allows a list of service actions on a resource, and the whole fits in an inline
    # role policy (IAM counts 10,240 characters, not whitespace)
    assert policy["Version"] == "2012-10-17"
    assert len(policy["Statement"]) == 16
    for statement in policy["Statement"]:
        assert set(statement) <= {"Effect", "Action", "Resource", "Condition"}
        assert statement["Effect"] == "Allow"
        assert all(re.fullmatch(r"[a-z0-9-]+:[A-Za-z]+", action) for action in statement["Action"])
        assert statement["Resource"]
    assert len(re.sub(r"\s", "", json.dumps(policy))) < 10_240


def test_policy_grants_the_actions_upstream_lists() -> None:
    # GIVEN the controller's policy WHEN its actions are collected
    actions = {action for statement in iam_policy()["Statement"] for action in statement["Action"]}

    # THEN they are exactly those of upstream's iam_policy.json: a typo or a lost line would fail at runtime
    ec2 = {
        "AuthorizeSecurityGroupIngress", "CreateSecurityGroup", "CreateTags", "DeleteSecurityGroup", "DeleteTags",
        "DescribeAccountAttributes", "DescribeAddresses", "DescribeAvailabilityZones", "DescribeCoipPools",
        "DescribeInstances", "DescribeInternetGateways", "DescribeIpamPools", "DescribeNetworkInterfaces",
        "DescribeRouteTables", "DescribeSecurityGroups", "DescribeSubnets", "DescribeTags",
        "DescribeVpcPeeringConnections", "DescribeVpcs", "GetCoipPoolUsage", "GetSecurityGroupsForVpc",
        "RevokeSecurityGroupIngress",
    }  # fmt: skip
    elb = {
        "AddListenerCertificates", "AddTags", "CreateListener", "CreateLoadBalancer", "CreateRule",
        "CreateTargetGroup", "DeleteListener", "DeleteLoadBalancer", "DeleteRule", "DeleteTargetGroup",
        "DeregisterTargets", "DescribeCapacityReservation", "DescribeListenerAttributes",
        "DescribeListenerCertificates", "DescribeListeners", "DescribeLoadBalancerAttributes",
        "DescribeLoadBalancers", "DescribeRules", "DescribeSSLPolicies", "DescribeTags",
        "DescribeTargetGroupAttributes", "DescribeTargetGroups", "DescribeTargetHealth", "DescribeTrustStores",
        "ModifyCapacityReservation", "ModifyIpPools", "ModifyListener", "ModifyListenerAttributes",
        "ModifyLoadBalancerAttributes", "ModifyRule", "ModifyTargetGroup", "ModifyTargetGroupAttributes",
        "RegisterTargets", "RemoveListenerCertificates", "RemoveTags", "SetIpAddressType", "SetRulePriorities",
        "SetSecurityGroups", "SetSubnets", "SetWebAcl",
    }  # fmt: skip
    waf = {"AssociateWebACL", "DisassociateWebACL", "GetWebACL", "GetWebACLForResource"}
    assert actions == {
        *(f"ec2:{name}" for name in ec2),
        *(f"elasticloadbalancing:{name}" for name in elb),
        *(f"waf-regional:{name}" for name in waf),
        *(f"wafv2:{name}" for name in waf),
        "acm:DescribeCertificate",
        "acm:ListCertificates",
        "cognito-idp:DescribeUserPoolClient",
        "iam:CreateServiceLinkedRole",
        "iam:GetServerCertificate",
        "iam:ListServerCertificates",
        "shield:CreateProtection",
        "shield:DeleteProtection",
        "shield:DescribeProtection",
        "shield:GetSubscriptionState",
    }


def test_policy_copies_are_independent() -> None:
    # GIVEN one copy of the policy changed WHEN another is asked for THEN it is unchanged
    iam_policy()["Statement"].clear()
    assert len(iam_policy()["Statement"]) == 16


def test_vpc_name_default_is_the_name_tag_of_the_composed_vpc() -> None:
    # GIVEN the EKS composition that builds each workload cluster's network
    resources = {resource["name"]: resource for resource in eks.composed_resources(eks.Shape(zones=2, node_groups=1))}

    # THEN its VPC's Name tag is the composite's name, i.e. the cluster's name that ${cluster_name} holds
    name_tag = {
        "type": "FromCompositeFieldPath",
        "fromFieldPath": "metadata.name",
        "toFieldPath": "spec.forProvider.tags.Name",
        "transforms": [{"type": "string", "string": {"type": "Format", "fmt": "%s"}}],
    }
    assert name_tag in resources["vpc"]["patches"]
    assert AwsLoadBalancerControllerConfig().vpc_name == "${cluster_name}"
    # AND its subnets carry the role tags the controller picks subnets by
    for zone in range(2):
        public = resources[f"subnet-public-{zone}"]["base"]["spec"]["forProvider"]["tags"]
        private = resources[f"subnet-private-{zone}"]["base"]["spec"]["forProvider"]["tags"]
        assert (public.get("kubernetes.io/role/elb"), public.get("kubernetes.io/role/internal-elb")) == ("1", None)
        assert (private.get("kubernetes.io/role/internal-elb"), private.get("kubernetes.io/role/elb")) == ("1", None)


def test_health_check_is_the_helm_release() -> None:
    # GIVEN the default config WHEN bound THEN the pack is gated on its HelmRelease, with no CEL checks
    ctx = bind_pack(PACK, AwsLoadBalancerControllerConfig())
    assert ctx.health_checks == [
        NamespacedObjectKindReference(
            api_version="helm.toolkit.fluxcd.io/v2",
            kind="HelmRelease",
            name="aws-load-balancer-controller",
            namespace="flux-system",
        )
    ]
    assert ctx.health_check_exprs == []
