"""Tests for fluxplane.packs.podinfo: its config model, its documents and its health gate."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.constructs import NamespacedObjectKindReference
from fluxplane.errors import ConstructError
from fluxplane.packs import versions
from fluxplane.packs.podinfo import PACK, PodinfoConfig
from fluxplane.testing import bind_pack


def _namespace(name: str = "podinfo") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def _chart(tag: str = versions.PODINFO.version) -> dict[str, Any]:
    return {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "OCIRepository",
        "metadata": {"name": "podinfo", "namespace": "flux-system"},
        "spec": {
            "interval": "10m",
            "url": "oci://ghcr.io/stefanprodan/charts/podinfo",
            "ref": {"tag": tag},
            "layerSelector": {
                "mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
                "operation": "copy",
            },
        },
    }


def _release(values: dict[str, Any], target_namespace: str = "podinfo") -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "podinfo", "namespace": "flux-system"},
        "spec": {
            "interval": "30m",
            "chartRef": {"kind": "OCIRepository", "name": "podinfo"},
            "releaseName": "podinfo",
            "targetNamespace": target_namespace,
            "serviceAccountName": "helm-controller",
            "postRenderStrategy": "nohooks",
            "install": {"crds": "CreateReplace", "remediation": {"retries": 3}},
            "upgrade": {"crds": "CreateReplace", "remediation": {"retries": 3, "strategy": "rollback"}},
            "driftDetection": {"mode": "enabled"},
            "values": values,
        },
    }


def test_config_defaults() -> None:
    # GIVEN no values WHEN the config is made THEN one replica in "podinfo" of the pinned chart
    assert PACK.config() == PodinfoConfig(
        enabled=True,
        replicas=1,
        namespace="podinfo",
        message="podinfo on ${cluster_name}",
        version=versions.PODINFO.version,
        values={},
    )


@pytest.mark.parametrize(
    ("data", "loc", "kind"),
    [
        ({"replicas": 0}, ("replicas",), "greater_than_equal"),
        ({"replicas": 51}, ("replicas",), "less_than_equal"),
        ({"namespace": "Apps"}, ("namespace",), "string_pattern_mismatch"),
        ({"namespace": "a/b"}, ("namespace",), "string_pattern_mismatch"),
        ({"values": []}, ("values",), "dict_type"),
        ({"replica": 2}, ("replica",), "extra_forbidden"),
    ],
)
def test_config_refuses_bad_values(data: dict[str, Any], loc: tuple[str, ...], kind: str) -> None:
    # GIVEN one bad value WHEN validated THEN exactly that field fails
    with pytest.raises(ValidationError) as exc:
        PodinfoConfig.model_validate(data)
    assert [(e["loc"], e["type"]) for e in exc.value.errors()] == [(loc, kind)]


def test_default_documents() -> None:
    # GIVEN the default config WHEN bound
    ctx = bind_pack(PACK, PodinfoConfig())

    # THEN a Namespace, the OCI chart and the release are produced, the message keeping its variable
    assert ctx.objects == [
        _namespace(),
        _chart(),
        _release({"replicaCount": 1, "ui": {"message": "podinfo on ${cluster_name}"}}),
    ]


def test_custom_config_documents() -> None:
    # GIVEN every field set
    config = PodinfoConfig.model_validate(
        {"replicas": 3, "namespace": "demo", "message": "hello ${environment}", "version": "6.8.0"}
    )

    # WHEN bound THEN namespace, chart tag, replicas and message follow the config
    assert bind_pack(PACK, config).objects == [
        _namespace("demo"),
        _chart("6.8.0"),
        _release({"replicaCount": 3, "ui": {"message": "hello ${environment}"}}, target_namespace="demo"),
    ]


def test_values_are_merged_last() -> None:
    # GIVEN values that override the replica count and extend the ui mapping
    config = PodinfoConfig.model_validate(
        {"replicas": 2, "values": {"replicaCount": 5, "ui": {"color": "#34577c"}, "hpa": {"enabled": True}}}
    )

    # WHEN bound THEN the user's values win, mappings merged key by key
    assert bind_pack(PACK, config).objects[2]["spec"]["values"] == {
        "replicaCount": 5,
        "ui": {"message": "podinfo on ${cluster_name}", "color": "#34577c"},
        "hpa": {"enabled": True},
    }


def test_health_check_is_the_helm_release() -> None:
    # GIVEN the default config WHEN bound THEN the pack is gated on its HelmRelease, with no CEL checks
    ctx = bind_pack(PACK, PodinfoConfig())
    assert ctx.health_checks == [
        NamespacedObjectKindReference(
            api_version="helm.toolkit.fluxcd.io/v2",
            kind="HelmRelease",
            name="podinfo",
            namespace="flux-system",
        )
    ]
    assert ctx.health_check_exprs == []


def test_a_namespace_longer_than_a_label_is_a_construct_error_naming_the_field() -> None:
    # GIVEN a namespace of the label's characters, longer than a Namespace's name may be
    # WHEN the pack is bound THEN its Namespace's props refuse it in one located line, not a traceback
    with pytest.raises(ConstructError) as exc:
        bind_pack(PACK, {"namespace": "a" * 64})
    assert exc.value.problems == ("root/pack: NamespaceProps.name: string should have at most 63 characters",)
