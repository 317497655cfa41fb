"""AppDatabase (fluxplane.kinds.app_database): its XRD entry, what it composes, and a render next to its cluster.

Crossplane is not run: the composed bases and patch targets are checked against the upstream CRDs in
``../shared/crds``, the transforms are run by fluxplane's port of function-patch-and-transform, and a whole
hub namespace (the cluster's EKSCluster, the app's AppIdentity, an AppDatabase) is rendered and checked by
``fluxplane.validate.compose``, selectors included.
"""

from __future__ import annotations

import copy
import json
import typing
from collections.abc import Iterator
from functools import cache
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
import yaml

from fluxplane.config import apps
from fluxplane.config.models import SealingKey, WorkloadCluster
from fluxplane.constructs import Manifest, Root
from fluxplane.constructs.composite_resource_definition import CompositeResourceDefinition
from fluxplane.constructs.composition import Composition
from fluxplane.kinds import APP_KINDS, PLURALS, REQUESTABLE
from fluxplane.kinds import app_database as db
from fluxplane.kinds import eks_api as eks
from fluxplane.kinds.app import GROUP, VERSION
from fluxplane.kinds.eks_cluster import EKSCluster
from fluxplane.validate.compose import (
    ComposeReport,
    FunctionPipeline,
    Render,
    read_resources,
    render,
    render_compositions,
)
from fluxplane.validate.compose.checks import OBSERVED
from fluxplane.validate.compose.fieldpath import Unknown
from fluxplane.validate.compose.transforms import combine, resolve_all
from fluxplane.validate.compose.xr import defaulted
from fluxplane.validate.schemas import CoreSchemas, CrdCorpus
from fluxplane.validate.tree import Document
from tests.conftest import CRDS
from tests.support.compositions import segments

needs_crds = pytest.mark.skipif(
    not CRDS.is_dir(), reason=f"{CRDS} is missing: the composed resources cannot be checked against the upstream CRDs"
)

CLUSTER = "staging-usw2"
IDENTIFIER = "staging-usw2-orders-main"
INSTANCE_ARN = f"arn:aws:rds:us-west-2:111122223333:db:{IDENTIFIER}"
SECRET_ARN = "arn:aws:secretsmanager:us-west-2:111122223333:secret:rds!db-0a1b2c3d-AbCdEf"
ESO_ROLE = "arn:aws:iam::111122223333:role/staging-usw2-x7k2p"
_PATCH_SETS: list[dict[str, Any]] = eks.PATCH_SETS
#: Where each patch set writes (fluxplane.kinds.eks_api.PATCH_SETS).
PATCH_SET_TARGETS = {
    patch_set["name"]: [patch["toFieldPath"] for patch in patch_set["patches"]] for patch_set in _PATCH_SETS
}
MANIFEST = "spec.forProvider.manifest"


def resources() -> dict[str, dict[str, Any]]:
    return {resource["name"]: resource for resource in db.composed()}


def patches_to(resource: dict[str, Any], target: str) -> list[dict[str, Any]]:
    return [patch for patch in resource["patches"] if patch.get("toFieldPath") == target]


def only_patch(resource: str, target: str) -> dict[str, Any]:
    (patch,) = patches_to(resources()[resource], target)
    return patch


def targets(resource: dict[str, Any]) -> Iterator[str]:
    """Every path a resource's patches write in the composed resource, patch sets expanded."""
    for patch in resource["patches"]:
        if patch["type"] == "PatchSet":
            yield from PATCH_SET_TARGETS[patch["patchSetName"]]
        elif patch["type"] != "ToCompositeFieldPath":
            yield patch["toFieldPath"]


# -- the CRDs ------------------------------------------------------------------------------------------


@cache
def crds() -> dict[tuple[str, str], tuple[str, dict[str, Any]]]:
    """(apiVersion, kind) -> (plural, openAPIV3Schema) of every served version of every CRD in ../shared/crds."""
    found: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
    for path in sorted(CRDS.rglob("*.yaml")):
        for crd in yaml.safe_load_all(path.read_text()):
            if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
                continue
            names = crd["spec"]["names"]
            for version in crd["spec"]["versions"]:
                if version.get("served"):
                    key = (f"{crd['spec']['group']}/{version['name']}", names["kind"])
                    found[key] = (names["plural"], version["schema"]["openAPIV3Schema"])
    return found


