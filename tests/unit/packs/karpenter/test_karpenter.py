"""Tests for fluxplane.packs.karpenter: its config, its documents, its Pod Identity, and its fit to the EKS composition.

The EC2NodeClass must select what fluxplane.kinds.eks_api composes (the node role, the private subnets),
so it is checked against the composition rendered for the example fleet; the NodePool and the
EC2NodeClass are validated against Karpenter's CRDs (``../shared/crds``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from fluxplane.charts.addon_identities import policy_text
from fluxplane.constructs import NamespacedObjectKindReference
from fluxplane.kinds import eks_api as eks
from fluxplane.packs import versions
from fluxplane.packs.api import PodIdentity, split_pack
from fluxplane.packs.karpenter import PACK, KarpenterConfig, controller_policy
from fluxplane.testing import BoundPack, bind_pack
from tests.conftest import CRDS, VALIDATE_MANIFESTS
from tests.support.compositions import composite, example_fleet, observed, render

CHART: dict[str, Any] = {
    "apiVersion": "source.toolkit.fluxcd.io/v1",
    "kind": "OCIRepository",
    "metadata": {"name": "karpenter", "namespace": "flux-system"},
    "spec": {
        "interval": "10m",
        "url": "oci://public.ecr.aws/karpenter/karpenter",
        "ref": {"tag": versions.KARPENTER.version},
        "layerSelector": {"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "operation": "copy"},
    },
}
VALUES: dict[str, Any] = {
    "serviceAccount": {"create": True, "name": "karpenter"},
    "settings": {"clusterName": "${cluster_name}"},
    "controller": {"env": [{"name": "AWS_REGION", "value": "${cluster_region}"}]},
}
NODE_CLASS: dict[str, Any] = {
    "apiVersion": "karpenter.k8s.aws/v1",
    "kind": "EC2NodeClass",
    "metadata": {"name": "default"},
    "spec": {
        "role": "${cluster_name}-node",
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "${cluster_name}"}}],
        "securityGroupSelectorTerms": [{"tags": {"aws:eks:cluster-name": "${cluster_name}"}}],
    },
}
NODE_POOL: dict[str, Any] = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "default"},
    "spec": {
        "template": {
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                    {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                    {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]},
                    {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["2"]},
                ],
                "expireAfter": "720h",
            }
        },
        "limits": {"cpu": 1000},
        "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "1m"},
    },
}
#: The configuration of a fleet that sets every typed field.
CONFIGURED: dict[str, Any] = {
    "name": "general",
    "instanceCategories": ["m", "c"],
    "instanceFamilies": ["m7g", "c7g"],
    "minInstanceGeneration": 7,
    "capacityTypes": ["spot", "on-demand"],
    "architectures": ["arm64"],
    "cpuLimit": 64,
    "consolidationPolicy": "WhenEmpty",
    "consolidateAfter": "5m",
    "expireAfter": "Never",
    "amiAlias": "bottlerocket@v1.50.0",
}
#: What Flux substitutes on an example cluster, and on another.
CLUSTERS = [
    {"cluster_name": "production-usw2", "cluster_region": "us-west-2"},
    {"cluster_name": "staging-euc1", "cluster_region": "eu-central-1"},
]

needs_crds = pytest.mark.skipif(
    not CRDS.is_dir(), reason=f"{CRDS} is missing: NodePool and EC2NodeClass cannot be checked against Karpenter's CRDs"
)


def _release(values: dict[str, Any] = VALUES) -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "karpenter", "namespace": "flux-system"},
        "spec": {
            "interval": "30m",
            "chartRef": {"kind": "OCIRepository", "name": "karpenter"},
            "releaseName": "karpenter",
            "targetNamespace": "kube-system",
            "serviceAccountName": "helm-controller",
            "postRenderStrategy": "nohooks",
            "install": {"crds": "CreateReplace", "remediation": {"retries": 3}},
            "upgrade": {"crds": "CreateReplace", "remediation": {"retries": 3, "strategy": "rollback"}},
            "driftDetection": {"mode": "enabled"},
            "values": values,
        },
    }


def _by_kind(ctx: BoundPack) -> dict[str, dict[str, Any]]:
    return {document["kind"]: document for document in ctx.objects}


def _substitute(document: Any, variables: dict[str, str]) -> Any:
    """``document`` as Flux's post-build substitution leaves it on a cluster."""
    text = json.dumps(document)
    for name, value in variables.items():
        text = text.replace("${" + name + "}", value)
    assert "${" not in text, text
    return json.loads(text)


