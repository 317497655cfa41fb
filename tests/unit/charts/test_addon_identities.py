"""AddonIdentitiesChart: one folder per cluster of AddonIdentity composites, policies filled in per cluster."""

from __future__ import annotations

import json

import cdk8s
import pytest

from fluxplane.charts.addon_identities import AddonIdentitiesChart, AddonRole, ClusterIdentities, policy_text
from fluxplane.config.models import Repository
from fluxplane.core.layout import PLATFORM, RepositoryLayout
from fluxplane.errors import ConfigError, ConstructError

LAYOUT = RepositoryLayout(PLATFORM, Repository.model_validate({"url": "ssh://git@example.com/org/fleet.git"}))
VARIABLES = {"cluster_name": "prod-1", "cluster_region": "eu-west-1", "environment": "production"}
POLICY = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Action": "logs:PutLogEvents",
            "Resource": "arn:aws:logs:${cluster_region}:*:log-group:/aws/eks/${cluster_name}/*",
            "Condition": {"StringEquals": {"aws:ResourceTag/owner": "${aws:PrincipalTag/team}"}},
        }
    ],
}


def _cluster(*roles: AddonRole, name: str = "prod-1", own_namespace: bool = False) -> ClusterIdentities:
    return ClusterIdentities(
        cluster=name,
        region="eu-west-1",
        variables=VARIABLES,
        tags={"owner": "platform"},
        identities=roles,
        applier=("flux-system", "addon-identities") if own_namespace else (name, "addon-identities"),
        own_namespace=own_namespace,
    )


def _chart(*clusters: ClusterIdentities) -> AddonIdentitiesChart:
    return AddonIdentitiesChart(cdk8s.App(), "addon-identities", layout=LAYOUT, clusters=clusters)


def test_policy_text_fills_the_clusters_values_and_keeps_iams_own_variables() -> None:
    # GIVEN a policy with cluster variables and an IAM policy variable WHEN written for a cluster
    text = policy_text(POLICY, VARIABLES)
    # THEN the cluster's values are in, and Flux's substitution will turn $${...} back into ${...}
    assert '"arn:aws:logs:eu-west-1:*:log-group:/aws/eks/prod-1/*"' in text
    assert '"$${aws:PrincipalTag/team}"' in text
    assert json.loads(text.replace("$${", "${"))["Statement"][0]["Condition"] == POLICY["Statement"][0]["Condition"]


def test_policy_text_reads_double_dollars_as_the_packs_other_objects_do() -> None:
    # GIVEN a policy holding a user's text as packs get it, escaped for Flux ("${team}" and "$5" written
    # as "$${team}" and "$$5")
    policy = {"Statement": [{"Sid": "$${team}", "Resource": "arn:aws:s3:::$$5-${cluster_name}"}]}
    # WHEN written for a cluster
    text = policy_text(policy, VARIABLES)
    # THEN after Flux's substitution (every $$ one $) the user's text is back as written
    (statement,) = json.loads(text.replace("$$", "$"))["Statement"]
    assert statement == {"Sid": "${team}", "Resource": "arn:aws:s3:::$5-prod-1"}


def test_tags_are_escaped_for_fluxs_substitution() -> None:
    # GIVEN a cluster whose tags hold ${...} and $$
    cluster = ClusterIdentities(
        cluster="prod-1",
        region="eu-west-1",
        variables=VARIABLES,
        tags={"owner": "${cluster_name}", "cost": "$$5"},
        identities=(AddonRole("external-dns", "route53", "external-dns", "external-dns", policy=POLICY),),
        applier=("prod-1", "addon-identities"),
    )
    # WHEN its roles are written
    (document,) = _chart(cluster).files[0].documents()
    # THEN the tags are escaped, so Flux gives back the text as written
    assert document["spec"]["tags"] == {"owner": "$${cluster_name}", "cost": "$$$5"}


