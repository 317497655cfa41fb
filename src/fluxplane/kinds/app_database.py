"""AppDatabase: an RDS PostgreSQL or MySQL database for one app on one workload cluster, made by the hub.

The composite lives in the workload cluster's hub namespace, next to its ``EKSCluster`` and the app's
``AppIdentity``, and composes (function-patch-and-transform, Upbound AWS family, namespaced):

- a DB subnet group over the cluster's private subnets and a security group in the cluster's VPC, both
  found by label among the managed resources the cluster's ``EKSCluster`` composed in the same
  namespace: Crossplane labels every composed resource ``crossplane.io/composite: <composite name>``,
  the ``EKSCluster`` is named like the cluster, and its private subnets carry ``platform.fluxplane.io/tier:
  private`` (fluxplane.kinds.eks_api); the security group admits the engine's port from the VPC's CIDR only;
- the DB instance: private, encrypted, backed up, a final snapshot on delete, and a master password
  that RDS generates, keeps in Secrets Manager and rotates (``manageMasterUserPassword``), so it is in
  neither Git nor etcd;
- read access to that secret for the app's own role (its ``AppIdentity``, found by label as the other
  app kinds find it), so the app may read the current password from Secrets Manager itself;
- the credentials as a Secret in the app's namespace on the workload cluster, through External Secrets:
  an IAM role that may read that one secret and that only the cluster's External Secrets controller may
  assume, and, written there by provider-kubernetes (the ProviderConfig ``spoke`` of the hub namespace),
  a ``SecretStore`` that assumes it and an ``ExternalSecret`` that fills the Secret. A tenant may write
  ExternalSecrets in its namespace but no store, and the only store there reads its own database's
  secret: one app cannot read another's.

The controller's role is the one the cluster's composition made for it (IRSA); its name is generated,
so the composition reads its ARN from the annotation of the controller's service account on the
cluster (an observe-only ``Object``), and the role's trust admits it only from the database's own
account. The XRD (SPEC, in the form of fluxplane.kinds.app.Spec), the Composition
(``composed``), the provider family members (SERVICES) and the managed resources to activate
(MANAGED_RESOURCES) are what registering the kind needs.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field

from fluxplane.config.hub import EXTERNAL_SECRETS_SERVICE_ACCOUNT, SPOKE_PROVIDER_CONFIG
from fluxplane.constructs import patch_and_transform as pt
from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import DNS_LABEL, Label
from fluxplane.kinds.app import APP_ROLE_LABEL, GROUP, VERSION, AppKind, AppResourceProps
from fluxplane.kinds.live import COMPOSITE_GROUP, PROVIDER_CONFIG_NAME, CloudKind, spec

KIND = "AppDatabase"
PLURAL = "appdatabases"
#: The field that holds the database's AWS name, which starts with ``<cluster>-<app>-``.
PHYSICAL_NAME = "identifier"
#: The AWS provider family members the composition uses.
SERVICES = ("rds", "ec2", "iam")
#: The managed resources it composes, as ``<service>_<plural>`` (fluxplane.packs.managed_resources).
MANAGED_RESOURCES = (
    "rds_instances",
    "rds_subnetgroups",
    "ec2_securitygroups",
    "ec2_securitygroupingressrules",
    "iam_roles",
    "iam_rolepolicies",
)
#: The port each engine listens on: the instance's, and the one the security group opens.
ENGINE_PORTS = {"postgres": 5432, "mysql": 3306}

#: An RDS DB instance identifier: 1 to 63 letters, digits or hyphens, starting with a letter, no two hyphens in a
#: row, not ending with one; lower case, as RDS keeps it.
DB_IDENTIFIER = r"^[a-z](-?[a-z0-9])*$"
DB_IDENTIFIER_MAX_LENGTH = 63
#: A database name both engines accept: a letter, then letters, digits or underscores (PostgreSQL allows 63).
DATABASE_NAME = r"^[a-z][a-z0-9_]{0,62}$"
#: An RDS master user name: a letter, then up to 15 letters, digits or underscores.
DB_USERNAME = r"^[a-z][a-z0-9_]{0,15}$"
DB_INSTANCE_CLASS = r"^db\.[a-z0-9]+\.[a-z0-9]+$"
#: A major version ("17", "8.4") or a full one ("17.4", "8.4.5").
DB_ENGINE_VERSION = r"^[0-9]+(\.[0-9]+){0,2}$"
#: Label key Crossplane gives every composed resource, valued with its composite's name.
COMPOSITE_LABEL = "crossplane.io/composite"
#: The label of the private subnets of a cluster's EKSCluster (fluxplane.kinds.eks_api).
PRIVATE_SUBNETS = {f"{pt.LABEL}/tier": "private"}
#: The annotation by which IRSA names a service account's role.
IRSA_ROLE_ANNOTATION = "eks.amazonaws.com/role-arn"
#: How often External Secrets reads the secret again: RDS rotates the password every seven days.
REFRESH_INTERVAL = "15m"
#: The keys of the Secret on the workload cluster.
SECRET_KEYS = ("engine", "host", "port", "dbname", "username", "password")

SECRET_ACTIONS = ("secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue")


class AppDatabaseProps(AppResourceProps):
    """An RDS database in the cluster's VPC; its credentials readable by the app's role and delivered to the app's
    namespace on the cluster as a Secret named like the composite."""

    app_namespace: Label
    """The app's namespace on the workload cluster: it receives the Secret."""
    cluster_name: Label
    """The workload cluster (its EKSCluster in the same namespace) whose VPC's private subnets hold the database."""
    vpc_cidr: str = Field(pattern=r"^[0-9]{1,3}(\.[0-9]{1,3}){3}/[0-9]{1,2}$")
    """The cluster VPC's IPv4 CIDR: the only addresses the database's port is open to."""
    identifier: str = Field(pattern=DB_IDENTIFIER, max_length=DB_IDENTIFIER_MAX_LENGTH)
    """The RDS DB instance identifier, ``<cluster>-<app>-<name>``; changing it makes a new database."""
    engine: Literal["postgres", "mysql"]
    """The engine: ``postgres`` or ``mysql``."""
    engine_version: str = Field(pattern=DB_ENGINE_VERSION)
    """The engine version: a major version (``"17"``, ``"8.4"``) lets RDS apply minor versions."""
    instance_class: str = Field("db.t4g.micro", pattern=DB_INSTANCE_CLASS)
    """The DB instance class. Default: ``"db.t4g.micro"``."""
    allocated_storage: int = Field(20, ge=20, le=65536)
    """Storage in GiB. Default: ``20``."""
    max_allocated_storage: int | None = Field(None, ge=22, le=65536)
    """The most GiB storage autoscaling may grow to. Default: not set (no autoscaling)."""
    multi_az: bool = False
    """A standby in a second availability zone. Default: ``False``."""
    database_name: str = Field(pattern=DATABASE_NAME)
    """The database made with the instance."""
    username: str = Field("dbadmin", pattern=DB_USERNAME)
    """The master user, whose password RDS keeps in Secrets Manager. Default: ``"dbadmin"``."""
    backup_retention_days: int = Field(7, ge=0, le=35)
    """Days of automated backups. Default: ``7``."""
    deletion_protection: bool = True
    """RDS refuses to delete the instance while set. Default: ``True``."""