def crd_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    return {key: schema for key, (_, schema) in crds().items()}


def schema_at(schema: dict[str, Any], path: str) -> dict[str, Any] | None:
    """The schema node ``path`` leads to, through properties, items and string maps; a free-form object (an
    Object's manifest) holds anything; None when the schema has no such field."""
    node = schema
    for segment in segments(path):
        if node.get("x-kubernetes-preserve-unknown-fields"):
            return node
        if isinstance(segment, int):
            if "items" not in node:
                return None
            node = node["items"]
        elif segment in node.get("properties", {}):
            node = node["properties"][segment]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        else:
            return None
    return node


@needs_crds
def test_the_schema_walk_finds_fields_and_refuses_misspelt_ones() -> None:
    # GIVEN the Instance CRD WHEN fields are looked up THEN real ones are found and misspelt ones are not
    instance = crd_schemas()[("rds.aws.m.upbound.io/v1beta1", "Instance")]
    assert schema_at(instance, "spec.forProvider.manageMasterUserPassword") == {
        "description": "Set to true to allow RDS to manage the master user password in Secrets Manager. Cannot be set "
        "if password or password_wo is provided.",
        "type": "boolean",
    }
    assert schema_at(instance, "spec.forProvider.manageMasterUserPasword") is None
    assert schema_at(instance, "spec.forProvider.name") is None
    assert schema_at(instance, "spec.forProvider.tags.Name") == {"type": "string"}


@needs_crds
def test_every_composed_base_is_a_kind_its_crds_serve() -> None:
    # GIVEN the composed resources WHEN their apiVersion and kind are looked up THEN a served CRD version has them
    kinds = {(resource["base"]["apiVersion"], resource["base"]["kind"]) for resource in db.composed()}
    assert kinds == {
        ("rds.aws.m.upbound.io/v1beta1", "SubnetGroup"),
        ("rds.aws.m.upbound.io/v1beta1", "Instance"),
        ("ec2.aws.m.upbound.io/v1beta1", "SecurityGroup"),
        ("ec2.aws.m.upbound.io/v1beta1", "SecurityGroupIngressRule"),
        ("iam.aws.m.upbound.io/v1beta1", "Role"),
        ("iam.aws.m.upbound.io/v1beta1", "RolePolicy"),
        ("kubernetes.m.crossplane.io/v1alpha1", "Object"),
    }
    assert kinds <= set(crd_schemas())


@needs_crds
def test_every_field_set_or_patched_is_in_the_crd() -> None:
    checked = 0
    for name, resource in resources().items():
        schema = crd_schemas()[(resource["base"]["apiVersion"], resource["base"]["kind"])]
        spec = schema["properties"]["spec"]
        # THEN every forProvider key of the base is a forProvider field of the CRD
        for key in resource["base"]["spec"]["forProvider"]:
            assert key in spec["properties"]["forProvider"]["properties"], (name, key)
            checked += 1
        # AND every other spec key of the base is a spec field
        assert set(resource["base"]["spec"]) <= set(spec["properties"]), name
        # AND every path a patch writes exists (metadata is Kubernetes', not the CRD's)
        for target in targets(resource):
            if not target.startswith("metadata."):
                assert schema_at(schema, target) is not None, (name, target)
                checked += 1
        # AND every status a patch reads is in the CRD's status
        for patch in resource["patches"]:
            if patch["type"] == "ToCompositeFieldPath":
                assert schema_at(schema, patch["fromFieldPath"]) is not None, (name, patch["fromFieldPath"])
    assert checked > 50


def test_aws_resources_use_the_composites_account_and_region() -> None:
    for name, resource in resources().items():
        used = {patch.get("patchSetName") for patch in resource["patches"] if patch["type"] == "PatchSet"}
        if resource["base"]["apiVersion"].endswith(".aws.m.upbound.io/v1beta1"):
            # THEN every AWS resource is made in the composite's account
            assert "account" in used, name
            # AND every regional one (IAM is global) in its region
            assert ("region" in used) == (not resource["base"]["apiVersion"].startswith("iam.")), name
        else:
            # AND the Objects reach the workload cluster through the hub namespace's ProviderConfig
            assert used == set(), name
            assert resource["base"]["spec"]["providerConfigRef"] == {"kind": "ProviderConfig", "name": "spoke"}


