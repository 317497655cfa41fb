"""Overlay planning: an overlay builds to exactly the child's objects and reads as a small patch."""

from __future__ import annotations

from typing import Any

import yaml

from fluxplane.charts.overlay import json_patch_ops, object_key, plan_overlay
from fluxplane.core.codec import dump_value


def _release(values: dict[str, Any], name: str = "app") -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": name, "namespace": "flux-system"},
        "spec": {"interval": "30m", "values": values},
    }


def test_json_patch_ops_replace_add_remove_with_escaped_keys() -> None:
    # GIVEN a parent and a child differing in a value, an added key with '/' and '~', a removed key
    parent = {"a": 1, "gone": True, "nested": {"keep": 1, "list": [1, 2]}}
    child = {"a": 2, "nested": {"keep": 1, "list": [3]}, "x/y~z": "new"}
    # WHEN diffing
    ops = json_patch_ops(parent, child)
    # THEN lists are replaced whole and keys are escaped per RFC 6901
    assert ops == [
        {"op": "replace", "path": "/a", "value": 2},
        {"op": "remove", "path": "/gone"},
        {"op": "replace", "path": "/nested/list", "value": [3]},
        {"op": "add", "path": "/x~1y~0z", "value": "new"},
    ]


def test_json_patch_ops_type_change_is_a_replace() -> None:
    assert json_patch_ops({"a": 1}, {"a": True}) == [{"op": "replace", "path": "/a", "value": True}]
    assert json_patch_ops({"a": {"b": 1}}, {"a": {"b": 1}}) == []


def test_plan_overlay_identical_is_empty() -> None:
    docs = [_release({"replicas": 1})]
    assert plan_overlay(docs, [_release({"replicas": 1})], dump_value).empty


def test_plan_overlay_changed_object_gets_one_targeted_json6902_patch() -> None:
    # GIVEN a release whose replicas change
    plan = plan_overlay([_release({"replicas": 1})], [_release({"replicas": 3})], dump_value)
    # THEN one patch targets exactly that object
    assert plan.added == []
    assert len(plan.patches) == 1
    patch = plan.patches[0]
    assert yaml.safe_load(patch.patch) == [{"op": "replace", "path": "/spec/values/replicas", "value": 3}]
    assert patch.target is not None
    assert patch.target.dump() == {
        "group": "helm.toolkit.fluxcd.io",
        "version": "v2",
        "kind": "HelmRelease",
        "name": "app",
        "namespace": "flux-system",
    }


def test_plan_overlay_added_and_deleted_objects() -> None:
    # GIVEN a child that drops a Namespace and adds a ConfigMap
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps", "labels": {"a": "b"}}}
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "apps"}}
    plan = plan_overlay([namespace, _release({})], [_release({}), config_map], dump_value)
    # THEN the ConfigMap is added and the Namespace removed with a $patch: delete (identity only)
    assert plan.added == [config_map]
    assert [yaml.safe_load(p.patch) for p in plan.patches] == [
        {"$patch": "delete", "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}}
    ]
    assert plan.patches[0].target is None


def test_object_key_core_and_cluster_scoped() -> None:
    assert object_key({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}) == (
        "v1",
        "Namespace",
        "",
        "a",
    )
