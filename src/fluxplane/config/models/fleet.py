"""The fleet as a whole: its repositories, Flux defaults, accounts, teams and AWS data, the two kinds of
definition file, and the merged ``Fleet``."""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import Field, StringConstraints, field_validator

from fluxplane.config.models.clusters import ClusterNetwork, ManagementCluster, WorkloadCluster
from fluxplane.config.models.fields import (
    GIT_BRANCH,
    GIT_URL,
    OWNER,
    RELATIVE_PATH,
    AvailabilityZone,
    AwsRegion,
    DnsLabel,
    Duration,
    InstanceType,
    KubernetesVersion,
    Model,
    quoted_version,
    repeated,
)

#: The ClusterProviderConfig of the hub's own account: every AWS resource's unless its cluster names an account.
HUB_PROVIDER_CONFIG = "default"
ACCOUNT_ID = r"^[0-9]{12}$"
ROLE_NAME = r"^[A-Za-z0-9+=,.@_-]{1,64}$"


class Repository(Model):
    """A Git repository Flux reads. dist/<key>/ is its content, found in the repository at ``path``."""

    url: Annotated[str, StringConstraints(pattern=GIT_URL)] = Field(
        description="Clone URL, ssh:// or https:// (Flux GitRepository spec.url)."
    )
    branch: Annotated[str, StringConstraints(pattern=GIT_BRANCH, max_length=255)] = Field(
        "main", description="Branch Flux follows."
    )
    secret_ref: DnsLabel | None = Field(
        "flux-system",
        alias="secretRef",
        description="Secret in flux-system holding the Git credentials (created at bootstrap); "
        "null for a public repository.",
    )
    path: Annotated[str, StringConstraints(pattern=RELATIVE_PATH)] | None = Field(
        None,
        description="Folder inside the repository that holds this dist/ folder; "
        "default `dist/<key>` (the fleet repository itself).",
    )

    @field_validator("path")
    @classmethod
    def _no_parent_segments(cls, value: str | None) -> str | None:
        if value is not None and ".." in value.split("/"):
            raise ValueError(f"must stay inside the repository (no '..' segments), got {json.dumps(value)}")
        return value


class Repositories(Model):
    """The Git repositories of the fleet."""

    platform: Repository = Field(
        description="The platform repository (the seeds' gitops-system): cluster entry points and the add-on catalogue."
    )
    workloads: Repository | None = Field(
        None,
        description="The workloads repository (the seeds' gitops-workloads): one tenant per app and cluster; "
        "default the platform repository, with its content at `dist/workloads`.",
    )


class FluxSettings(Model):
    """Defaults for every Flux object fluxplane writes."""

    interval: Duration = Field("10m", description="How often Flux reconciles sources and Kustomizations.")
    retry_interval: Duration = Field("2m", alias="retryInterval", description="Retry interval after a failure.")
    timeout: Duration = Field("5m", description="How long a Kustomization waits for its health checks.")
    version: Annotated[str, StringConstraints(pattern=r"^2\.[0-9]+$")] = Field(
        "2.9",
        description='Flux minor version on the hub, e.g. "2.9" (quoted); keyless `hubAccess` needs 2.7 or newer.',
    )
    sparse_checkout: bool = Field(
        True,
        alias="sparseCheckout",
        description="Each workload cluster's GitRepository checks out only the folders its Kustomizations read "
        "(its own cluster folder and the shared catalogue), not every other cluster's.",
    )


class SealingKey(Model):
    """Where workload clusters fetch the fleet's Sealed Secrets key pair from (AWS Secrets Manager)."""

    secret_name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9/_+=.@-]{1,512}$")] = Field(
        "fluxplane/sealing-key",
        alias="secretName",
        description="Secrets Manager secret holding the key pair as JSON properties `tls.crt` and `tls.key`.",
    )
    region: AwsRegion | None = Field(
        None, description="Region of that secret; default the management cluster's region."
    )