# -- the database ----------------------------------------------------------------------------------------


def test_the_instance_is_private_encrypted_backed_up_and_keeps_its_password_in_secrets_manager() -> None:
    instance = resources()["instance"]["base"]["spec"]["forProvider"]
    assert instance["manageMasterUserPassword"] is True
    assert instance["publiclyAccessible"] is False
    assert instance["storageEncrypted"] is True
    assert instance["skipFinalSnapshot"] is False
    assert instance["copyTagsToSnapshot"] is True
    assert instance["autoMinorVersionUpgrade"] is True
    assert instance["applyImmediately"] is False
    # AND no password is set any other way
    assert not {"passwordSecretRef", "autoGeneratePassword", "passwordWoSecretRef"} & set(instance)
    # AND it runs in the composed subnet group and security group
    assert instance["dbSubnetGroupNameSelector"] == {"matchControllerRef": True}
    assert instance["vpcSecurityGroupIdSelector"] == {"matchControllerRef": True}


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("spec.identifier", "spec.forProvider.identifier"),
        ("spec.engine", "spec.forProvider.engine"),
        ("spec.engineVersion", "spec.forProvider.engineVersion"),
        ("spec.instanceClass", "spec.forProvider.instanceClass"),
        ("spec.allocatedStorage", "spec.forProvider.allocatedStorage"),
        ("spec.maxAllocatedStorage", "spec.forProvider.maxAllocatedStorage"),
        ("spec.multiAz", "spec.forProvider.multiAz"),
        ("spec.databaseName", "spec.forProvider.dbName"),
        ("spec.username", "spec.forProvider.username"),
        ("spec.backupRetentionDays", "spec.forProvider.backupRetentionPeriod"),
        ("spec.deletionProtection", "spec.forProvider.deletionProtection"),
    ],
)
def test_the_instance_takes_its_settings_from_the_composite(source: str, target: str) -> None:
    patch = only_patch("instance", target)
    assert (patch["type"], patch["fromFieldPath"]) == ("FromCompositeFieldPath", source)
    assert source.removeprefix("spec.") in db.SPEC[0]


def test_the_instance_is_named_by_its_identifier_not_its_external_name() -> None:
    # GIVEN the instance template THEN the identifier is a parameter: the provider's external name of an instance
    # is its resource id (db-...), which it writes itself once the instance exists
    instance = resources()["instance"]
    assert not patches_to(instance, "metadata.annotations[crossplane.io/external-name]")
    # AND the final snapshot is named after the identifier, by the same rules
    snapshot = only_patch("instance", "spec.forProvider.finalSnapshotIdentifier")
    assert snapshot["fromFieldPath"] == "spec.identifier"
    final = resolve_all(snapshot["transforms"], IDENTIFIER)
    assert final == f"{IDENTIFIER}-final"
    assert jsonschema.Draft7Validator({"pattern": db.DB_IDENTIFIER}).is_valid(final)


def test_the_instance_reports_its_endpoint_arn_and_secret() -> None:
    reported = {
        patch["toFieldPath"]: patch["fromFieldPath"]
        for patch in resources()["instance"]["patches"]
        if patch["type"] == "ToCompositeFieldPath"
    }
    assert reported == {
        "status.address": "status.atProvider.address",
        "status.port": "status.atProvider.port",
        "status.arn": "status.atProvider.arn",
        "status.accountId": "status.atProvider.arn",
        "status.secretArn": "status.atProvider.masterUserSecret[0].secretArn",
    }
    assert set(reported) <= {f"status.{key}" for key in db.SPEC[2]}


@needs_crds
def test_the_secret_arn_is_the_first_master_user_secret_of_the_crd() -> None:
    instance = crd_schemas()[("rds.aws.m.upbound.io/v1beta1", "Instance")]
    secrets = schema_at(instance, "status.atProvider.masterUserSecret")
    assert secrets is not None and secrets["type"] == "array"
    assert sorted(secrets["items"]["properties"]) == ["kmsKeyId", "secretArn", "secretStatus"]


