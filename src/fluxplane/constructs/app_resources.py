"""The app resource composites (``platform.fluxplane.io/v1alpha1``): what an app may ask of AWS.

The kinds are fluxplane's own, defined by the XRDs the ``app-compositions`` pack writes
(fluxplane.packs.app_compositions). Each lives in the hub namespace of the workload cluster the app
runs on, next to that cluster's ``EKSCluster``:

- ``AppIdentity``: the app's IAM role, assumable through EKS Pod Identity by exactly one service
  account of one namespace of one cluster, and the Pod Identity association that binds them;
- ``AppTable``, ``AppQueue``, ``AppBucket``: a DynamoDB table, an SQS queue, an S3 bucket, each with an
  inline policy on the app's role that grants access to exactly that resource;
- ``AppDatabase``: an RDS PostgreSQL or MySQL instance in the cluster's VPC, its credentials readable by the
  app's role and delivered to the app's namespace on the cluster as a Secret (fluxplane.packs.app_database).

These props mirror the XRDs' schemas, so an object that passes them passes the API server too.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from fluxplane.constructs.base import TypedResource
from fluxplane.constructs.props import DNS_LABEL, Label, Name, Props

GROUP = "platform.fluxplane.io"
VERSION = "v1alpha1"
REGION = r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]$"

#: kind -> plural, for the XRDs.
KINDS = {
    "AppIdentity": "appidentities",
    "AppTable": "apptables",
    "AppQueue": "appqueues",
    "AppBucket": "appbuckets",
    "AppDatabase": "appdatabases",
    "AddonIdentity": "addonidentities",
}
#: Suffix of the hub service accounts that apply an app's own requests (``<app>-cloud``).
REQUEST_ACCOUNT_SUFFIX = "-cloud"
#: The kinds an app may request from its own repository, kind -> plural: not its identity, which is the platform's,
#: nor a database, which delivers its credentials to a namespace on the cluster that the request would choose.
REQUESTABLE = {
    kind: plural for kind, plural in KINDS.items() if kind not in ("AppIdentity", "AddonIdentity", "AppDatabase")
}
#: The Composition of the AppIdentity of an app whose cluster makes its resources (``appResources: spoke``).
SPOKE_IDENTITY_COMPOSITION = "appidentity-spoke"
#: An AWS managed policy (the only ARNs an add-on's role may attach).
MANAGED_POLICY = r"^arn:aws[a-z-]*:iam::aws:policy/[A-Za-z0-9+=,.@_/-]+$"
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
#: The database engines, and the port each listens on.
DB_ENGINE_PORTS = {"postgres": 5432, "mysql": 3306}


class _Composite(Props):
    """Fields every app composite has: its metadata, its AWS region and tags."""

    name: Name = Field(pattern=DNS_LABEL)
    """``metadata.name`` of the composite, a DNS-1123 label."""
    namespace: Label
    """Namespace of the composite: the hub namespace of the workload cluster the app runs on."""
    labels: dict[str, str] | None = None
    """``metadata.labels``. Default: none."""
    annotations: dict[str, str] | None = None
    """``metadata.annotations``. Default: none."""
    region: str = Field(pattern=REGION)
    """AWS region the composite's resources are created in."""
    provider_config_name: Name | None = None
    """The ClusterProviderConfig of the AWS account the composite's resources are made in: its cluster's. Default:
    not set (the hub's own account, ``default``)."""
    tags: dict[str, str] = Field(default_factory=dict)
    """AWS tags on the AWS resources the composite creates. Default: none."""


class CompositionRef(Props):
    """A Composition, by name."""

    name: Name
    """Name of the Composition."""


class CompositeMachinery(Props):
    """``spec.crossplane`` of a Crossplane v2 composite: how Crossplane composes it."""

    composition_ref: CompositionRef | None = None
    """The Composition to use. Default: not set (the XRD's ``defaultCompositionRef``)."""


class AppIdentityProps(_Composite):
    """An app's IAM role, assumable through EKS Pod Identity by one service account of one cluster."""

    crossplane: CompositeMachinery | None = None
    """How Crossplane composes it: ``compositionRef`` SPOKE_IDENTITY_COMPOSITION for an app whose cluster makes its
    resources. Default: not set (the role gets access through each resource's composite)."""
    cluster_name: str = Field(min_length=1, max_length=100)
    """Name of the EKS cluster the app runs on."""
    service_account_namespace: Label
    """Namespace of the app's service account on that cluster."""
    service_account: Label
    """Name of the app's service account: the only one that may assume the role."""