# -- declaration and config ----------------------------------------------------------------------------


def test_config_defaults() -> None:
    # GIVEN no values WHEN the config is made THEN a NodePool "default" of c, m and r on-demand amd64 nodes of
    # generation 3 or later, 1000 vCPUs at most, consolidated when underused, on AL2023, from the pinned chart
    assert PACK.config() == KarpenterConfig.model_validate(
        {
            "enabled": True,
            "name": "default",
            "instanceCategories": ["c", "m", "r"],
            "instanceFamilies": None,
            "minInstanceGeneration": 3,
            "capacityTypes": ["on-demand"],
            "architectures": ["amd64"],
            "cpuLimit": 1000,
            "consolidationPolicy": "WhenEmptyOrUnderutilized",
            "consolidateAfter": "1m",
            "expireAfter": "720h",
            "amiAlias": "al2023@latest",
            "version": versions.KARPENTER.version,
            "values": {},
        }
    )


def test_every_config_field_is_described() -> None:
    # GIVEN the config model WHEN its fields are listed (fluxplane packs show prints them) THEN each says what it is
    assert [name for name, field in KarpenterConfig.model_fields.items() if not field.description] == []


@pytest.mark.parametrize(
    ("data", "loc", "message"),
    [
        ({"instanceCategories": []}, ("instanceCategories",), "at least 1 item"),
        ({"instanceCategories": ["C5"]}, ("instanceCategories",), 'instance categories such as c, m or r, got "C5"'),
        ({"instanceCategories": ["c", "m", "c"]}, ("instanceCategories",), 'distinct values, got "c" twice'),
        ({"instanceFamilies": ["m7i.large"]}, ("instanceFamilies",), 'instance families such as m7i or c7g, got "m7i'),
        ({"minInstanceGeneration": 0}, ("minInstanceGeneration",), "greater than or equal to 1"),
        ({"capacityTypes": ["reserved"]}, ("capacityTypes", 0), "'on-demand' or 'spot'"),
        ({"capacityTypes": ["spot", "spot"]}, ("capacityTypes",), 'distinct values, got "spot" twice'),
        ({"architectures": ["x86_64"]}, ("architectures", 0), "'amd64' or 'arm64'"),
        ({"cpuLimit": 0}, ("cpuLimit",), "greater than or equal to 1"),
        ({"consolidationPolicy": "Always"}, ("consolidationPolicy",), "'WhenEmpty' or 'WhenEmptyOrUnderutilized'"),
        ({"consolidateAfter": "1d"}, ("consolidateAfter",), "should match pattern"),
        ({"expireAfter": "30 days"}, ("expireAfter",), "should match pattern"),
        ({"amiAlias": "al2@latest"}, ("amiAlias",), 'AMI alias: al2023 or bottlerocket.*got "al2@latest"'),
        ({"amiAlias": "al2023"}, ("amiAlias",), 'got "al2023"'),
        ({"amiAlias": "al2023@v20251023000000000000000"}, ("amiAlias",), "AMI alias"),
        ({"name": "Default"}, ("name",), "should match pattern"),
        ({"values": {"serviceAccount": {"name": "x"}}}, ("values",), "bound to service account kube-system/karpenter"),
        ({"instance_categories": ["c"]}, ("instance_categories",), "Extra inputs are not permitted"),
    ],
)
def test_config_refuses_bad_values(data: dict[str, Any], loc: tuple[Any, ...], message: str) -> None:
    # GIVEN a value out of range, misspelt or unknown WHEN validated THEN it is refused at its field, saying why
    with pytest.raises(ValidationError) as exc:
        KarpenterConfig.model_validate(data)
    (error,) = exc.value.errors()
    assert error["loc"] == loc
    assert re.search(message, error["msg"]), error["msg"]