@pytest.mark.parametrize(
    ("arn", "account"),
    [
        (INSTANCE_ARN, "111122223333"),
        ("arn:aws-us-gov:rds:us-gov-west-1:444455556666:db:prod-1-shop-main", "444455556666"),
    ],
)
def test_the_account_is_read_from_the_instances_arn(arn: str, account: str) -> None:
    (patch,) = [patch for patch in resources()["instance"]["patches"] if patch.get("toFieldPath") == "status.accountId"]
    assert resolve_all(patch["transforms"], arn) == account


# -- the engine's port -----------------------------------------------------------------------------------


def test_each_engine_has_its_port() -> None:
    assert db.ENGINE_PORTS == {"postgres": 5432, "mysql": 3306}
    assert db.SPEC[0]["engine"]["enum"] == ["postgres", "mysql"]


@pytest.mark.parametrize(
    ("resource", "target"),
    [
        ("ingress", "spec.forProvider.fromPort"),
        ("ingress", "spec.forProvider.toPort"),
        ("instance", "spec.forProvider.port"),
    ],
)
@pytest.mark.parametrize(("engine", "port"), [("postgres", 5432), ("mysql", 3306)])
def test_the_instance_and_the_security_group_use_the_engines_port(
    resource: str, target: str, engine: str, port: int
) -> None:
    patch = only_patch(resource, target)
    assert patch["fromFieldPath"] == "spec.engine"
    assert resolve_all(patch["transforms"], engine) == port


def test_the_security_group_admits_the_port_from_the_vpc_only() -> None:
    rule = resources()["ingress"]
    assert rule["base"]["spec"]["forProvider"]["ipProtocol"] == "tcp"
    assert rule["base"]["spec"]["forProvider"]["securityGroupIdSelector"] == {"matchControllerRef": True}
    assert only_patch("ingress", "spec.forProvider.cidrIpv4")["fromFieldPath"] == "spec.vpcCidr"


# -- the cluster's network -------------------------------------------------------------------------------


def test_the_subnet_group_and_security_group_select_the_clusters_network_by_label() -> None:
    # GIVEN the subnet group and the security group WHEN their selectors are read
    subnets = resources()["subnet-group"]
    selector = subnets["base"]["spec"]["forProvider"]["subnetIdSelector"]
    # THEN they select resources of another composite (the EKSCluster), not their own
    assert "matchControllerRef" not in selector
    assert selector["matchLabels"] == {"platform.fluxplane.io/tier": "private"}
    # AND the composite label Crossplane gives the EKSCluster's resources names the cluster
    for resource, field in (("subnet-group", "subnetIdSelector"), ("security-group", "vpcIdSelector")):
        patch = only_patch(resource, f"spec.forProvider.{field}.matchLabels[crossplane.io/composite]")
        assert patch["fromFieldPath"] == "spec.clusterName"
        assert patch["policy"] == {"fromFieldPath": "Required"}


# -- the XRD ---------------------------------------------------------------------------------------------


def validates(schema: dict[str, Any], value: Any) -> bool:
    return bool(jsonschema.Draft7Validator(schema).is_valid(value))


@pytest.mark.parametrize("identifier", [IDENTIFIER, "a", "a1-b2-c3", "a" * 63])
def test_the_identifier_pattern_accepts_rds_identifiers(identifier: str) -> None:
    assert validates(db.SPEC[0]["identifier"], identifier)


@pytest.mark.parametrize(
    "identifier",
    [
        "1abc",  # starts with a digit
        "a--b",  # two hyphens in a row
        "abc-",  # ends with a hyphen
        "a" * 64,  # too long
        "-abc",
        "Staging-usw2",  # RDS keeps identifiers in lower case
        "a_b",
        "",
    ],
)
def test_the_identifier_pattern_refuses_what_rds_refuses(identifier: str) -> None:
    assert not validates(db.SPEC[0]["identifier"], identifier)


