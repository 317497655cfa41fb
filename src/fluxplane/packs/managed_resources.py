"""The Upbound AWS family's managed resources fluxplane composes, and the MRDs a hub activates for them.

Crossplane v2 installs a provider's managed resources as ManagedResourceDefinitions; with a provider that
declares SafeStart (every member of the family and provider-kubernetes do) they start inactive, with no CRD
and no controller, until a ManagedResourceActivationPolicy names them. The hub activates exactly the kinds
the EKS and app compositions build (and the CRD schemas ``fluxplane schemas pull`` fetches are theirs).
"""

from __future__ import annotations

from collections.abc import Iterable

#: As ``<service>_<plural>``: the family member (``provider-aws-<service>``) and the resource's plural name.
AWS_MANAGED_RESOURCES = (
    "ec2_vpcs",
    "ec2_subnets",
    "ec2_internetgateways",
    "ec2_natgateways",
    "ec2_eips",
    "ec2_routetables",
    "ec2_routes",
    "ec2_routetableassociations",
    "ec2_securitygroups",
    "ec2_securitygrouprules",
    "ec2_securitygroupingressrules",
    "ec2_launchtemplates",
    "eks_clusters",
    "eks_nodegroups",
    "eks_addons",
    "eks_clusterauths",
    "eks_accessentries",
    "eks_accesspolicyassociations",
    "eks_podidentityassociations",
    "iam_roles",
    "iam_rolepolicies",
    "iam_rolepolicyattachments",
    "iam_openidconnectproviders",
    "dynamodb_tables",
    "sqs_queues",
    "sqs_queuepolicies",
    "s3_buckets",
    "s3_bucketpolicies",
    "s3_bucketpublicaccessblocks",
    "s3_bucketserversideencryptionconfigurations",
    "s3_bucketversionings",
    "s3_bucketownershipcontrols",
    "rds_instances",
    "rds_subnetgroups",
)
#: The namespaced (Crossplane v2) group of each family member: ``<service>.aws.m.upbound.io``.
NAMESPACED_GROUP = "aws.m.upbound.io"
#: provider-kubernetes' managed resources, all of them: its Object is what a user composes with it.
KUBERNETES_ACTIVATIONS = ("*.kubernetes.m.crossplane.io", "*.kubernetes.crossplane.io")


def aws_activations(services: Iterable[str]) -> tuple[str, ...]:
    """The MRD names (``<plural>.<service>.aws.m.upbound.io``) of the composed resources of ``services``."""
    wanted = set(services)
    return tuple(
        f"{plural}.{service}.{NAMESPACED_GROUP}"
        for service, plural in (entry.split("_", 1) for entry in AWS_MANAGED_RESOURCES)
        if service in wanted
    )