class AppDatabase(TypedResource[AppDatabaseProps]):
    api_version = f"{GROUP}/{VERSION}"
    kind = "AppDatabase"
    props_class = AppDatabaseProps


def _policy(resource: str) -> str:
    """Read access to one Secrets Manager secret (a P&T format string when ``resource`` is ``%s``)."""
    statement = {"Effect": "Allow", "Action": list(SECRET_ACTIONS), "Resource": [resource]}
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]}, indent=2) + "\n"


def reader_trust_policy() -> str:
    """The reader role's trust: the cluster's External Secrets role (first ``%s``), of the database's account."""
    statement = {
        "Effect": "Allow",
        "Principal": {"AWS": "%s"},
        "Action": ["sts:AssumeRole", "sts:TagSession"],
        "Condition": {"StringEquals": {"aws:PrincipalAccount": "%s"}},
    }
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]}, indent=2) + "\n"


def _engine_port(target: str) -> dict[str, Any]:
    patch = pt.patch("spec.engine", target, required=True)
    patch["transforms"] = [{"type": "map", "map": dict(ENGINE_PORTS)}]
    return patch


#: The account id of an RDS ARN (``arn:<partition>:rds:<region>:<account>:db:<identifier>``).
_ACCOUNT_OF_ARN = {
    "type": "string",
    "string": {"type": "Regexp", "regexp": {"match": r"^arn:[^:]+:rds:[^:]*:([0-9]{12}):", "group": 1}},
}


