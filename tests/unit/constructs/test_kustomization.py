"""Flux Kustomization (kustomize.toolkit.fluxcd.io/v1) and its relationship verbs."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from fluxplane.constructs import (
    ConfigMap,
    CustomHealthCheck,
    DependsOn,
    HelmRelease,
    Kustomization,
    KustomizationProps,
    Manifest,
    Namespace,
    NamespacedObjectKindReference,
    Root,
    conditions_health,
)
from fluxplane.constructs.kustomization import SUBSTITUTED, escape_variables, escaped
from fluxplane.core.codec import dump_documents
from fluxplane.core.tree import substitute_text
from fluxplane.errors import ConstructError

SOURCE = {"kind": "GitRepository", "name": "flux-system"}


def manifest() -> Manifest:
    return Manifest(Root(), "m", path="sync.yaml")


def ks(scope: Manifest, construct_id: str = "apps", **props: Any) -> Kustomization:
    base: dict[str, Any] = {"name": construct_id, "path": f"./{construct_id}", "sourceRef": SOURCE}
    return Kustomization(scope, construct_id, {**base, **props})


# Rendering


def test_minimal_kustomization_has_defaults_in_upstream_order() -> None:
    # GIVEN / WHEN a Kustomization with only name, path and sourceRef
    doc = ks(manifest()).to_dict()

    # THEN it lives in flux-system, reconciles every 10m and prunes
    assert doc == {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "apps", "namespace": "flux-system"},
        "spec": {"interval": "10m", "path": "./apps", "sourceRef": SOURCE, "prune": True},
    }
    assert list(doc) == ["apiVersion", "kind", "metadata", "spec"]
    assert list(doc["spec"]) == ["interval", "path", "sourceRef", "prune"]


def test_labels_go_to_metadata_sorted_not_to_spec() -> None:
    # GIVEN labels given out of order
    doc = ks(manifest(), labels={"tier": "apps", "env": "prod"}).to_dict()

    # WHEN / THEN they are metadata labels, sorted, and absent from spec
    assert doc["metadata"] == {
        "name": "apps",
        "namespace": "flux-system",
        "labels": {"env": "prod", "tier": "apps"},
    }
    assert "labels" not in doc["spec"]


def test_every_field_is_written_under_its_upstream_name_in_declared_order() -> None:
    # GIVEN every spec field, given by Python names in reverse order
    doc = ks(
        manifest(),
        deletion_policy="Delete",
        target_namespace="apps",
        service_account_name="kustomize-controller",
        kube_config={"secret_ref": {"name": "hub-kubeconfig", "key": "value"}},
        components=["../components/ha"],
        patches=[{"patch": "x", "target": {"kind": "Deployment"}}],
        post_build={
            "substitute": {"cluster": "hub"},
            "substitute_from": [{"kind": "ConfigMap", "name": "vars"}],
        },
        health_check_exprs=[{"apiVersion": "x/v1", "kind": "X", "current": "true"}],
        health_checks=[{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "apps"}],
        depends_on=[{"name": "infra"}],
        force=False,
        wait=True,
        timeout="5m",
        retry_interval="1m",
        interval="30m",
    ).to_dict()

    # WHEN / THEN the spec is exact, keys camelCase, in the declared (upstream) order
    assert doc["spec"] == {
        "interval": "30m",
        "retryInterval": "1m",
        "timeout": "5m",
        "path": "./apps",
        "sourceRef": SOURCE,
        "prune": True,
        "wait": True,
        "force": False,
        "dependsOn": [{"name": "infra"}],
        "healthChecks": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "apps"}],
        "healthCheckExprs": [{"apiVersion": "x/v1", "kind": "X", "current": "true"}],
        "postBuild": {
            "substitute": {"cluster": "hub"},
            "substituteFrom": [{"kind": "ConfigMap", "name": "vars"}],
        },
        "patches": [{"patch": "x", "target": {"kind": "Deployment"}}],
        "components": ["../components/ha"],
        "kubeConfig": {"secretRef": {"name": "hub-kubeconfig", "key": "value"}},
        "serviceAccountName": "kustomize-controller",
        "targetNamespace": "apps",
        "deletionPolicy": "Delete",
    }
    assert list(doc["spec"]) == [
        "interval",
        "retryInterval",
        "timeout",
        "path",
        "sourceRef",
        "prune",
        "wait",
        "force",
        "dependsOn",
        "healthChecks",
        "healthCheckExprs",
        "postBuild",
        "patches",
        "components",
        "kubeConfig",
        "serviceAccountName",
        "targetNamespace",
        "deletionPolicy",
    ]


def test_prune_false_is_written() -> None:
    # GIVEN / WHEN / THEN prune is required by Flux, so False is written rather than dropped
    assert ks(manifest(), prune=False).to_dict()["spec"]["prune"] is False


def test_empty_relationship_lists_are_not_written() -> None:
    # GIVEN empty dependsOn, healthChecks and healthCheckExprs in props
    spec = ks(manifest(), depends_on=[], health_checks=[], health_check_exprs=[]).to_dict()["spec"]

    # WHEN / THEN no empty lists appear
    assert spec == {"interval": "10m", "path": "./apps", "sourceRef": SOURCE, "prune": True}


def test_props_instance_is_accepted() -> None:
    # GIVEN a validated props model
    props = KustomizationProps(name="apps", path="./apps", source_ref=SOURCE)

    # WHEN / THEN the construct keeps it
    assert Kustomization(manifest(), "apps", props).props is props


# Errors


@pytest.mark.parametrize("path", ["apps", "/apps", "./apps dir", ""])
def test_path_must_start_with_dot_slash_and_have_no_spaces(path: str) -> None:
    # GIVEN / WHEN / THEN a path Flux would not accept is refused, naming the field
    with pytest.raises(ConstructError, match=r"^root/m/apps: KustomizationProps\.path: string should match pattern"):
        ks(manifest(), path=path)


def test_unknown_field_is_rejected() -> None:
    # GIVEN / WHEN / THEN an invented field is refused
    with pytest.raises(
        ConstructError,
        match=r"^root/m/apps: KustomizationProps\.dependencies: extra inputs are not permitted$",
    ):
        ks(manifest(), dependencies=["infra"])


def test_bad_type_is_rejected() -> None:
    # GIVEN / WHEN / THEN a non-boolean prune is refused, with pydantic's reason
    with pytest.raises(
        ConstructError,
        match=r"^root/m/apps: KustomizationProps\.prune: input should be a valid boolean, unable to "
        r"interpret input$",
    ):
        ks(manifest(), prune="sometimes")


def test_every_bad_field_is_reported_at_once() -> None:
    # GIVEN props with three problems
    with pytest.raises(ConstructError) as caught:
        ks(manifest(), interval="often", wait="maybe", deletionPolicy="Keep")

    # WHEN / THEN all three are reported, one line each, under the names as written
    assert [line.split(": ")[1] for line in caught.value.problems] == [
        "KustomizationProps.interval",
        "KustomizationProps.wait",
        "KustomizationProps.deletionPolicy",
    ]


def test_source_kind_must_be_a_flux_source() -> None:
    # GIVEN / WHEN / THEN a sourceRef kind that is not a Flux source is refused, naming the field path
    with pytest.raises(ConstructError, match=r"^root/m/apps: KustomizationProps\.sourceRef\.kind: input should be"):
        ks(manifest(), sourceRef={"kind": "ConfigMap", "name": "x"})


def test_missing_source_ref_is_rejected() -> None:
    # GIVEN / WHEN / THEN a Kustomization without a source is refused
    with pytest.raises(ConstructError, match=r"^root/m/apps: KustomizationProps\.sourceRef: field required$"):
        Kustomization(manifest(), "apps", {"name": "apps", "path": "./apps"})


def test_name_must_be_a_dns_subdomain() -> None:
    # GIVEN / WHEN / THEN an upper-case name is refused
    with pytest.raises(ConstructError, match=r"^root/m/apps: KustomizationProps\.name: string should match pattern"):
        ks(manifest(), name="Apps")


def test_the_service_account_is_any_service_account_name() -> None:
    # GIVEN an account name longer than a DNS label (a ServiceAccount's name is a DNS-1123 subdomain)
    account = "a" * 63 + "-deployer"
    # WHEN it is impersonated THEN it is written as given
    assert ks(manifest(), serviceAccountName=account).to_dict()["spec"]["serviceAccountName"] == account
    # AND one that is no ServiceAccount name is refused
    with pytest.raises(ConstructError, match=r"KustomizationProps\.serviceAccountName: string should match pattern"):
        ks(manifest(), serviceAccountName="Deployer")


def test_duplicate_construct_id_is_rejected() -> None:
    # GIVEN a manifest with a Kustomization "apps"
    scope = manifest()
    ks(scope)

    # WHEN / THEN a second construct with the same id is refused
    with pytest.raises(ConstructError, match=r"^root/m: there is already a construct with id 'apps'$"):
        ks(scope, name="apps-2")


def test_helm_repository_is_not_a_kustomization_source() -> None:
    # GIVEN / WHEN / THEN a HelmRepository sourceRef is refused like the CRD does
    with pytest.raises(ConstructError, match=r"KustomizationProps\.sourceRef\.kind"):
        ks(manifest(), sourceRef={"kind": "HelmRepository", "name": "podinfo"})


def test_multi_line_inline_patch_is_rendered_as_a_literal_block() -> None:
    # GIVEN a Kustomization with a multi-line JSON 6902 patch
    doc = ks(manifest(), patches=[{"patch": "- op: remove\n  path: /spec/replicas\n"}]).to_dict()

    # WHEN it is rendered
    text = dump_documents([doc])

    # THEN the patch body is a "|" block
    assert text.endswith("  patches:\n  - patch: |\n      - op: remove\n        path: /spec/replicas\n")


# depends_on


def test_depends_on_same_namespace_kustomization_leaves_namespace_out() -> None:
    # GIVEN two Kustomizations in flux-system
    scope = manifest()
    infra, apps = ks(scope, "infra"), ks(scope, "apps")

    # WHEN apps depends on infra
    entry = apps.depends_on(infra)

    # THEN the entry names infra without a namespace, and it is written to spec.dependsOn
    assert entry == DependsOn(name="infra")
    assert apps.dependencies == (DependsOn(name="infra"),)
    assert apps.to_dict()["spec"]["dependsOn"] == [{"name": "infra"}]


def test_depends_on_other_namespace_kustomization_names_its_namespace() -> None:
    # GIVEN Kustomizations in different namespaces
    scope = manifest()
    infra = ks(scope, "infra", namespace="platform")
    apps = ks(scope, "apps")

    # WHEN apps depends on infra
    entry = apps.depends_on(infra)

    # THEN the entry carries infra's namespace
    assert entry == DependsOn(name="infra", namespace="platform")
    assert apps.to_dict()["spec"]["dependsOn"] == [{"name": "infra", "namespace": "platform"}]


def test_depends_on_by_name() -> None:
    # GIVEN a Kustomization
    apps = ks(manifest())

    # WHEN it depends on a name, with a readiness expression
    entry = apps.depends_on("cert-manager", ready_expr="dep.status.ready")

    # THEN the entry has the name and readyExpr, no namespace
    assert entry == DependsOn(name="cert-manager", ready_expr="dep.status.ready")
    assert apps.to_dict()["spec"]["dependsOn"] == [{"name": "cert-manager", "readyExpr": "dep.status.ready"}]


def test_depends_on_by_construct_and_by_name_are_the_same_entry() -> None:
    # GIVEN two Kustomizations in one namespace
    scope = manifest()
    infra, apps = ks(scope, "infra"), ks(scope, "apps")

    # WHEN the dependency is added by construct, by name, and by construct again
    apps.depends_on(infra)
    apps.depends_on("infra")
    apps.depends_on(infra)

    # THEN it is listed once
    assert apps.to_dict()["spec"]["dependsOn"] == [{"name": "infra"}]


def test_depends_on_keeps_order_and_appends_after_props_entries() -> None:
    # GIVEN a Kustomization that already depends on "crds" through props
    apps = ks(manifest(), depends_on=[{"name": "crds"}])

    # WHEN it gains dependencies on b, then a, then crds again
    apps.depends_on("b")
    apps.depends_on("a")
    apps.depends_on("crds")

    # THEN they are listed props first, then in the order added, without the duplicate
    assert [entry.name for entry in apps.dependencies] == ["crds", "b", "a"]


def test_depends_on_lands_in_declared_position_not_at_the_end() -> None:
    # GIVEN a Kustomization with fields declared after dependsOn (postBuild, targetNamespace)
    apps = ks(manifest(), post_build={"substitute": {"a": "b"}}, target_namespace="apps")

    # WHEN a dependency is added after construction
    apps.depends_on("infra")

    # THEN dependsOn sits at its upstream position, before postBuild
    assert list(apps.to_dict()["spec"]) == [
        "interval",
        "path",
        "sourceRef",
        "prune",
        "dependsOn",
        "postBuild",
        "targetNamespace",
    ]


def test_depends_on_does_not_change_props() -> None:
    # GIVEN a Kustomization without dependencies in props
    apps = ks(manifest())

    # WHEN one is added
    apps.depends_on("infra")

    # THEN the frozen props are unchanged
    assert apps.props.depends_on is None


# health checks


def test_add_health_check_from_a_namespaced_resource() -> None:
    # GIVEN a HelmRelease and a Kustomization that deploys it
    scope = manifest()
    release = HelmRelease(
        scope,
        "podinfo",
        {"name": "podinfo", "namespace": "apps", "chartRef": {"kind": "OCIRepository", "name": "podinfo"}},
    )
    apps = ks(scope)

    # WHEN the release gates the Kustomization's readiness
    ref = apps.add_health_check(release)

    # THEN the check names the release's apiVersion, kind, name and namespace
    assert ref == NamespacedObjectKindReference(
        api_version="helm.toolkit.fluxcd.io/v2", kind="HelmRelease", name="podinfo", namespace="apps"
    )
    assert apps.to_dict()["spec"]["healthChecks"] == [
        {
            "apiVersion": "helm.toolkit.fluxcd.io/v2",
            "kind": "HelmRelease",
            "name": "podinfo",
            "namespace": "apps",
        }
    ]


def test_add_health_check_from_a_cluster_scoped_resource_has_no_namespace() -> None:
    # GIVEN a Namespace
    scope = manifest()
    namespace = Namespace(scope, "ns", {"name": "apps"})
    apps = ks(scope)

    # WHEN it is added as a health check
    apps.add_health_check(namespace)

    # THEN the entry has no namespace
    assert apps.to_dict()["spec"]["healthChecks"] == [{"apiVersion": "v1", "kind": "Namespace", "name": "apps"}]


def test_add_health_check_from_a_reference_is_kept_as_given() -> None:
    # GIVEN a reference to an object fluxplane does not build
    apps = ks(manifest())
    ref = NamespacedObjectKindReference(api_version="apps/v1", kind="Deployment", name="web", namespace="apps")

    # WHEN / THEN it is returned and written unchanged
    assert apps.add_health_check(ref) is ref
    assert apps.health_checks == (ref,)


def test_add_health_check_twice_is_listed_once() -> None:
    # GIVEN a ConfigMap construct and an equal reference to it
    scope = manifest()
    config_map = ConfigMap(scope, "cm", {"name": "settings", "namespace": "apps"})
    apps = ks(
        scope,
        health_checks=[{"apiVersion": "v1", "kind": "ConfigMap", "name": "settings", "namespace": "apps"}],
    )

    # WHEN the construct is added again
    apps.add_health_check(config_map)

    # THEN there is still one entry
    assert len(apps.to_dict()["spec"]["healthChecks"]) == 1


def test_add_health_check_expr_appends_and_deduplicates() -> None:
    # GIVEN a Kustomization and a CEL health check for a custom kind
    apps = ks(manifest())
    check = conditions_health("pkg.crossplane.io/v1", "Provider", current=("Installed", "Healthy"), failed="Healthy")

    # WHEN it is added twice
    returned = apps.add_health_check_expr(check)
    apps.add_health_check_expr(check)

    # THEN it is returned and written once, with Flux's field names
    assert returned is check
    assert apps.health_check_exprs == (check,)
    assert apps.to_dict()["spec"]["healthCheckExprs"] == [check.dump()]
    assert list(apps.to_dict()["spec"]["healthCheckExprs"][0]) == ["apiVersion", "kind", "current", "failed"]


def test_health_check_exprs_follow_props_entries() -> None:
    # GIVEN a Kustomization with one expression from props
    apps = ks(manifest(), health_check_exprs=[{"apiVersion": "a/v1", "kind": "A", "current": "true"}])
    added = CustomHealthCheck(api_version="b/v1", kind="B", current="false")

    # WHEN another is added
    apps.add_health_check_expr(added)

    # THEN props entries come first
    assert [check.kind for check in apps.health_check_exprs] == ["A", "B"]


def test_relationship_verbs_place_lists_in_upstream_order() -> None:
    # GIVEN a Kustomization to which verbs are applied in reverse upstream order
    scope = manifest()
    apps = ks(scope)
    apps.add_health_check_expr(conditions_health("a/v1", "A", ("Ready",), failed="Synced"))
    apps.add_health_check(Namespace(scope, "ns", {"name": "apps"}))
    apps.depends_on("infra")

    # WHEN / THEN the spec lists dependsOn, healthChecks, healthCheckExprs in that order
    assert list(apps.to_dict()["spec"])[-3:] == ["dependsOn", "healthChecks", "healthCheckExprs"]


def test_to_dict_is_repeatable_and_returns_independent_lists() -> None:
    # GIVEN a Kustomization with a dependency, rendered once
    apps = ks(manifest())
    apps.depends_on("infra")
    first = apps.to_dict()

    # WHEN the caller changes that output
    first["spec"]["dependsOn"][0]["name"] = "changed"
    first["spec"]["dependsOn"].append({"name": "extra"})

    # THEN the next rendering is unchanged
    assert apps.to_dict()["spec"]["dependsOn"] == [{"name": "infra"}]


# Escaping for post-build substitution

VARIABLES = {"cluster_name": "staging-1"}


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("plain text", "plain text"),
        ("${cluster_name}", "$${cluster_name}"),
        ("${cluster_name:=hub}-${x}", "$${cluster_name:=hub}-$${x}"),
        ("costs $5, or $$", "costs $5, or $$$"),
        ("$${cluster_name}", "$$$${cluster_name}"),
        ("^[a-z]+$", "^[a-z]+$"),
    ],
)
def test_escaped_text_comes_back_from_flux_substitution_as_written(text: str, written: str) -> None:
    # GIVEN text from the definition
    # WHEN it is escaped for a Kustomization with postBuild
    # THEN only the $ that Flux would read are doubled, and Flux's substitution gives the text back
    assert escape_variables(text) == written
    assert substitute_text(written, VARIABLES) == text


class Listener(BaseModel):
    hostname: Annotated[str, SUBSTITUTED]
    tags: dict[str, str]


class Section(BaseModel):
    note: str
    listeners: list[Listener]
    values: dict[str, Any]


def test_escaped_walks_models_mappings_and_lists_and_keeps_substituted_fields() -> None:
    # GIVEN a config with the user's ${...} in free text, in keys, in nested lists and in a field meant
    # to be substituted
    section = Section(
        note="${cluster_name}",
        listeners=[Listener(hostname="${cluster_name}.example.com", tags={"${owner}": "a$${b}"})],
        values={"labels": ["${x}", 3, None]},
    )

    # WHEN it is escaped
    result = escaped(section)

    # THEN every string is escaped but the substituted field, and the original is unchanged
    assert result == Section(
        note="$${cluster_name}",
        listeners=[Listener(hostname="${cluster_name}.example.com", tags={"$${owner}": "a$$$${b}"})],
        values={"labels": ["$${x}", 3, None]},
    )
    assert section.note == "${cluster_name}"


def test_escaped_returns_what_needs_no_escape_as_is() -> None:
    # GIVEN values without a $ Flux would read
    section = Section(note="$5", listeners=[], values={"a": ["b"]})
    plain = {"a": ["b", ("c",)]}

    # WHEN / THEN they come back as the very same objects
    assert escaped(section) is section
    assert escaped(plain) is plain
