"""Shared props pieces: the Props base, name/duration types and the Flux reference models."""

from __future__ import annotations

from unittest.mock import PropertyMock, patch

import pytest
from pydantic import ValidationError

from fluxplane.constructs.props import (
    FLUX_NAMESPACE,
    CrossNamespaceSourceReference,
    CustomHealthCheck,
    DependsOn,
    Duration,
    KubeConfigReference,
    NamespacedObjectKindReference,
    Patch,
    PatchSelector,
    Props,
    SubstituteReference,
    dependency,
    dumped,
    ordered,
)


class Timed(Props):
    interval: Duration


def test_flux_namespace_is_flux_system() -> None:
    # GIVEN / WHEN / THEN Flux objects default to Flux's own namespace
    assert FLUX_NAMESPACE == "flux-system"


def test_props_accept_python_and_upstream_names() -> None:
    # GIVEN the same field given by its snake_case and its camelCase name
    # WHEN both are built
    snake = CrossNamespaceSourceReference(kind="GitRepository", name="repo", api_version="source.toolkit.fluxcd.io/v1")
    camel = CrossNamespaceSourceReference.model_validate(
        {"kind": "GitRepository", "name": "repo", "apiVersion": "source.toolkit.fluxcd.io/v1"}
    )

    # THEN they are equal
    assert snake == camel


def test_dump_uses_upstream_names_and_leaves_out_unset_fields() -> None:
    # GIVEN a reference with one optional field set and others unset
    ref = DependsOn(name="infra", ready_expr="status.ready")

    # WHEN / THEN it dumps with camelCase names and without the unset namespace
    assert ref.dump() == {"name": "infra", "readyExpr": "status.ready"}


def test_props_reject_unknown_fields() -> None:
    # GIVEN / WHEN / THEN a misspelt field is an error rather than silently ignored
    with pytest.raises(ValidationError, match=r"nmae\n\s+Extra inputs are not permitted"):
        DependsOn.model_validate({"nmae": "infra"})


def test_props_are_frozen() -> None:
    # GIVEN a props object
    ref = DependsOn(name="infra")

    # WHEN / THEN it cannot be changed in place
    with pytest.raises(ValidationError, match="frozen"):
        ref.name = "other"  # type: ignore[misc]


def test_frozen_props_are_hashable_and_equal_by_value() -> None:
    # GIVEN two equal references built separately
    # WHEN / THEN they hash and compare equal (relationship verbs deduplicate with them)
    assert DependsOn(name="a", namespace="b") == DependsOn(name="a", namespace="b")
    assert len({DependsOn(name="a", namespace="b"), DependsOn(name="a", namespace="b")}) == 1


@pytest.mark.parametrize("name", ["a", "flux-system", "a.b.c", "0abc", "a" * 253])
def test_name_accepts_dns_subdomains(name: str) -> None:
    # GIVEN / WHEN / THEN DNS-1123 subdomains are valid object names
    assert DependsOn(name=name).name == name


@pytest.mark.parametrize("name", ["", "Apps", "-a", "a-", "a_b", "a..b", "a" * 254])
def test_name_rejects_non_dns_subdomains(name: str) -> None:
    # GIVEN / WHEN / THEN anything else is refused
    with pytest.raises(ValidationError, match=r"name\n"):
        DependsOn(name=name)


@pytest.mark.parametrize("namespace", ["a.b", "A", "a" * 64])
def test_namespace_must_be_a_dns_label(namespace: str) -> None:
    # GIVEN / WHEN / THEN a namespace with a dot, upper case, or over 63 characters is refused
    with pytest.raises(ValidationError, match=r"namespace\n"):
        DependsOn(name="a", namespace=namespace)


@pytest.mark.parametrize("interval", ["10m", "1h30m", "500ms", "1.5h", "30s"])
def test_duration_accepts_go_durations(interval: str) -> None:
    # GIVEN / WHEN / THEN Go durations in ms, s, m and h are accepted
    assert Timed(interval=interval).interval == interval


@pytest.mark.parametrize("interval", ["10", "1d", "m", "10 m", "-1m"])
def test_duration_rejects_other_strings(interval: str) -> None:
    # GIVEN / WHEN / THEN durations without a unit, with days, or with spaces are refused
    with pytest.raises(ValidationError, match=r"interval\n\s+String should match pattern"):
        Timed(interval=interval)


def test_source_reference_kind_is_limited_to_flux_sources() -> None:
    # GIVEN / WHEN / THEN a kind that is not a Flux source is refused
    with pytest.raises(ValidationError, match=r"kind\n\s+Input should be 'GitRepository'"):
        CrossNamespaceSourceReference(kind="ConfigMap", name="repo")