def _network() -> list[dict[str, Any]]:
    regional = [pt.use("region")]
    cluster = f"[{COMPOSITE_LABEL}]"
    return [
        pt.resource(
            "subnet-group",
            pt.managed(
                "rds",
                "SubnetGroup",
                {
                    "description": "The private subnets of the app's cluster",
                    "subnetIdSelector": {"matchLabels": dict(PRIVATE_SUBNETS)},
                },
            ),
            [
                *regional,
                pt.patch("spec.identifier", "metadata.annotations[crossplane.io/external-name]", required=True),
                pt.patch("spec.clusterName", f"spec.forProvider.subnetIdSelector.matchLabels{cluster}", required=True),
                pt.use("tags"),
            ],
        ),
        pt.resource(
            "security-group",
            pt.managed(
                "ec2",
                "SecurityGroup",
                {"description": "The database of an app, reachable from its cluster's VPC"},
            ),
            [
                *regional,
                pt.patch("spec.identifier", "spec.forProvider.name", required=True),
                pt.patch("spec.clusterName", f"spec.forProvider.vpcIdSelector.matchLabels{cluster}", required=True),
                pt.patch("spec.identifier", "spec.forProvider.tags.Name"),
                pt.use("tags"),
            ],
        ),
        pt.resource(
            "ingress",
            pt.managed(
                "ec2",
                "SecurityGroupIngressRule",
                {
                    "description": "The database's port, from the cluster's VPC",
                    "ipProtocol": "tcp",
                    "securityGroupIdSelector": pt.selector(),
                },
            ),
            [
                *regional,
                pt.patch("spec.vpcCidr", "spec.forProvider.cidrIpv4", required=True),
                _engine_port("spec.forProvider.fromPort"),
                _engine_port("spec.forProvider.toPort"),
                pt.use("tags"),
            ],
        ),
    ]