@pytest.mark.parametrize(
    ("field", "good", "bad"),
    [
        ("instanceClass", "db.t4g.micro", "t4g.micro"),
        ("engineVersion", "17", "17.x"),
        ("engineVersion", "8.4", "v8"),
        ("databaseName", "orders", "1orders"),
        ("databaseName", "orders_v2", "orders-v2"),
        ("username", "dbadmin", "a" * 17),
        ("vpcCidr", "10.198.0.0/16", "10.198.0.0"),
        ("allocatedStorage", 20, 19),
        ("maxAllocatedStorage", 100, 21),
        ("backupRetentionDays", 35, 36),
        ("engine", "mysql", "mariadb"),
        ("appNamespace", "orders", "Orders"),
    ],
)
def test_the_xrd_fields_hold_rds_bounds(field: str, good: Any, bad: Any) -> None:
    assert validates(db.SPEC[0][field], good)
    assert not validates(db.SPEC[0][field], bad)


def test_the_defaults_are_small_safe_and_valid() -> None:
    properties = db.SPEC[0]
    defaults = {key: value["default"] for key, value in properties.items() if "default" in value}
    assert defaults == {
        "instanceClass": "db.t4g.micro",
        "allocatedStorage": 20,
        "multiAz": False,
        "username": "dbadmin",
        "backupRetentionDays": 7,
        "deletionProtection": True,
    }
    for key, value in defaults.items():
        assert validates(properties[key], value), key


def test_the_spec_has_the_form_of_the_other_kinds() -> None:
    properties, required, status = db.SPEC
    # THEN region, account and tags are left to app-compositions' common fields
    assert not {"region", "providerConfigName", "tags"} & set(properties)
    assert "region" in required
    assert set(required) - {"region"} <= set(properties)
    assert {"address", "port", "arn", "secretArn"} <= set(status)
    # AND every field is camelCase and described
    for key, value in properties.items():
        assert key[0].islower() and "_" not in key and "-" not in key, key
        assert value.get("description"), key


def test_app_compositions_registers_it_for_the_hub_only() -> None:
    declared = APP_KINDS[db.KIND]
    assert PLURALS[db.KIND] == db.PLURAL
    assert declared.spec is db.SPEC and declared.composed is db.composed
    assert declared.services == db.SERVICES
    # THEN no app requests one from its repository, and no workload cluster composes one: its credentials go to a
    # namespace a request would choose, and it needs IAM and the cluster's VPC, which are the hub's
    assert db.KIND not in REQUESTABLE and declared.spoke_composed is None


def test_the_kinds_props_hold_the_xrds_patterns() -> None:
    properties = db.SPEC[0]
    props = db.AppDatabaseProps.model_json_schema(by_alias=True)["properties"]
    for field in ("identifier", "databaseName", "username", "instanceClass", "engineVersion"):
        assert props[field]["pattern"] == properties[field]["pattern"], field
    assert props["identifier"]["maxLength"] == properties["identifier"]["maxLength"]
    # AND the definition's loader checks by the same rules
    assert (apps.DB_IDENTIFIER, apps.DB_IDENTIFIER_MAX_LENGTH) == (db.DB_IDENTIFIER, db.DB_IDENTIFIER_MAX_LENGTH)
    assert (apps.DATABASE_NAME, apps.DB_USERNAME) == (db.DATABASE_NAME, db.DB_USERNAME)
    assert (apps.DB_INSTANCE_CLASS, apps.DB_ENGINE_VERSION) == (db.DB_INSTANCE_CLASS, db.DB_ENGINE_VERSION)
    assert set(typing.get_args(apps.Database.model_fields["engine"].annotation)) == set(db.ENGINE_PORTS)