def test_one_composite_per_role_named_after_the_pack_in_the_clusters_namespace() -> None:
    roles = (
        AddonRole("external-dns", "route53", "external-dns", "external-dns", policy=POLICY),
        AddonRole(
            "aws-ebs-csi-driver", "controller", "kube-system", "ebs-csi-controller-sa", ("arn:aws:iam::aws:policy/x",)
        ),
        AddonRole("karpenter", "karpenter", "kube-system", "karpenter", policy=POLICY),
    )
    chart = _chart(_cluster(*roles), _cluster(name="staging-1"))
    documents = {doc["metadata"]["name"]: doc for doc in chart.files[0].documents()}
    # THEN sorted by pack; a role named like its pack is not repeated in the name
    assert list(documents) == ["aws-ebs-csi-driver-controller", "external-dns-route53", "karpenter"]
    ebs = documents["aws-ebs-csi-driver-controller"]
    assert ebs["metadata"] == {
        "name": "aws-ebs-csi-driver-controller",
        "namespace": "prod-1",
        "labels": {"fluxplane.io/pack": "aws-ebs-csi-driver", "fluxplane.io/cluster": "prod-1"},
        # the Kustomization of the cluster's chain that applies it (a change of it is a move synth guards)
        "annotations": {"fluxplane.io/applied-by": "prod-1/addon-identities"},
    }
    assert ebs["spec"] == {
        "region": "eu-west-1",
        "tags": {"owner": "platform"},
        "clusterName": "prod-1",
        "serviceAccountNamespace": "kube-system",
        "serviceAccount": "ebs-csi-controller-sa",
        "managedPolicyArns": ["arn:aws:iam::aws:policy/x"],
        "inlinePolicies": [],
    }
    assert documents["external-dns-route53"]["spec"]["inlinePolicies"][0]["name"] == "external-dns-route53"
    # AND each cluster with roles gets a folder its chain applies; a cluster without roles gets none
    assert [manifest.path for manifest in chart.files] == [
        "addon-identities/prod-1/addon-identities.yaml",
        "addon-identities/prod-1/kustomization.yaml",
    ]
    assert chart.folders == {"prod-1": "addon-identities/prod-1"}
    assert {cluster: len(composites) for cluster, composites in chart.composites.items()} == {"prod-1": 3}


def test_the_hubs_file_makes_the_hubs_namespace() -> None:
    chart = _chart(
        _cluster(
            AddonRole("fluent-bit", "logs", "logging", "fluent-bit", policy=POLICY), name="hub", own_namespace=True
        )
    )
    documents = chart.files[0].documents()
    assert [(doc["kind"], doc["metadata"].get("namespace")) for doc in documents] == [
        ("Namespace", None),
        ("AddonIdentity", "hub"),
    ]
    # applied by the hub's own Kustomization in flux-system
    assert {doc["metadata"]["annotations"]["fluxplane.io/applied-by"] for doc in documents} == {
        "flux-system/addon-identities"
    }


def test_a_composite_name_over_63_characters_is_refused() -> None:
    role = AddonRole("a" * 40, "b" * 30, "kube-system", "sa", ("arn:aws:iam::aws:policy/x",))
    with pytest.raises(ConfigError, match=r"^pack 'a{40}': pod identity 'b{30}': the AddonIdentity name"):
        _chart(_cluster(role))


def test_a_packs_managed_policy_that_is_no_arn_is_refused_naming_the_composite_and_the_field() -> None:
    # GIVEN a pack whose pod identity attaches something that is not an AWS managed policy ARN
    role = AddonRole("logs", "logs", "kube-system", "sa", ("not-an-arn",))
    # WHEN / THEN the chart refuses it in one located line, not a traceback
    with pytest.raises(
        ConstructError,
        match=r"^addon-identities/prod-1/identities/logs: AddonIdentityProps\.managedPolicyArns\.0: string should",
    ):
        _chart(_cluster(role))