def _instance() -> dict[str, Any]:
    return pt.resource(
        "instance",
        pt.managed(
            "rds",
            "Instance",
            {
                "applyImmediately": False,
                "autoMinorVersionUpgrade": True,
                "copyTagsToSnapshot": True,
                "dbSubnetGroupNameSelector": pt.selector(),
                "manageMasterUserPassword": True,
                "publiclyAccessible": False,
                "skipFinalSnapshot": False,
                "storageEncrypted": True,
                "storageType": "gp3",
                "vpcSecurityGroupIdSelector": pt.selector(),
            },
        ),
        [
            pt.use("region"),
            # The provider knows an instance by its resource id (db-...), which it writes as the external
            # name once the instance exists; the identifier is a parameter.
            pt.patch("spec.identifier", "spec.forProvider.identifier", required=True),
            pt.patch("spec.identifier", "spec.forProvider.finalSnapshotIdentifier", fmt="%s-final", required=True),
            pt.patch("spec.engine", "spec.forProvider.engine", required=True),
            _engine_port("spec.forProvider.port"),
            pt.patch("spec.engineVersion", "spec.forProvider.engineVersion", required=True),
            pt.patch("spec.instanceClass", "spec.forProvider.instanceClass", required=True),
            pt.patch("spec.allocatedStorage", "spec.forProvider.allocatedStorage"),
            pt.patch("spec.maxAllocatedStorage", "spec.forProvider.maxAllocatedStorage"),
            pt.patch("spec.multiAz", "spec.forProvider.multiAz"),
            pt.patch("spec.databaseName", "spec.forProvider.dbName", required=True),
            pt.patch("spec.username", "spec.forProvider.username", required=True),
            pt.patch("spec.backupRetentionDays", "spec.forProvider.backupRetentionPeriod"),
            pt.patch("spec.deletionProtection", "spec.forProvider.deletionProtection"),
            pt.use("tags"),
            pt.status("status.atProvider.address", "status.address"),
            pt.status("status.atProvider.port", "status.port"),
            pt.status("status.atProvider.arn", "status.arn"),
            {**pt.status("status.atProvider.arn", "status.accountId"), "transforms": [_ACCOUNT_OF_ARN]},
            pt.status("status.atProvider.masterUserSecret[0].secretArn", "status.secretArn"),
        ],
    )


def _app_access() -> dict[str, Any]:
    """The inline policy on the app's role (its AppIdentity's) that lets it read the secret."""
    return pt.resource(
        "access",
        pt.managed("iam", "RolePolicy", {"roleSelector": {"matchLabels": {APP_ROLE_LABEL: "app"}}}),
        [
            pt.patch("spec.app", f"spec.forProvider.roleSelector.matchLabels[{APP_ROLE_LABEL}]", required=True),
            pt.patch("status.secretArn", "spec.forProvider.policy", fmt=_policy("%s"), required=True),
        ],
    )