def test_app_compositions_builds_the_xrd_and_composition_from_it() -> None:
    xrd = APP_KINDS[db.KIND].xrd_props().dump()
    assert xrd["name"] == "appdatabases.platform.fluxplane.io"
    spec = xrd["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["required"] == db.SPEC[1]
    assert {"region", "providerConfigName", "tags"} <= set(spec["properties"])
    resources_input = APP_KINDS[db.KIND].composition_props().dump()["pipeline"][0]["input"]
    assert [resource["name"] for resource in resources_input["resources"]] == list(resources())
    assert read_resources(resources_input, ("input",)).problems == []


@needs_crds
def test_its_services_and_managed_resources_are_those_it_composes() -> None:
    aws = [resource["base"] for resource in db.composed() if ".aws.m.upbound.io/" in resource["base"]["apiVersion"]]
    assert {base["apiVersion"].split(".", 1)[0] for base in aws} == set(db.SERVICES)
    composed = {
        f"{base['apiVersion'].split('.', 1)[0]}_{crds()[(base['apiVersion'], base['kind'])][0]}" for base in aws
    }
    assert composed == set(db.MANAGED_RESOURCES)


# -- the credentials on the workload cluster ---------------------------------------------------------------


def statement(policy: str) -> dict[str, Any]:
    (only,) = json.loads(policy)["Statement"]
    return dict(only)


def test_the_reader_role_trusts_the_clusters_external_secrets_role_in_the_databases_account_only() -> None:
    trust = only_patch("secret-reader", "spec.forProvider.assumeRolePolicy")
    assert [item["fromFieldPath"] for item in trust["combine"]["variables"]] == [
        "status.externalSecretsRoleArn",
        "status.accountId",
    ]
    assert trust["policy"] == {"fromFieldPath": "Required"}
    assert statement(combine(trust["combine"], [ESO_ROLE, "111122223333"])) == {
        "Effect": "Allow",
        "Principal": {"AWS": ESO_ROLE},
        "Action": ["sts:AssumeRole", "sts:TagSession"],
        "Condition": {"StringEquals": {"aws:PrincipalAccount": "111122223333"}},
    }
    # AND the controller's role is the one its service account on the cluster names (IRSA)
    observed = resources()["external-secrets-account"]["base"]["spec"]
    assert observed["managementPolicies"] == ["Observe"]
    assert observed["forProvider"]["manifest"] == {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "external-secrets", "namespace": "external-secrets"},
    }


@pytest.mark.parametrize("resource", ["secret-reader-policy", "access"])
def test_the_reader_role_and_the_apps_role_may_read_that_one_secret(resource: str) -> None:
    patch = only_patch(resource, "spec.forProvider.policy")
    assert patch["fromFieldPath"] == "status.secretArn"
    assert statement(resolve_all(patch["transforms"], SECRET_ARN)) == {
        "Effect": "Allow",
        "Action": ["secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue"],
        "Resource": [SECRET_ARN],
    }


def test_the_policies_go_on_the_reader_role_and_the_apps_role() -> None:
    reader = resources()["secret-reader-policy"]["base"]["spec"]["forProvider"]["roleSelector"]
    assert reader == {"matchControllerRef": True, "matchLabels": {"platform.fluxplane.io/role": "secret-reader"}}
    assert resources()["secret-reader"]["base"]["metadata"]["labels"] == {"platform.fluxplane.io/role": "secret-reader"}
    app = only_patch("access", f"spec.forProvider.roleSelector.matchLabels[{db.APP_ROLE_LABEL}]")
    assert app["fromFieldPath"] == "spec.app"


def test_no_field_of_the_composite_chooses_the_role_or_the_secret_the_store_reads() -> None:
    # GIVEN the Objects on the workload cluster WHEN their patches are read THEN the store's role and the remote
    # secret come from what this composite composed (its status), never from its spec: an app cannot point its
    # store at another app's role or secret
    chosen = {
        "secret-store": (f"{MANIFEST}.spec.provider.aws.role",),
        "external-secret": (f"{MANIFEST}.spec.data[0].remoteRef.key", f"{MANIFEST}.spec.data[1].remoteRef.key"),
    }
    for resource, paths in chosen.items():
        for path in paths:
            patch = only_patch(resource, path)
            assert patch["fromFieldPath"] in ("status.readerRoleArn", "status.secretArn"), (resource, path)
            assert patch["policy"] == {"fromFieldPath": "Required"}
    # AND the store authenticates as the controller, then assumes the reader role (no auth of a tenant's choosing)
    store = resources()["secret-store"]["base"]["spec"]["forProvider"]["manifest"]
    assert store["spec"]["provider"] == {"aws": {"service": "SecretsManager"}}