class InlinePolicy(Props):
    """An inline IAM policy of an add-on's role."""

    name: str = Field(pattern=r"^[A-Za-z0-9+=,.@_-]{1,128}$")
    """Name of the policy within the role."""
    policy: str = Field(min_length=2, max_length=10240)
    """The policy document, JSON."""


class AddonIdentityProps(AppIdentityProps):
    """An add-on's role: AWS managed policies and inline policies, for one service account."""

    managed_policy_arns: tuple[Annotated[str, Field(pattern=MANAGED_POLICY)], ...] = ()
    """ARNs of AWS managed policies attached to the role. Default: none."""
    inline_policies: tuple[InlinePolicy, ...] = ()
    """Inline policies of the role. Default: none."""


class _AppResource(_Composite):
    """Fields of the composites that give an app's role access to one AWS resource."""

    app: Label
    """The app whose role gets access (its AppIdentity's name, in the same namespace)."""


class Attribute(Props):
    """A DynamoDB key attribute: its name and type."""

    name: str = Field(min_length=1, max_length=255)
    """Name of the attribute."""
    type: Literal["S", "N", "B"]
    """Type of the attribute: ``S`` (string), ``N`` (number) or ``B`` (binary)."""


class AppTableProps(_AppResource):
    """A DynamoDB table, and an inline policy on the app's role that grants access to it."""

    table_name: str = Field(pattern=r"^[A-Za-z0-9_.-]{3,255}$")
    """Name of the DynamoDB table."""
    hash_key: str = Field(min_length=1, max_length=255)
    """Name of the partition (hash) key attribute."""
    range_key: str | None = Field(None, min_length=1, max_length=255)
    """Name of the sort (range) key attribute. Default: not set (the key is the partition key alone)."""
    attributes: tuple[Attribute, ...] = Field(min_length=1, max_length=2)
    """The key attributes and their types: the partition key's, and the sort key's if any."""


class AppQueueProps(_AppResource):
    """An SQS queue, and an inline policy on the app's role that grants access to it."""

    queue_name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,75}(\.fifo)?$", max_length=80)
    """Name of the SQS queue; a FIFO queue's name ends in ``.fifo``."""
    fifo: bool = False
    """Whether the queue is a FIFO queue (ordered, exactly-once delivery). Default: ``False``."""
    visibility_timeout_seconds: int = Field(30, ge=0, le=43200)
    """Seconds a received message stays hidden from other consumers. Default: ``30``."""
    message_retention_seconds: int = Field(345600, ge=60, le=1209600)
    """Seconds SQS keeps a message that nobody deletes. Default: ``345600`` (4 days)."""


class AppBucketProps(_AppResource):
    """An S3 bucket, and an inline policy on the app's role that grants access to it."""

    bucket_name: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
    """Name of the S3 bucket, unique in all of AWS."""
    versioning: Literal["Enabled", "Disabled"] = "Disabled"
    """Whether S3 keeps every version of an object: ``Enabled`` or ``Disabled``. Default: ``"Disabled"``."""


class AppDatabaseProps(_AppResource):
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


class AppIdentity(TypedResource[AppIdentityProps]):
    api_version = f"{GROUP}/{VERSION}"
    kind = "AppIdentity"
    props_class = AppIdentityProps


class AppTable(TypedResource[AppTableProps]):
    api_version = f"{GROUP}/{VERSION}"
    kind = "AppTable"
    props_class = AppTableProps


class AppQueue(TypedResource[AppQueueProps]):
    api_version = f"{GROUP}/{VERSION}"
    kind = "AppQueue"
    props_class = AppQueueProps


class AppBucket(TypedResource[AppBucketProps]):
    api_version = f"{GROUP}/{VERSION}"
    kind = "AppBucket"
    props_class = AppBucketProps


class AppDatabase(TypedResource[AppDatabaseProps]):
    api_version = f"{GROUP}/{VERSION}"
    kind = "AppDatabase"
    props_class = AppDatabaseProps


class AddonIdentity(TypedResource[AddonIdentityProps]):
    """The IAM role of one service account of an add-on (a pack) on one cluster, through EKS Pod Identity."""

    api_version = f"{GROUP}/{VERSION}"
    kind = "AddonIdentity"
    props_class = AddonIdentityProps