def _object(name: str, manifest: dict[str, Any], patches: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    """A provider-kubernetes Object on the workload cluster, through the hub namespace's ProviderConfig."""
    base = {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "spec": {
            **spec,
            "forProvider": {"manifest": manifest},
            "providerConfigRef": {"kind": "ProviderConfig", "name": SPOKE_PROVIDER_CONFIG},
        },
    }
    return pt.resource(name, base, patches)


_MANIFEST = "spec.forProvider.manifest"


def _delivery() -> list[dict[str, Any]]:
    """The credentials as a Secret in the app's namespace on the workload cluster, through External Secrets."""
    namespace, account = EXTERNAL_SECRETS_SERVICE_ACCOUNT.split(":")
    named = [
        pt.patch("metadata.name", f"{_MANIFEST}.metadata.name"),
        pt.patch("spec.appNamespace", f"{_MANIFEST}.metadata.namespace", required=True),
    ]
    template = f"{_MANIFEST}.spec.target.template.data"
    port = pt.patch("status.port", f"{template}.port", required=True)
    port["transforms"] = [{"type": "convert", "convert": {"toType": "string"}}]
    return [
        _object(
            "external-secrets-account",
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account, "namespace": namespace}},
            [
                pt.status(
                    f"status.atProvider.manifest.metadata.annotations[{IRSA_ROLE_ANNOTATION}]",
                    "status.externalSecretsRoleArn",
                )
            ],
            managementPolicies=["Observe"],
        ),
        pt.resource(
            "secret-reader",
            pt.managed("iam", "Role", {}, labels={"role": "secret-reader"}),
            [
                pt.combine(
                    ("status.externalSecretsRoleArn", "status.accountId"),
                    reader_trust_policy(),
                    "spec.forProvider.assumeRolePolicy",
                ),
                pt.use("tags"),
                pt.status("status.atProvider.arn", "status.readerRoleArn"),
            ],
        ),
        pt.resource(
            "secret-reader-policy",
            pt.managed("iam", "RolePolicy", {"roleSelector": pt.selector(role="secret-reader")}),
            [pt.patch("status.secretArn", "spec.forProvider.policy", fmt=_policy("%s"), required=True)],
        ),
        _object(
            "secret-store",
            {
                "apiVersion": "external-secrets.io/v1",
                "kind": "SecretStore",
                "spec": {"provider": {"aws": {"service": "SecretsManager"}}},
            },
            [
                *named,
                pt.patch("spec.region", f"{_MANIFEST}.spec.provider.aws.region", required=True),
                pt.patch("status.readerRoleArn", f"{_MANIFEST}.spec.provider.aws.role", required=True),
            ],
        ),
        _object(
            "external-secret",
            {
                "apiVersion": "external-secrets.io/v1",
                "kind": "ExternalSecret",
                "spec": {
                    "refreshInterval": REFRESH_INTERVAL,
                    "secretStoreRef": {"kind": "SecretStore"},
                    "target": {
                        "creationPolicy": "Owner",
                        "template": {
                            "engineVersion": "v2",
                            "type": "Opaque",
                            "data": {"username": "{{ .username }}", "password": "{{ .password }}"},
                        },
                    },
                    "data": [{"secretKey": key, "remoteRef": {"property": key}} for key in ("username", "password")],
                },
            },
            [
                *named,
                pt.patch("metadata.name", f"{_MANIFEST}.spec.secretStoreRef.name"),
                pt.patch("metadata.name", f"{_MANIFEST}.spec.target.name"),
                pt.patch("status.secretArn", f"{_MANIFEST}.spec.data[0].remoteRef.key", required=True),
                pt.patch("status.secretArn", f"{_MANIFEST}.spec.data[1].remoteRef.key", required=True),
                pt.patch("spec.engine", f"{template}.engine"),
                pt.patch("status.address", f"{template}.host", required=True),
                port,
                pt.patch("spec.databaseName", f"{template}.dbname"),
            ],
            # Ready once External Secrets has written the Secret: the app can connect.
            readiness={"policy": "DeriveFromObject"},
        ),
    ]


def composed() -> list[dict[str, Any]]:
    """The P&T resource templates of an AppDatabase, in dependency order."""
    return [*_network(), _instance(), _app_access(), *_delivery()]


# -- the XRD ---------------------------------------------------------------------------------------