def test_the_secret_holds_what_an_app_needs_to_connect() -> None:
    secret = resources()["external-secret"]["base"]["spec"]
    target = secret["forProvider"]["manifest"]["spec"]["target"]
    written = {
        path.removeprefix(f"{MANIFEST}.spec.target.template.data.")
        for path in targets(resources()["external-secret"])
        if path.startswith(f"{MANIFEST}.spec.target.template.data.")
    }
    assert set(target["template"]["data"]) | written == set(db.SECRET_KEYS)
    assert target["creationPolicy"] == "Owner"
    assert secret["readiness"] == {"policy": "DeriveFromObject"}
    port = only_patch("external-secret", f"{MANIFEST}.spec.target.template.data.port")
    assert resolve_all(port["transforms"], 5432) == "5432"


# -- a render of a hub namespace -----------------------------------------------------------------------------


def app_database(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": db.KIND,
        "metadata": {"name": "orders-main", "namespace": CLUSTER},
        "spec": {
            "app": "orders",
            "appNamespace": "orders",
            "clusterName": CLUSTER,
            "vpcCidr": "10.198.0.0/16",
            "identifier": IDENTIFIER,
            "engine": "postgres",
            "engineVersion": "17",
            "databaseName": "orders",
            "region": "us-west-2",
            "tags": {"app": "orders"},
            **spec,
        },
    }


def hub_namespace(database: dict[str, Any]) -> list[Document]:
    """The cluster's EKSCluster, the app's AppIdentity and ``database``, with the XRDs and Compositions."""
    cluster = WorkloadCluster.model_validate(
        {"name": CLUSTER, "region": "us-west-2", "network": {"cidr": "10.198.0.0/16", "availabilityZones": 3}}
    )
    manifest = Manifest(Root(), "m", path="m.yaml")
    CompositeResourceDefinition(manifest, "xrd-eks", eks.xrd_props())
    Composition(manifest, "eks", eks.composition_props(eks.shape_of(cluster)))
    EKSCluster(manifest, CLUSTER, eks.composite_props(cluster, SealingKey()))
    for kind in ("AppIdentity", db.KIND):
        CompositeResourceDefinition(manifest, f"xrd-{kind}", APP_KINDS[kind].xrd_props())
        Composition(manifest, kind, APP_KINDS[kind].composition_props())
    identity = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "AppIdentity",
        "metadata": {"name": "orders", "namespace": CLUSTER},
        "spec": {
            "region": "us-west-2",
            "clusterName": CLUSTER,
            "serviceAccountNamespace": "orders",
            "serviceAccount": "orders",
        },
    }
    bodies = [*manifest.documents(), identity, database]
    return [Document("hub.yaml", index, copy.deepcopy(body)) for index, body in enumerate(bodies, start=1)]