def test_health_check_reference_dumps_in_upstream_order() -> None:
    # GIVEN a health check reference built with keyword arguments in another order
    ref = NamespacedObjectKindReference(namespace="apps", name="web", kind="Deployment", api_version="apps/v1")

    # WHEN / THEN it dumps as apiVersion, kind, name, namespace
    assert list(ref.dump().items()) == [
        ("apiVersion", "apps/v1"),
        ("kind", "Deployment"),
        ("name", "web"),
        ("namespace", "apps"),
    ]


def test_custom_health_check_needs_api_version_and_current() -> None:
    # GIVEN / WHEN / THEN the fields Flux requires are required here too
    with pytest.raises(ValidationError, match=r"2 validation errors.*\napiVersion\n.*\n.*\ncurrent\n"):
        CustomHealthCheck.model_validate({"kind": "Widget"})


def test_custom_health_check_dumps_in_progress_as_camel_case() -> None:
    # GIVEN a custom health check with every expression
    check = CustomHealthCheck(api_version="x/v1", kind="X", current="a", in_progress="b", failed="c")

    # WHEN / THEN it dumps with Flux's field names in Flux's order
    assert check.dump() == {
        "apiVersion": "x/v1",
        "kind": "X",
        "current": "a",
        "inProgress": "b",
        "failed": "c",
    }
    assert list(check.dump()) == ["apiVersion", "kind", "current", "inProgress", "failed"]


def test_kube_config_reference_dumps_secret_ref() -> None:
    # GIVEN a kubeconfig in a Secret key
    ref = KubeConfigReference(secret_ref={"name": "hub-kubeconfig", "key": "value"})

    # WHEN / THEN it dumps as Flux's kubeConfig.secretRef
    assert ref.dump() == {"secretRef": {"name": "hub-kubeconfig", "key": "value"}}


def test_substitute_reference_kind_is_configmap_or_secret() -> None:
    # GIVEN / WHEN / THEN other kinds are refused
    assert SubstituteReference(kind="Secret", name="vars", optional=True).dump() == {
        "kind": "Secret",
        "name": "vars",
        "optional": True,
    }
    with pytest.raises(ValidationError, match=r"kind\n\s+Input should be 'ConfigMap' or 'Secret'"):
        SubstituteReference(kind="Deployment", name="vars")


def test_patch_dumps_target_selector_with_upstream_names() -> None:
    # GIVEN a patch targeting objects by kind and label selector
    patch = Patch(
        patch="- op: remove\n  path: /spec/replicas\n",
        target=PatchSelector(kind="Deployment", label_selector="app=web"),
    )

    # WHEN / THEN the selector fields use kustomize's names
    assert patch.dump() == {
        "patch": "- op: remove\n  path: /spec/replicas\n",
        "target": {"kind": "Deployment", "labelSelector": "app=web"},
    }


def test_ordered_puts_keys_in_declared_field_order() -> None:
    # GIVEN a spec whose keys were added in another order than the model declares
    spec = {"readyExpr": "x", "name": "infra", "namespace": "ops"}

    # WHEN it is ordered by DependsOn's fields
    result = ordered(spec, DependsOn)

    # THEN keys follow the declaration (name, namespace, readyExpr) and values are unchanged
    assert list(result.items()) == [("name", "infra"), ("namespace", "ops"), ("readyExpr", "x")]


def test_ordered_reads_a_model_s_fields_once() -> None:
    # GIVEN a props model not ordered by before, whose fields are counted as they are read
    class Spec(Props):
        first: str | None = None
        second: str | None = None

    fields = Spec.model_fields
    with patch.object(Spec, "model_fields", new_callable=PropertyMock, return_value=fields) as read:
        # WHEN specs of it are ordered many times
        results = [ordered({"second": "b", "first": "a"}, Spec) for _ in range(3)]

    # THEN the order is the declared one each time, worked out from the fields once
    assert all(list(result) == ["first", "second"] for result in results)
    assert read.call_count == 1


def test_dependency_builds_a_depends_on_entry() -> None:
    # GIVEN / WHEN a dependency with a namespace and a readiness expression
    entry = dependency("infra", "ops", "true")

    # THEN it is the equivalent DependsOn
    assert entry == DependsOn(name="infra", namespace="ops", ready_expr="true")


def test_dependency_validates_the_name() -> None:
    # GIVEN / WHEN / THEN an invalid name is refused (not cached as a valid entry)
    with pytest.raises(ValidationError, match=r"name\n\s+String should match pattern"):
        dependency("Not_A_Name")


def test_dumped_returns_a_fresh_copy_each_time() -> None:
    # GIVEN the dump of a reference
    ref = DependsOn(name="infra", namespace="ops")
    first = dumped(ref)

    # WHEN the caller changes it
    first["name"] = "changed"

    # THEN a later dump of the same reference is not affected
    assert dumped(ref) == {"name": "infra", "namespace": "ops"}