class Account(Model):
    """An AWS account workload clusters live in, which the hub's Crossplane reaches by assuming a role there."""

    id: Annotated[str, StringConstraints(pattern=ACCOUNT_ID)] = Field(
        description='The 12-digit account id, quoted ("012345678912"): unquoted, YAML reads a number.'
    )
    role_name: Annotated[str, StringConstraints(pattern=ROLE_NAME)] = Field(
        "fluxplane-crossplane",
        alias="roleName",
        description="The IAM role in that account the hub's AWS providers assume; it trusts the providers' role "
        "(see Accounts).",
    )
    external_id: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9+=,.@:/_-]{2,1224}$")] | None = Field(
        None, alias="externalId", description="The external ID the role's trust policy asks for, if any."
    )

    @field_validator("id", mode="before")
    @classmethod
    def _quoted_id(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            raise ValueError(
                f"an account id is a string of 12 digits in quotes; unquoted, YAML reads the number {value} (an id "
                "starting with 0 loses it, or is even read as an octal number)"
            )
        return value


class Teams(Model):
    """Who reviews what: the owners CODEOWNERS (dist/CODEOWNERS) names for the fleet's folders."""

    platform: Annotated[str, StringConstraints(pattern=OWNER)] | None = Field(
        None, description="Owns the platform: the definition, the catalogue, dist/platform/ (e.g. @org/platform)."
    )
    governance: Annotated[str, StringConstraints(pattern=OWNER)] | None = Field(
        None,
        description="Approves onboarding (dist/workloads/) and, alone, privilege: environments/apps/, every "
        "tenant's tenant.yaml and dist/platform/cloud/ (e.g. @org/governance); default the platform team.",
    )


class AwsData(Model):
    """AWS facts newer than fluxplane's data (instance types, regions, Kubernetes versions), accepted as given."""

    instance_types: list[InstanceType] = Field(
        default_factory=list,
        alias="instanceTypes",
        description="EC2 instance types to accept besides fluxplane's list, e.g. a type launched since.",
    )
    regions: dict[AwsRegion, Annotated[list[AvailabilityZone], Field(min_length=2)]] = Field(
        default_factory=dict,
        description="Availability zone names by region, in the order clusters use them: a new region, or your "
        "account's zones where they differ from fluxplane's list for that region (which they replace).",
    )
    kubernetes_versions: list[KubernetesVersion] = Field(
        default_factory=list,
        alias="kubernetesVersions",
        description='EKS Kubernetes minor versions to accept besides fluxplane\'s calendar, e.g. "1.38" (quoted).',
    )

    @field_validator("kubernetes_versions", mode="before")
    @classmethod
    def _quoted_versions(cls, value: Any) -> Any:
        if isinstance(value, list):
            for item in value:
                quoted_version(item)
        return value

    @field_validator("instance_types", "kubernetes_versions")
    @classmethod
    def _no_repeats(cls, value: list[str]) -> list[str]:
        repeated = sorted({item for item in value if value.count(item) > 1})
        if repeated:
            raise ValueError(f"each entry once, {', '.join(json.dumps(item) for item in repeated)} repeated")
        return value

    @field_validator("regions")
    @classmethod
    def _zones_of_their_region(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for region, zones in value.items():
            strangers = [zone for zone in zones if zone[:-1] != region]
            if strangers:
                raise ValueError(
                    f"zones of {region} are named {region} and a letter ({region}a, {region}b, ...), "
                    f"got {', '.join(json.dumps(zone) for zone in strangers)}"
                )
            repeated = sorted({zone for zone in zones if zones.count(zone) > 1})
            if repeated:
                raise ValueError(
                    f"zones of {region}: each zone once, {', '.join(json.dumps(zone) for zone in repeated)} repeated"
                )
        return value


class BaseFile(Model):
    """What every environment shares."""

    repositories: Repositories = Field(description="The fleet's Git repositories: `platform` (required).")
    flux: FluxSettings = Field(default_factory=FluxSettings, description="Defaults for the Flux objects written.")
    management: ManagementCluster = Field(description="The management (hub) cluster.")
    cluster_network: ClusterNetwork = Field(
        default_factory=ClusterNetwork, alias="clusterNetwork", description="VPC address pool for workload clusters."
    )
    cluster_defaults: dict[str, Any] = Field(
        default_factory=dict,
        alias="clusterDefaults",
        description="Values every workload cluster starts from (any cluster field).",
    )
    packs: dict[str, Any] = Field(default_factory=dict, description="Packs enabled on every cluster.")
    sealing_key: SealingKey = Field(
        default_factory=SealingKey,
        alias="sealingKey",
        description="The Sealed Secrets key pair every workload cluster fetches at bootstrap.",
    )
    teams: Teams = Field(default_factory=Teams, description="Code owners of the fleet's folders (dist/CODEOWNERS).")
    accounts: dict[DnsLabel, Account] = Field(
        default_factory=dict,
        description="AWS accounts besides the hub's, by name, that clusters name in `account` (see Accounts).",
    )
    aws_data: AwsData = Field(
        default_factory=AwsData,
        alias="awsData",
        description="AWS facts newer than fluxplane's data: instance types, regions and their zones, Kubernetes "
        "versions (see AWS data).",
    )

    @field_validator("accounts")
    @classmethod
    def _accounts(cls, value: dict[str, Account]) -> dict[str, Account]:
        if HUB_PROVIDER_CONFIG in value:
            raise ValueError(
                f"{HUB_PROVIDER_CONFIG!r} is the hub's own account's provider config; name the account otherwise"
            )
        twice = repeated([account.id for account in value.values()])
        if twice:
            raise ValueError(f"each account once, id {', '.join(map(repr, twice))} named twice")
        return value


class EnvironmentFile(Model):
    """An environment's clusters and its changes to the base; the file name is the environment's name."""

    cluster_defaults: dict[str, Any] = Field(
        default_factory=dict,
        alias="clusterDefaults",
        description="Merged over the base's clusterDefaults for this environment's clusters.",
    )
    packs: dict[str, Any] = Field(
        default_factory=dict, description="Merged over the base's packs for this environment's clusters."
    )
    clusters: list[dict[str, Any]] = Field(
        default_factory=list, description="The environment's workload clusters (see Workload cluster)."
    )


class Environment(Model):
    """One environment after merging: its name, its packs and its workload clusters."""

    name: DnsLabel
    file: str
    packs: dict[str, Any]
    clusters: tuple[WorkloadCluster, ...]


class Fleet(Model):
    """The whole fleet: repositories, the management cluster and every environment."""

    repositories: Repositories
    flux: FluxSettings
    management: ManagementCluster
    cluster_network: ClusterNetwork = Field(default_factory=ClusterNetwork)
    packs: dict[str, Any] = Field(default_factory=dict, description="The base file's packs section.")
    environments: tuple[Environment, ...]
    sealing_key: SealingKey = Field(default_factory=SealingKey)
    teams: Teams = Field(default_factory=Teams)
    accounts: dict[str, Account] = Field(default_factory=dict)
    aws_data: AwsData = Field(default_factory=AwsData)

    @property
    def clusters(self) -> tuple[WorkloadCluster, ...]:
        """Every workload cluster, environment by environment, in definition order."""
        return tuple(cluster for env in self.environments for cluster in env.clusters)