# -- documents ---------------------------------------------------------------------------------------------


def test_default_documents() -> None:
    # GIVEN the default config WHEN bound
    ctx = bind_pack(PACK, KarpenterConfig())

    # THEN the chart's OCIRepository, its release into kube-system for the cluster, the EC2NodeClass and NodePool
    assert ctx.objects == [CHART, _release(), NODE_CLASS, NODE_POOL]


def test_every_typed_field_reaches_the_node_pool_and_node_class() -> None:
    # GIVEN a config that sets every typed field
    ctx = bind_pack(PACK, KarpenterConfig.model_validate(CONFIGURED))
    documents = _by_kind(ctx)

    # THEN the EC2NodeClass has that name and AMI, the same role and selectors
    assert documents["EC2NodeClass"] == {
        **NODE_CLASS,
        "metadata": {"name": "general"},
        "spec": {**NODE_CLASS["spec"], "amiSelectorTerms": [{"alias": "bottlerocket@v1.50.0"}]},
    }
    # AND the NodePool refers to it and carries the requirements, limit and disruption given
    assert documents["NodePool"]["spec"] == {
        "template": {
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "general"},
                "requirements": [
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]},
                    {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]},
                    {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["m", "c"]},
                    {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["6"]},
                    {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m7g", "c7g"]},
                ],
                "expireAfter": "Never",
            }
        },
        "limits": {"cpu": 64},
        "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m"},
    }
    assert documents["NodePool"]["metadata"] == {"name": "general"}


def test_custom_version_pins_the_chart() -> None:
    # GIVEN another chart version WHEN bound THEN the OCIRepository asks for that tag
    documents = _by_kind(bind_pack(PACK, KarpenterConfig(version="1.14.1")))
    assert documents["OCIRepository"]["spec"]["ref"] == {"tag": "1.14.1"}


def test_values_are_merged_last() -> None:
    # GIVEN values that add an interruption queue and resources and override the replicas
    config = KarpenterConfig.model_validate(
        {
            "values": {
                "settings": {"interruptionQueue": "${cluster_name}"},
                "controller": {"resources": {"requests": {"cpu": "1"}}},
                "replicas": 1,
            }
        }
    )

    # WHEN bound THEN mappings are merged key by key, the pack's keys kept where the user set none, and the
    # user's text escaped as synth escapes it (the pack's own ${cluster_name} is Flux's to expand)
    assert _by_kind(bind_pack(PACK, config))["HelmRelease"] == _release(
        {
            "serviceAccount": {"create": True, "name": "karpenter"},
            "settings": {"clusterName": "${cluster_name}", "interruptionQueue": "$${cluster_name}"},
            "controller": {
                "env": [{"name": "AWS_REGION", "value": "${cluster_region}"}],
                "resources": {"requests": {"cpu": "1"}},
            },
            "replicas": 1,
        }
    )


def test_health_check_is_the_helm_release() -> None:
    # GIVEN the default config WHEN bound THEN the pack is gated on its HelmRelease, with no CEL checks
    ctx = bind_pack(PACK, KarpenterConfig())
    assert ctx.health_checks == [
        NamespacedObjectKindReference(
            api_version="helm.toolkit.fluxcd.io/v2", kind="HelmRelease", name="karpenter", namespace="flux-system"
        )
    ]
    assert ctx.health_check_exprs == []


def test_split_applies_node_pool_and_node_class_after_the_controller() -> None:
    # GIVEN the pack as synth applies it
    controllers, configs = split_pack(PACK)

    # WHEN both halves are bound
    ctx_controllers = bind_pack(controllers, KarpenterConfig())
    ctx_configs = bind_pack(configs, KarpenterConfig())

    # THEN the controller half has the chart, its release and the Pod Identity
    assert [d["kind"] for d in ctx_controllers.objects] == ["OCIRepository", "HelmRelease"]
    assert [identity.name for identity in ctx_controllers.pod_identities] == ["controller"]
    # AND karpenter-configs, in the configs layer after karpenter, has the EC2NodeClass and the NodePool only
    assert (configs.name, configs.layer, configs.requires) == ("karpenter-configs", "configs", ("karpenter",))
    assert ctx_configs.objects == [NODE_CLASS, NODE_POOL]
    assert (ctx_configs.pod_identities, ctx_configs.health_checks) == ([], [])