def xrd_schema() -> dict[str, Any]:
    schema: dict[str, Any] = APP_KINDS[db.KIND].xrd_props().dump()["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def render_one(composition: dict[str, Any], composite: dict[str, Any], schema: dict[str, Any]) -> Render:
    steps = [read_resources(composition["spec"]["pipeline"][0]["input"], ("input",)), None]
    return render(FunctionPipeline(steps), defaulted(composite, schema))


def observed(value: Any) -> Any:
    """``value`` with what only the cluster knows as ``${observed}``, as validation sees it."""
    if isinstance(value, Unknown):
        return OBSERVED
    if isinstance(value, dict):
        return {key: observed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [observed(item) for item in value]
    return value


@pytest.fixture(scope="module")
def corpus() -> CrdCorpus:
    if not CRDS.is_dir():
        pytest.skip(f"{CRDS} is missing: the composed resources cannot be checked against the upstream CRDs")
    return CrdCorpus.from_dirs([CRDS])


def check(database: dict[str, Any], corpus: CrdCorpus) -> ComposeReport:
    return render_compositions(hub_namespace(database), corpus, CoreSchemas())


def test_a_database_renders_next_to_its_cluster_with_every_resource_valid_and_every_selector_resolved(
    corpus: CrdCorpus,
) -> None:
    # GIVEN a hub namespace with the cluster, the app's identity and its database WHEN rendered and checked
    report = check(app_database(), corpus)
    # THEN nothing is wrong: every XR valid, every composed resource valid against its CRD, every selector (the
    # cluster's private subnets and VPC, the app's role) selects something that exists
    assert report.findings == []
    assert report.xrs_checked == 3 and report.compositions_rendered == 3
    assert report.unchecked == {} and report.warning_lines() == []


def test_a_database_of_another_cluster_selects_no_network(corpus: CrdCorpus) -> None:
    # GIVEN a database naming a cluster that has no EKSCluster in the namespace WHEN checked
    report = check(app_database(clusterName="production-usw2"), corpus)
    # THEN its subnet group and security group select nothing
    selected = [finding.message.split(": ")[1].split(" in namespace")[0] for finding in report.findings]
    assert selected == [
        "spec.forProvider.subnetIdSelector selects no Subnet (ec2.aws.m.upbound.io)",
        "spec.forProvider.vpcIdSelector selects no VPC (ec2.aws.m.upbound.io)",
    ]


def test_the_xrd_refuses_a_bad_identifier(corpus: CrdCorpus) -> None:
    report = check(app_database(identifier="staging-usw2--orders"), corpus)
    assert [(finding.kind, finding.path) for finding in report.findings] == [(db.KIND, "spec.identifier")]


def test_the_subnet_group_selects_exactly_the_clusters_private_subnets() -> None:
    # GIVEN the cluster's EKSCluster rendered through its Composition
    documents = hub_namespace(app_database())
    eks_xr = next(document.body for document in documents if document.kind == "EKSCluster")
    composition = next(
        document.body
        for document in documents
        if document.name == eks_xr["spec"]["crossplane"]["compositionRef"]["name"]
    )
    rendered = render_one(composition, eks_xr, eks.xrd_schema())
    # WHEN the database's subnet selector is matched against what it composed
    database = render_one(next(d.body for d in documents if d.name == "appdatabase"), app_database(), xrd_schema())
    selector = database.composed["subnet-group"].body["spec"]["forProvider"]["subnetIdSelector"]["matchLabels"]
    subnets = [
        name
        for name, composed in rendered.composed.items()
        if composed.body["kind"] == "Subnet" and selector.items() <= composed.body["metadata"]["labels"].items()
    ]
    # THEN it selects the private subnet of every zone, and nothing else
    assert subnets == ["subnet-private-0", "subnet-private-1", "subnet-private-2"]
    vpc = database.composed["security-group"].body["spec"]["forProvider"]["vpcIdSelector"]["matchLabels"]
    assert [
        name
        for name, c in rendered.composed.items()
        if c.body["kind"] == "VPC" and vpc.items() <= c.body["metadata"]["labels"].items()
    ] == ["vpc"]


def test_the_store_and_the_external_secret_are_valid_external_secrets_objects(corpus: CrdCorpus) -> None:
    # GIVEN a database rendered to its fixed point
    documents = hub_namespace(app_database())
    composition = next(document.body for document in documents if document.name == "appdatabase")
    rendered = render_one(composition, app_database(), xrd_schema())
    assert rendered.failure is None and rendered.withheld == {}
    # WHEN the manifests the Objects write on the cluster are checked against External Secrets' CRDs
    for name, kind in (("secret-store", "SecretStore"), ("external-secret", "ExternalSecret")):
        manifest = observed(rendered.composed[name].body["spec"]["forProvider"]["manifest"])
        # THEN they are valid, in the app's namespace, named like the database
        assert corpus.check(Document("spoke.yaml", 1, manifest), "external-secrets.io", "v1", kind) == []
        assert manifest["metadata"] == {"name": "orders-main", "namespace": "orders"}
        # AND the check would see a wrong field
        wrong = copy.deepcopy(manifest)
        wrong["spec"]["provdier"] = {}
        assert corpus.check(Document("spoke.yaml", 1, wrong), "external-secrets.io", "v1", kind) != []
    external = observed(rendered.composed["external-secret"].body["spec"]["forProvider"]["manifest"])
    assert external["spec"]["secretStoreRef"] == {"kind": "SecretStore", "name": "orders-main"}
    assert external["spec"]["target"]["name"] == "orders-main"
