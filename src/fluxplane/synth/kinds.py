"""What a change to a cloud kind does to the live resource: one entry per kind, read by the replacement guard
(fluxplane.synth.hazards, fluxplane.synth.guard), diff's risk report and plan.

Each entry says how a reader names the resource ("RDS instance"), the fields whose change replaces it (AWS
cannot change them in place: Terraform's ForceNew in the provider the Upbound AWS providers are generated
from; the resource is deleted and made anew, or the update is refused), where its AWS name is when the
external name does not hold it, what deleting it destroys, and whether it holds data (a replacement or a
deletion loses what it holds): the RDS, DynamoDB, S3 and SQS stores, an EKS cluster with its workloads, a
VPC with everything in it.

A kind may also have switches: a field that turns a mode of the resource on or off in place, which changes what runs
on it as much as a replacement does (an EKS cluster's Auto Mode: EKS takes over or gives back its nodes). Each says
what switching it on and off does and the synth flag that allows it. An object without the field has the mode
off; one that drops the field leaves the mode as it was in the cloud (fluxplane.synth.hazards.switched).

Besides its own fields, every AWS managed resource is replaced when its region, its external name or its
provider config (the AWS account) changes (``ANY_MANAGED``). fluxplane's composites (``platform.fluxplane.io``)
have entries of their own: the fields of theirs that feed those of the resources they compose.

Groups are glob patterns: ``rds.aws*`` is the cluster-scoped family (``rds.aws.upbound.io``) and the
namespaced one (``rds.aws.m.upbound.io``).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

FieldPath = tuple[str, ...]

#: The annotation Crossplane keeps a managed resource's cloud name in.
EXTERNAL_NAME: FieldPath = ("metadata", "annotations", "crossplane.io/external-name")
#: The provider config a managed resource's account comes from (``ProviderConfig`` or ``ClusterProviderConfig``).
PROVIDER_CONFIG_REF: FieldPath = ("spec", "providerConfigRef", "name")
#: The provider config of fluxplane's composites, passed on to what they compose.
PROVIDER_CONFIG_NAME: FieldPath = ("spec", "providerConfigName")
REGION: FieldPath = ("spec", "forProvider", "region")
#: API groups of the AWS managed resources: a service's group in either family (``rds.aws.m.upbound.io``).
MANAGED_GROUPS = ("*.aws.upbound.io", "*.aws.m.upbound.io")
#: fluxplane's composites.
COMPOSITE_GROUP = "platform.fluxplane.io"
#: The kinds that say what a composite composes: its XRD, its Compositions and the functions they run.
DEFINITION_KINDS = ("CompositeResourceDefinition", "Composition", "Function")
#: Fields whose change replaces any AWS managed resource: another region or external name is another resource,
#: another provider config another account.
ANY_MANAGED: tuple[FieldPath, ...] = (REGION, EXTERNAL_NAME, PROVIDER_CONFIG_REF)


def _given(*names: str) -> tuple[FieldPath, ...]:
    return tuple(("spec", "forProvider", *name.split(".")) for name in names)


def _spec(*names: str) -> tuple[FieldPath, ...]:
    return tuple(("spec", *name.split(".")) for name in names)


@dataclass(frozen=True)
class Switch:
    """A field that turns a mode of the live resource on or off in place (module docstring)."""

    path: FieldPath
    #: What the mode is, as a reader names it: "EKS Auto Mode".
    mode: str
    #: What switching it on does, and switching it off.
    on: str
    off: str
    #: The synth flag that allows switching it, either way (fluxplane.synth.guard).
    flag: str


#: EKS Auto Mode, switched as one.
_AUTO_MODE_ON = (
    "EKS launches the cluster's nodes from its node pools and runs its block storage and load balancing: its managed "
    "node groups are deleted (their pods move to Auto Mode's nodes) and the add-ons Auto Mode stands in for "
    "(Karpenter, the EBS CSI driver, the AWS Load Balancer Controller) are uninstalled"
)
_AUTO_MODE_OFF = (
    "EKS terminates the nodes it launched and deletes the load balancers it made (its EBS volumes stay): managed node "
    "groups are made, and a cluster made in Auto Mode has no VPC CNI, kube-proxy or CoreDNS for their nodes until "
    "they are installed as EKS add-ons"
)
AUTO_MODE_FLAG = "auto-mode"


@dataclass(frozen=True)
class CloudKind:
    """What one kind of cloud object means for the live resource (module docstring)."""

    group: str
    kind: str
    #: How a reader names the resource: "RDS instance".
    noun: str
    #: Fields whose change replaces the resource, besides ANY_MANAGED for a managed resource.
    replaces: tuple[FieldPath, ...] = ()
    #: What deleting it destroys in AWS ("" when that needs no saying).
    deletes: str = ""
    #: It holds data: a replacement or a deletion loses it.
    data: bool = False
    #: The field naming it in AWS, where the external name does not.
    name: FieldPath | None = None
    #: Fields that turn a mode of it on or off in place.
    switches: tuple[Switch, ...] = ()

    def matches(self, group: str, kind: str) -> bool:
        return fnmatch.fnmatchcase(group, self.group) and fnmatch.fnmatchcase(kind, self.kind)


KINDS: tuple[CloudKind, ...] = (
    # RDS: the instance's engine, names and encryption are fixed at creation; the class, storage size and
    # engine version change in place.
    CloudKind(
        "rds.aws*",
        "Instance",
        "RDS instance",
        _given(
            "engine",
            "identifier",
            "identifierPrefix",
            "dbName",
            "username",
            "storageEncrypted",
            "kmsKeyId",
            "availabilityZone",
            "characterSetName",
            "ncharCharacterSetName",
            "timezone",
            "customIamInstanceProfile",
            "snapshotIdentifier",
            "restoreToPointInTime",
        ),
        deletes="the database instance and its data (RDS keeps a final snapshot unless skipFinalSnapshot)",
        data=True,
        name=("spec", "forProvider", "identifier"),
    ),
    CloudKind(
        "rds.aws*",
        "Cluster",
        "Aurora cluster",
        _given(
            "engine",
            "engineMode",
            "databaseName",
            "masterUsername",
            "storageEncrypted",
            "kmsKeyId",
            "availabilityZones",
            "snapshotIdentifier",
            "restoreToPointInTime",
            "sourceRegion",
        ),
        deletes="the database cluster and its data (RDS keeps a final snapshot unless skipFinalSnapshot)",
        data=True,
    ),
    CloudKind("rds.aws*", "SubnetGroup", "DB subnet group"),
    CloudKind("rds.aws*", "ParameterGroup", "DB parameter group", _given("family")),
    CloudKind(
        "dynamodb.aws*",
        "Table",
        "DynamoDB table",
        _given(
            "hashKey",
            "rangeKey",
            "localSecondaryIndex",
            "importTable",
            "restoreSourceName",
            "restoreSourceTableArn",
            "restoreDateTime",
            "restoreToLatestTime",
        ),
        deletes="the table and its items",
        data=True,
    ),
    CloudKind(
        "s3.aws*",
        "Bucket",
        "S3 bucket",
        _given("objectLockEnabled"),
        deletes="the bucket and its objects",
        data=True,
    ),
    CloudKind(
        "sqs.aws*",
        "Queue",
        "SQS queue",
        _given("name", "fifoQueue"),
        deletes="the queue and its messages",
        data=True,
        name=("spec", "forProvider", "name"),
    ),
    CloudKind("sqs.aws*", "QueuePolicy", "SQS queue policy"),
    CloudKind(
        "eks.aws*",
        "Cluster",
        "EKS cluster",
        _given(
            "roleArn",
            "vpcConfig.subnetIds",
            "vpcConfig.securityGroupIds",
            "encryptionConfig",
            "kubernetesNetworkConfig.serviceIpv4Cidr",
            "kubernetesNetworkConfig.ipFamily",
            "outpostConfig",
            "bootstrapSelfManagedAddons",
            "accessConfig.bootstrapClusterCreatorAdminPermissions",
        ),
        deletes="the Kubernetes cluster and everything running on it",
        data=True,
        switches=(
            Switch(_given("computeConfig.enabled")[0], "EKS Auto Mode", _AUTO_MODE_ON, _AUTO_MODE_OFF, AUTO_MODE_FLAG),
        ),
    ),
    CloudKind(
        "eks.aws*",
        "NodeGroup",
        "EKS node group",
        _given(
            "clusterName",
            "subnetIds",
            "instanceTypes",
            "capacityType",
            "diskSize",
            "amiType",
            "nodeRoleArn",
            "remoteAccess",
        ),
        deletes="its nodes, and the pods on them",
    ),
    CloudKind("eks.aws*", "Addon", "EKS add-on", _given("addonName", "clusterName")),
    CloudKind("eks.aws*", "ClusterAuth", "EKS cluster credentials"),
    CloudKind(
        "eks.aws*",
        "PodIdentityAssociation",
        "EKS pod identity association",
        _given("clusterName", "namespace", "serviceAccount"),
    ),
    CloudKind("eks.aws*", "AccessEntry", "EKS access entry", _given("clusterName", "principalArn", "type")),
    CloudKind(
        "eks.aws*", "AccessPolicyAssociation", "EKS access policy association", _given("clusterName", "principalArn")
    ),
    CloudKind(
        "ec2.aws*",
        "VPC",
        "VPC",
        _given("cidrBlock", "ipv4IpamPoolId", "ipv4NetmaskLength"),
        deletes="the network and everything in it",
        data=True,
    ),
    CloudKind(
        "ec2.aws*",
        "Subnet",
        "subnet",
        _given("cidrBlock", "availabilityZone", "availabilityZoneId", "vpcId", "outpostArn", "ipv6Native"),
    ),
    CloudKind("ec2.aws*", "SecurityGroup", "security group", _given("name", "description", "vpcId")),
    CloudKind("ec2.aws*", "SecurityGroupIngressRule", "security group ingress rule"),
    CloudKind("ec2.aws*", "SecurityGroupEgressRule", "security group egress rule"),
    CloudKind(
        "ec2.aws*",
        "NATGateway",
        "NAT gateway",
        _given("subnetId", "allocationId", "connectivityType", "privateIp"),
    ),
    CloudKind("ec2.aws*", "InternetGateway", "internet gateway"),
    CloudKind("ec2.aws*", "EIP", "Elastic IP address", _given("domain")),
    CloudKind("ec2.aws*", "RouteTable", "route table", _given("vpcId")),
    CloudKind("ec2.aws*", "Route", "route", _given("routeTableId", "destinationCidrBlock")),
    CloudKind("ec2.aws*", "RouteTableAssociation", "route table association", _given("subnetId", "gatewayId")),
    CloudKind("ec2.aws*", "LaunchTemplate", "launch template"),
    CloudKind("iam.aws*", "Role", "IAM role", _given("path")),
    CloudKind("iam.aws*", "RolePolicy", "IAM role policy", _given("role")),
    CloudKind("iam.aws*", "RolePolicyAttachment", "IAM role policy attachment", _given("role", "policyArn")),
    CloudKind("iam.aws*", "Policy", "IAM policy", _given("path")),
    CloudKind("iam.aws*", "InstanceProfile", "IAM instance profile", _given("path")),
    CloudKind("iam.aws*", "OpenIDConnectProvider", "IAM OIDC provider", _given("url")),
    # fluxplane's composites: these fields feed the managed resources' fields above.
    CloudKind(
        COMPOSITE_GROUP,
        "EKSCluster",
        "workload cluster",
        (*_spec("region"), PROVIDER_CONFIG_NAME, *_spec("network.vpcCidr", "network.zones")),
        deletes="the EKS cluster, its node groups and its VPC",
        data=True,
        switches=(
            Switch(_spec("autoMode.enabled")[0], "EKS Auto Mode", _AUTO_MODE_ON, _AUTO_MODE_OFF, AUTO_MODE_FLAG),
        ),
    ),
    CloudKind(
        COMPOSITE_GROUP,
        "AppTable",
        "app table",
        (*_spec("region"), PROVIDER_CONFIG_NAME, *_spec("tableName", "hashKey", "rangeKey")),
        deletes="the DynamoDB table and its data",
        data=True,
        name=("spec", "tableName"),
    ),
    CloudKind(
        COMPOSITE_GROUP,
        "AppQueue",
        "app queue",
        (*_spec("region"), PROVIDER_CONFIG_NAME, *_spec("queueName", "fifo")),
        deletes="the SQS queue and its messages",
        data=True,
        name=("spec", "queueName"),
    ),
    CloudKind(
        COMPOSITE_GROUP,
        "AppBucket",
        "app bucket",
        (*_spec("region"), PROVIDER_CONFIG_NAME, *_spec("bucketName")),
        deletes="the S3 bucket and its objects",
        data=True,
        name=("spec", "bucketName"),
    ),
    CloudKind(
        COMPOSITE_GROUP,
        "AppDatabase",
        "app database",
        (
            *_spec("region"),
            PROVIDER_CONFIG_NAME,
            *_spec("identifier", "clusterName", "engine", "databaseName", "username"),
        ),
        deletes="the RDS database, once its deletionProtection is off (RDS keeps a final snapshot)",
        data=True,
        name=("spec", "identifier"),
    ),
    CloudKind(
        COMPOSITE_GROUP,
        "AppIdentity",
        "app identity",
        (*_spec("region"), PROVIDER_CONFIG_NAME, *_spec("clusterName")),
    ),
    CloudKind(
        COMPOSITE_GROUP,
        "AddonIdentity",
        "add-on identity",
        (*_spec("region"), PROVIDER_CONFIG_NAME, *_spec("clusterName")),
    ),
)


def is_managed(group: str) -> bool:
    """Whether objects of ``group`` are AWS managed resources (a service's group, not the providers' own)."""
    return any(fnmatch.fnmatchcase(group, pattern) for pattern in MANAGED_GROUPS)


def cloud_kind(group: str, kind: str) -> CloudKind | None:
    """The entry of ``group`` and ``kind``, None for a kind the table does not hold."""
    return next((entry for entry in KINDS if entry.matches(group, kind)), None)


def noun(group: str, kind: str) -> str:
    """How a reader names an object of ``group`` and ``kind``: the table's noun, else ``<service> <Kind>``."""
    entry = cloud_kind(group, kind)
    if entry is not None:
        return entry.noun
    return f"{group.split('.', 1)[0]} {kind}" if is_managed(group) else kind


def switches(group: str, kind: str) -> tuple[Switch, ...]:
    """The switches of objects of ``group`` and ``kind`` (none for a kind the table does not hold)."""
    entry = cloud_kind(group, kind)
    return entry.switches if entry is not None else ()


def replacing_fields(group: str, kind: str) -> tuple[FieldPath, ...]:
    """The fields whose change replaces an object of ``group`` and ``kind`` (ANY_MANAGED first for a managed
    resource)."""
    entry = cloud_kind(group, kind)
    own = entry.replaces if entry is not None else ()
    return (*ANY_MANAGED, *own) if is_managed(group) else own
