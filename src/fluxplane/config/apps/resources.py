"""An app's AWS resources (its ``aws`` field): DynamoDB tables, SQS queues, S3 buckets and RDS databases, and
the folder of its own requests."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, field_validator, model_validator

from fluxplane.config.models import DNS_LABEL, RELATIVE_PATH, Model, repeated
from fluxplane.config.problems import show

#: A DynamoDB attribute name.
ATTRIBUTE = r"^[A-Za-z0-9_.-]{1,255}$"


class Table(Model):
    """A DynamoDB table the app reads and writes."""

    name: Annotated[str, StringConstraints(pattern=DNS_LABEL, max_length=63)] = Field(
        description="Name within the app; the AWS name is <cluster>-<app>-<name>."
    )
    hash_key: Annotated[str, StringConstraints(pattern=ATTRIBUTE)] = Field(
        alias="hashKey", description="Partition key attribute."
    )
    hash_key_type: Literal["S", "N", "B"] = Field("S", alias="hashKeyType", description="Its type: S, N or B.")
    range_key: Annotated[str, StringConstraints(pattern=ATTRIBUTE)] | None = Field(
        None, alias="rangeKey", description="Sort key attribute, if any."
    )
    range_key_type: Literal["S", "N", "B"] = Field("S", alias="rangeKeyType", description="Its type: S, N or B.")

    @model_validator(mode="after")
    def _keys_differ(self) -> Table:
        if self.range_key is not None and self.range_key == self.hash_key:
            raise ValueError(f"rangeKey must differ from hashKey, both are {show(self.hash_key)}")
        return self


class Queue(Model):
    """An SQS queue the app sends to and receives from."""

    name: Annotated[str, StringConstraints(pattern=DNS_LABEL, max_length=63)] = Field(
        description="Name within the app; the AWS name is <cluster>-<app>-<name> (plus .fifo)."
    )
    fifo: bool = Field(False, description="A FIFO queue (exactly-once, ordered).")
    visibility_timeout_seconds: int = Field(
        30, ge=0, le=43200, alias="visibilityTimeoutSeconds", description="Visibility timeout, 0 to 43200."
    )
    message_retention_seconds: int = Field(
        345600, ge=60, le=1209600, alias="messageRetentionSeconds", description="Retention, 60 to 1209600 (14 days)."
    )


class Bucket(Model):
    """An S3 bucket the app reads and writes."""

    name: Annotated[str, StringConstraints(pattern=DNS_LABEL, max_length=63)] = Field(
        description="Name within the app; the AWS name is <cluster>-<app>-<name>, unique in all of AWS."
    )
    versioning: bool = Field(False, description="Keep every version of every object.")


#: What RDS and both engines accept (fluxplane.kinds.app_database holds the same rules for the kind).
DB_ENGINE_VERSION = r"^[0-9]+(\.[0-9]+){0,2}$"
DB_INSTANCE_CLASS = r"^db\.[a-z0-9]+\.[a-z0-9]+$"
DATABASE_NAME = r"^[a-z][a-z0-9_]{0,62}$"
DB_USERNAME = r"^[a-z][a-z0-9_]{0,15}$"
DB_IDENTIFIER = r"^[a-z](-?[a-z0-9])*$"
DB_IDENTIFIER_MAX_LENGTH = 63
#: Master user names RDS keeps for itself.
RESERVED_DB_USERS = ("rdsadmin", "rdsrepladmin", "rds_superuser", "rdsproxyadmin")


class Database(Model):
    """An RDS database in the cluster's VPC; the app's namespace gets its credentials as a Secret."""

    name: Annotated[str, StringConstraints(pattern=DNS_LABEL, max_length=63)] = Field(
        description="Name within the app; the RDS identifier is <cluster>-<app>-<name>, the Secret in the app's "
        "namespace <app>-database-<name>."
    )
    engine: Literal["postgres", "mysql"] = Field(description="postgres (port 5432) or mysql (port 3306).")
    engine_version: Annotated[str, StringConstraints(pattern=DB_ENGINE_VERSION)] = Field(
        alias="engineVersion",
        description='Engine version, quoted: best a major version ("17", "8.4"), whose minor versions RDS then '
        "applies in the maintenance window.",
    )
    instance_class: Annotated[str, StringConstraints(pattern=DB_INSTANCE_CLASS)] = Field(
        "db.t4g.micro", alias="instanceClass", description="DB instance class."
    )
    allocated_storage: int = Field(
        20, ge=20, le=65536, alias="allocatedStorage", description="Storage in GiB (gp3, encrypted), 20 to 65536."
    )
    max_allocated_storage: int | None = Field(
        None,
        ge=22,
        le=65536,
        alias="maxAllocatedStorage",
        description="Storage autoscaling up to this many GiB, at least 10% above allocatedStorage; null for none.",
    )
    multi_az: bool = Field(False, alias="multiAz", description="A standby in a second availability zone.")
    database_name: Annotated[str, StringConstraints(pattern=DATABASE_NAME)] | None = Field(
        None,
        alias="databaseName",
        description="The database made with the instance; default the name with '-' as '_'.",
    )
    username: Annotated[str, StringConstraints(pattern=DB_USERNAME)] = Field(
        "dbadmin", description="Master user; RDS keeps its password in Secrets Manager and rotates it."
    )
    backup_retention_days: int = Field(
        7, ge=0, le=35, alias="backupRetentionDays", description="Days of automated backups, 0 to 35."
    )
    deletion_protection: bool = Field(
        True,
        alias="deletionProtection",
        description="RDS refuses to delete the instance; set false (and let it reach AWS) before removing it.",
    )

    @field_validator("engine_version", mode="before")
    @classmethod
    def _quoted(cls, value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            raise ValueError(f'expected the version as a quoted string such as "17" or "8.4", got the number {value}')
        return value

    @field_validator("username")
    @classmethod
    def _not_reserved(cls, value: str) -> str:
        if value in RESERVED_DB_USERS:
            raise ValueError(f"{value!r} is a user RDS keeps for itself ({', '.join(RESERVED_DB_USERS)})")
        return value

    @model_validator(mode="after")
    def _fits(self) -> Database:
        if self.max_allocated_storage is not None and self.max_allocated_storage * 10 < self.allocated_storage * 11:
            raise ValueError(
                f"maxAllocatedStorage must be at least 10% above allocatedStorage ({self.allocated_storage}), got "
                f"{self.max_allocated_storage}: RDS refuses less"
            )
        if self.database_name is None and not re.fullmatch(DATABASE_NAME, self.db_name):
            raise ValueError(
                f"the database would be named {self.db_name!r} after the entry, which the engines refuse (a letter, "
                "then letters, digits or '_'); set databaseName"
            )
        return self

    @property
    def db_name(self) -> str:
        """The database made with the instance."""
        return self.database_name or self.name.replace("-", "_")


def _unique_names(kind: str, items: list[Any]) -> list[Any]:
    twice = repeated([item.name for item in items])
    if twice:
        raise ValueError(f"{kind} names must be unique within the app, {', '.join(map(repr, twice))} repeated")
    return items


class AwsNeeds(Model):
    """AWS resources the app needs; its pods get an IAM role (EKS Pod Identity) with access to exactly these."""

    tables: list[Table] = Field(default_factory=list, description="DynamoDB tables.")
    queues: list[Queue] = Field(default_factory=list, description="SQS queues.")
    buckets: list[Bucket] = Field(default_factory=list, description="S3 buckets.")
    databases: list[Database] = Field(
        default_factory=list, description="RDS databases, made by the hub in the cluster's VPC (see AWS needs)."
    )
    path: Annotated[str, StringConstraints(pattern=RELATIVE_PATH)] | None = Field(
        None,
        description="A folder of the app's repository with more AppTable, AppQueue and AppBucket objects, which the "
        "hub applies for each of the app's clusters as the app (see Apps and tenants).",
    )

    @field_validator("tables", "queues", "buckets", "databases")
    @classmethod
    def _unique(cls, value: list[Any]) -> list[Any]:
        return _unique_names("resource", value)

    @field_validator("path")
    @classmethod
    def _inside(cls, value: str | None) -> str | None:
        if value is not None and ".." in value.split("/"):
            raise ValueError(f"must stay inside the repository (no '..' segments), got {show(value)}")
        return value

    @property
    def empty(self) -> bool:
        """True when the app needs nothing from AWS (and gets no IAM role)."""
        return not (self.tables or self.queues or self.buckets or self.databases or self.path)