# -- Pod Identity and IAM policy ---------------------------------------------------------------------------------


def test_pod_identity_is_the_charts_service_account() -> None:
    # GIVEN the default config WHEN bound
    ctx = bind_pack(PACK, KarpenterConfig())
    release = _by_kind(ctx)["HelmRelease"]["spec"]

    # THEN one role, for the service account the chart makes, in the namespace it is released to
    (identity,) = ctx.pod_identities
    assert (identity.namespace, identity.service_account) == (
        release["targetNamespace"],
        release["values"]["serviceAccount"]["name"],
    )
    assert release["values"]["serviceAccount"]["create"] is True
    assert identity == PodIdentity("controller", "kube-system", "karpenter", (), controller_policy())


def test_controller_policy_is_upstreams_for_one_cluster() -> None:
    # GIVEN the controller's policy
    policy = controller_policy()
    statements = {statement["Sid"]: statement for statement in policy["Statement"]}

    # THEN it has upstream's statements but the interruption queue's, each allowing
    assert policy["Version"] == "2012-10-17"
    assert list(statements) == [
        "AllowScopedEC2InstanceAccessActions",
        "AllowScopedEC2LaunchTemplateAccessActions",
        "AllowScopedEC2InstanceActionsWithTags",
        "AllowScopedResourceCreationTagging",
        "AllowScopedResourceTagging",
        "AllowScopedDeletion",
        "AllowPassingInstanceRole",
        "AllowScopedInstanceProfileCreationActions",
        "AllowScopedInstanceProfileTagActions",
        "AllowScopedInstanceProfileActions",
        "AllowAPIServerEndpointDiscovery",
        "AllowRegionalReadActions",
        "AllowSSMReadActions",
        "AllowPricingReadActions",
        "AllowUnscopedInstanceProfileListAction",
        "AllowInstanceProfileReadActions",
    ]
    assert {statement["Effect"] for statement in statements.values()} == {"Allow"}
    assert "sqs:ReceiveMessage" not in json.dumps(policy)
    # AND it may pass only the composition's node role, to EC2
    assert statements["AllowPassingInstanceRole"] == {
        "Sid": "AllowPassingInstanceRole",
        "Effect": "Allow",
        "Resource": "arn:aws:iam::*:role/${cluster_name}-node",
        "Action": "iam:PassRole",
        "Condition": {"StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]}},
    }
    # AND it may terminate only the cluster's Karpenter instances, and describe only its EKS cluster
    assert statements["AllowScopedDeletion"]["Condition"] == {
        "StringEquals": {"aws:ResourceTag/kubernetes.io/cluster/${cluster_name}": "owned"},
        "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
    }
    assert statements["AllowAPIServerEndpointDiscovery"]["Resource"] == (
        "arn:aws:eks:${cluster_region}:*:cluster/${cluster_name}"
    )
    # AND it launches and reads in the cluster's region only
    assert statements["AllowRegionalReadActions"]["Condition"] == {
        "StringEquals": {"aws:RequestedRegion": "${cluster_region}"}
    }
    for statement in statements.values():
        for resource in [statement["Resource"]] if isinstance(statement["Resource"], str) else statement["Resource"]:
            assert resource == "*" or resource.startswith(
                (
                    "arn:aws:ec2:${cluster_region}:",
                    "arn:aws:iam::*:",
                    "arn:aws:eks:${cluster_region}:",
                    "arn:aws:ssm:${cluster_region}:",
                )
            ), resource


@pytest.mark.parametrize("variables", CLUSTERS, ids=lambda variables: variables["cluster_name"])
def test_controller_policy_uses_only_the_clusters_variables(variables: dict[str, str]) -> None:
    # GIVEN the policy as the hub writes it for a cluster (other ${...} kept from Flux as $${...})
    text = policy_text(controller_policy(), variables)

    # THEN every variable it uses was the cluster's, and the cluster's name scopes its tag conditions
    assert "$${" not in text
    policy = json.loads(text)
    assert f"aws:ResourceTag/kubernetes.io/cluster/{variables['cluster_name']}" in text
    assert f"arn:aws:ssm:{variables['cluster_region']}::parameter/aws/service/*" in text
    # AND it fits an IAM role's inline policies (10,240 characters, whitespace not counted)
    assert len(json.dumps(policy, separators=(",", ":"))) < 10_240


# -- the fit to the EKS composition --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["production-usw2", "production-use1", "staging-usw2"])
def test_the_node_class_selects_what_the_eks_composition_makes(name: str) -> None:
    # GIVEN an example cluster, its composition rendered, and the EC2NodeClass as Flux applies it there
    fleet = example_fleet()
    (cluster,) = [c for c in fleet.clusters if c.name == name]
    xr = composite(cluster, fleet)
    objects = render(observed(xr), eks.composition_props(eks.shape_of(cluster)).dump())
    variables = {"cluster_name": cluster.name, "cluster_region": cluster.region}
    spec = _substitute(_by_kind(bind_pack(PACK, KarpenterConfig()))["EC2NodeClass"], variables)["spec"]

    # THEN its role is the composition's node role, by the IAM name the composition gives it
    assert spec["role"] == objects["role-node"]["metadata"]["annotations"]["crossplane.io/external-name"]
    assert objects["role-node"]["metadata"]["labels"] == {"platform.fluxplane.io/role": "node"}
    # AND its subnet selector matches every private subnet and no public one
    (subnet_term,) = spec["subnetSelectorTerms"]
    subnets = {name: obj for name, obj in objects.items() if obj["kind"] == "Subnet"}
    matched = sorted(
        name
        for name, obj in subnets.items()
        if subnet_term["tags"].items() <= obj["spec"]["forProvider"]["tags"].items()
    )
    assert matched == [f"subnet-private-{index}" for index in range(cluster.network.availability_zones)]
    # AND its security groups are the cluster security group EKS makes and tags with the cluster's name
    assert spec["securityGroupSelectorTerms"] == [{"tags": {"aws:eks:cluster-name": cluster.name}}]
    assert objects["cluster"]["metadata"]["annotations"]["crossplane.io/external-name"] == cluster.name


# -- CRD validation --------------------------------------------------------------------------------------------


def _validate(tmp_path: Path, documents: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "karpenter.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return subprocess.run(
        [sys.executable, str(VALIDATE_MANIFESTS), "--no-flux-vars", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.slow
@needs_crds
def test_node_pool_and_node_class_are_valid_against_karpenters_crds(tmp_path: Path) -> None:
    # GIVEN the custom objects of the default and of a fully configured pack, as Flux applies them on clusters
    documents = [
        _substitute(document, variables)
        for config in (KarpenterConfig(), KarpenterConfig.model_validate(CONFIGURED))
        for variables in CLUSTERS
        for document in _by_kind(bind_pack(PACK, config)).values()
        if document["apiVersion"].split("/")[0] in PACK.crd_groups
    ]
    assert len(documents) == 8

    # WHEN validated against Karpenter's CRDs THEN every one is a complete, valid object
    result = _validate(tmp_path, documents)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "8 documents, 8 valid, 0 invalid, 0 skipped" in result.stdout, result.stdout


@pytest.mark.slow
@needs_crds
def test_the_crd_validation_refuses_a_bad_node_pool(tmp_path: Path) -> None:
    # GIVEN the default NodePool with a disruption policy Karpenter does not know and a misspelt field
    node_pool = _substitute(NODE_POOL, CLUSTERS[0])
    node_pool["spec"]["disruption"]["consolidationPolicy"] = "Always"
    node_pool["spec"]["template"]["spec"]["nodeClass"] = node_pool["spec"]["template"]["spec"].pop("nodeClassRef")

    # WHEN validated THEN it is refused, naming both fields
    result = _validate(tmp_path, [node_pool])
    assert result.returncode == 1, result.stdout
    assert "consolidationPolicy" in result.stdout and "nodeClass" in result.stdout, result.stdout