_PROPERTIES: dict[str, Any] = {
    "app": pt.string_property(
        "The app the database is for: its role (its AppIdentity in this namespace) may read the credentials, and "
        "its namespace on the cluster receives them."
    ),
    "appNamespace": pt.string_property(
        "The app's namespace on the workload cluster: it receives the Secret named like this AppDatabase, with "
        f"the keys {', '.join(SECRET_KEYS)}.",
        pattern=DNS_LABEL,
        maxLength=63,
    ),
    "clusterName": pt.string_property(
        "The workload cluster (its EKSCluster in this namespace): the database is made in its VPC's private "
        "subnets, reachable from its VPC.",
        pattern=DNS_LABEL,
        maxLength=63,
    ),
    "vpcCidr": pt.cidr_property(
        "The cluster VPC's IPv4 CIDR: the security group admits the engine's port from it alone."
    ),
    PHYSICAL_NAME: pt.string_property(
        "The RDS DB instance identifier, <cluster>-<app>-<name>: 1 to 63 lower-case letters, digits or hyphens, "
        "starting with a letter, without two hyphens in a row or a hyphen at the end. It also names the subnet "
        "group, the security group and the final snapshot (<identifier>-final). Changing it makes a new "
        "database.",
        pattern=DB_IDENTIFIER,
        maxLength=DB_IDENTIFIER_MAX_LENGTH,
    ),
    "engine": pt.string_property(
        "The database engine; it sets the port (postgres 5432, mysql 3306).", enum=list(ENGINE_PORTS)
    ),
    "engineVersion": pt.string_property(
        'The engine version, best a major version such as "17" (PostgreSQL) or "8.4" (MySQL): RDS then picks '
        "that major version's default minor version at creation, and applies newer minor versions in the "
        "maintenance window (autoMinorVersionUpgrade). A full version pins the start; raising the major "
        "version is an upgrade that RDS applies in the maintenance window.",
        pattern=DB_ENGINE_VERSION,
    ),
    "instanceClass": pt.string_property(
        "The DB instance class, e.g. db.t4g.micro or db.m7g.large.",
        pattern=DB_INSTANCE_CLASS,
        default="db.t4g.micro",
    ),
    "allocatedStorage": {
        "type": "integer",
        "description": "Storage in GiB (gp3, encrypted).",
        "minimum": 20,
        "maximum": 65536,
        "default": 20,
    },
    "maxAllocatedStorage": {
        "type": "integer",
        "description": "Storage autoscaling: the most GiB RDS may grow the storage to, at least 10% above "
        "allocatedStorage (RDS refuses less). Default: no autoscaling.",
        "minimum": 22,
        "maximum": 65536,
    },
    "multiAz": {"type": "boolean", "description": "A standby in a second zone.", "default": False},
    "databaseName": pt.string_property(
        "The database made with the instance: a lower-case letter, then up to 62 lower-case letters, digits or "
        "underscores, and no word the engine reserves.",
        pattern=DATABASE_NAME,
    ),
    "username": pt.string_property(
        "The master user, whose password RDS keeps in Secrets Manager and rotates: a lower-case letter, then up "
        "to 15 lower-case letters, digits or underscores; RDS refuses its own (rdsadmin) and the engine's "
        "reserved words.",
        pattern=DB_USERNAME,
        default="dbadmin",
    ),
    "backupRetentionDays": {
        "type": "integer",
        "description": "Days RDS keeps automated backups (point-in-time recovery); 0 turns backups off.",
        "minimum": 0,
        "maximum": 35,
        "default": 7,
    },
    "deletionProtection": {
        "type": "boolean",
        "description": "RDS refuses to delete the instance; turn it off before deleting the AppDatabase.",
        "default": True,
    },
}

#: The XRD's fields: (properties, required, status); fluxplane.kinds.app.xrd_props adds region, providerConfigName
#: and tags.
SPEC: tuple[dict[str, Any], list[str], dict[str, Any]] = (
    _PROPERTIES,
    [
        "region",
        "app",
        "appNamespace",
        "clusterName",
        "vpcCidr",
        PHYSICAL_NAME,
        "engine",
        "engineVersion",
        "databaseName",
    ],
    {
        "address": pt.string_property("The instance's DNS name."),
        "port": {"type": "integer", "description": "The port it listens on."},
        "arn": pt.string_property("The instance's ARN."),
        "secretArn": pt.string_property("The Secrets Manager secret RDS keeps the master user's credentials in."),
        "accountId": pt.string_property("The AWS account the instance is in."),
        "externalSecretsRoleArn": pt.string_property("The role of the cluster's External Secrets controller."),
        "readerRoleArn": pt.string_property(
            "The role that may read the secret, which the cluster's SecretStore assumes."
        ),
    },
)


APP_KIND = AppKind(
    construct=AppDatabase,
    plural=PLURAL,
    spec=SPEC,
    services=SERVICES,
    composed=composed,
    live=CloudKind(
        COMPOSITE_GROUP,
        KIND,
        "app database",
        (
            *spec("region"),
            PROVIDER_CONFIG_NAME,
            *spec("identifier", "clusterName", "engine", "databaseName", "username"),
        ),
        deletes="the RDS database, once its deletionProtection is off (RDS keeps a final snapshot)",
        data=True,
        name=("spec", "identifier"),
    ),
)
