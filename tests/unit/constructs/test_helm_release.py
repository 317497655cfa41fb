"""Flux HelmRelease (helm.toolkit.fluxcd.io/v2): chart sources, values merging and dependencies."""

from __future__ import annotations

from typing import Any

import pytest

from fluxplane.constructs import DependsOn, HelmRelease, HelmReleaseProps, Manifest, Root
from fluxplane.constructs.helm_release import (
    DEFAULT_DRIFT_DETECTION,
    DEFAULT_INSTALL,
    DEFAULT_POST_RENDER_STRATEGY,
    DEFAULT_UPGRADE,
)
from fluxplane.errors import ConstructError

CHART_REF = {"kind": "OCIRepository", "name": "podinfo"}
CHART = {"spec": {"chart": "podinfo", "sourceRef": {"kind": "HelmRepository", "name": "podinfo"}}}


def manifest() -> Manifest:
    return Manifest(Root(), "m", path="releases.yaml")


def release(scope: Manifest | None = None, construct_id: str = "podinfo", **props: Any) -> HelmRelease:
    base: dict[str, Any] = {"name": construct_id, "namespace": "apps"}
    if "chart" not in props and "chartRef" not in props and "chart_ref" not in props:
        base["chartRef"] = CHART_REF
    return HelmRelease(scope or manifest(), construct_id, {**base, **props})


# Rendering


def test_minimal_release_with_chart_ref() -> None:
    # GIVEN / WHEN a release of an OCI chart by chartRef
    doc = release().to_dict()

    # THEN it reconciles every 30m and writes nothing else
    assert doc == {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "podinfo", "namespace": "apps"},
        "spec": {"interval": "30m", "chartRef": CHART_REF},
    }


def test_namespace_defaults_to_flux_system() -> None:
    # GIVEN / WHEN a release without namespace
    doc = HelmRelease(manifest(), "r", {"name": "podinfo", "chartRef": CHART_REF}).to_dict()

    # THEN it lives in flux-system
    assert doc["metadata"] == {"name": "podinfo", "namespace": "flux-system"}


def test_release_with_chart_template() -> None:
    # GIVEN / WHEN a release of a chart from a HelmRepository, with every chart template field
    spec = release(
        chart={
            "spec": {
                "chart": "podinfo",
                "version": "6.x",
                "sourceRef": {"kind": "HelmRepository", "name": "podinfo", "namespace": "flux-system"},
                "interval": "1h",
                "reconcileStrategy": "ChartVersion",
                "valuesFiles": ["values.yaml", "values-prod.yaml"],
            }
        }
    ).to_dict()["spec"]

    # THEN the chart template is written with Flux's names
    assert spec == {
        "interval": "30m",
        "chart": {
            "spec": {
                "chart": "podinfo",
                "version": "6.x",
                "sourceRef": {"kind": "HelmRepository", "name": "podinfo", "namespace": "flux-system"},
                "interval": "1h",
                "reconcileStrategy": "ChartVersion",
                "valuesFiles": ["values.yaml", "values-prod.yaml"],
            }
        },
    }


def test_every_field_is_written_in_declared_order_with_values_last() -> None:
    # GIVEN a release with every field, given in reverse order
    doc = release(
        values={"replicaCount": 2},
        values_from=[{"kind": "ConfigMap", "name": "podinfo-values", "valuesKey": "values.yaml", "optional": True}],
        post_render_strategy="separate",
        drift_detection={"mode": "warn"},
        upgrade={
            "crds": "Skip",
            "cleanupOnFail": True,
            "remediation": {"retries": 1, "strategy": "uninstall"},
        },
        install={"crds": "Create", "createNamespace": True, "remediation": {"retries": 2}, "timeout": "10m"},
        timeout="5m",
        depends_on=[{"name": "cert-manager", "namespace": "cert-manager"}],
        service_account_name="helm-controller",
        kube_config={"configMapRef": {"name": "hub"}},
        storage_namespace="apps",
        target_namespace="apps",
        release_name="podinfo",
        interval="1h",
        labels={"team": "web"},
    ).to_dict()

    # WHEN / THEN metadata carries the labels and spec follows the declared order
    assert doc["metadata"] == {"name": "podinfo", "namespace": "apps", "labels": {"team": "web"}}
    assert doc["spec"] == {
        "interval": "1h",
        "chartRef": CHART_REF,
        "releaseName": "podinfo",
        "targetNamespace": "apps",
        "storageNamespace": "apps",
        "kubeConfig": {"configMapRef": {"name": "hub"}},
        "serviceAccountName": "helm-controller",
        "dependsOn": [{"name": "cert-manager", "namespace": "cert-manager"}],
        "timeout": "5m",
        "install": {
            "crds": "Create",
            "createNamespace": True,
            "remediation": {"retries": 2},
            "timeout": "10m",
        },
        "upgrade": {
            "crds": "Skip",
            "remediation": {"retries": 1, "strategy": "uninstall"},
            "cleanupOnFail": True,
        },
        "driftDetection": {"mode": "warn"},
        "postRenderStrategy": "separate",
        "valuesFrom": [{"kind": "ConfigMap", "name": "podinfo-values", "valuesKey": "values.yaml", "optional": True}],
        "values": {"replicaCount": 2},
    }
    assert list(doc["spec"])[-4:] == ["driftDetection", "postRenderStrategy", "valuesFrom", "values"]


def test_strategies_tests_and_drift_rules_are_written_with_fluxs_names() -> None:
    # GIVEN a release that retries failed upgrades, runs the chart's tests and ignores the replicas an autoscaler sets
    spec = release(
        install={"strategy": {"name": "RemediateOnFailure"}, "remediation": {"retries": 2, "ignoreTestFailures": True}},
        upgrade={
            "remediation": {"remediateLastFailure": False},
            "strategy": {"name": "RetryOnFailure", "retryInterval": "2m"},
        },
        test={
            "enable": True,
            "ignoreFailures": False,
            "timeout": "3m",
            "filters": [{"name": "smoke", "exclude": True}],
        },
        drift_detection={
            "mode": "warn",
            "ignore": [{"paths": ["/spec/replicas"], "target": {"kind": "Deployment", "labelSelector": "app=web"}}],
        },
    ).to_dict()["spec"]

    # THEN each is written under its upstream name, test between upgrade and driftDetection
    assert spec == {
        "interval": "30m",
        "chartRef": CHART_REF,
        "install": {
            "remediation": {"retries": 2, "ignoreTestFailures": True},
            "strategy": {"name": "RemediateOnFailure"},
        },
        "upgrade": {
            "remediation": {"remediateLastFailure": False},
            "strategy": {"name": "RetryOnFailure", "retryInterval": "2m"},
        },
        "test": {
            "enable": True,
            "filters": [{"name": "smoke", "exclude": True}],
            "ignoreFailures": False,
            "timeout": "3m",
        },
        "driftDetection": {
            "mode": "warn",
            "ignore": [{"paths": ["/spec/replicas"], "target": {"kind": "Deployment", "labelSelector": "app=web"}}],
        },
    }


def test_a_retry_interval_needs_the_retry_strategy() -> None:
    # GIVEN / WHEN / THEN a retryInterval with RemediateOnFailure is refused, as the CRD's rule refuses it
    with pytest.raises(
        ConstructError,
        match=r"^root/m/podinfo: HelmReleaseProps\.upgrade\.strategy: retryInterval applies to name 'RetryOnFailure' "
        r"only, got name 'RemediateOnFailure'$",
    ):
        release(upgrade={"strategy": {"name": "RemediateOnFailure", "retryInterval": "2m"}})


def test_platform_defaults_render_as_expected() -> None:
    # GIVEN / WHEN a release given the module's platform defaults
    spec = release(
        install=DEFAULT_INSTALL,
        upgrade=DEFAULT_UPGRADE,
        drift_detection=DEFAULT_DRIFT_DETECTION,
        post_render_strategy=DEFAULT_POST_RENDER_STRATEGY,
    ).to_dict()["spec"]

    # THEN installs retry, upgrades roll back, CRDs are replaced, drift detection is on, hooks skip post-renderers
    assert spec["install"] == {"crds": "CreateReplace", "remediation": {"retries": 3}}
    assert spec["upgrade"] == {"crds": "CreateReplace", "remediation": {"retries": 3, "strategy": "rollback"}}
    assert spec["driftDetection"] == {"mode": "enabled"}
    assert spec["postRenderStrategy"] == "nohooks"


def test_the_post_render_strategy_is_left_to_flux_unless_given() -> None:
    # GIVEN / WHEN a release that names no strategy
    spec = release().to_dict()["spec"]

    # THEN the field is not written (Flux's default applies)
    assert "postRenderStrategy" not in spec


def test_the_post_render_strategy_is_one_flux_knows() -> None:
    with pytest.raises(ConstructError, match=r"postRenderStrategy.*'nohooks', 'combined' or 'separate'"):
        release(post_render_strategy="hooks")


def test_empty_values_are_not_written() -> None:
    # GIVEN / WHEN a release with an empty values mapping
    spec = release(values={}).to_dict()["spec"]

    # THEN there is no values key
    assert "values" not in spec


def test_props_instance_is_accepted() -> None:
    # GIVEN a validated props model
    props = HelmReleaseProps(name="podinfo", chart_ref=CHART_REF)

    # WHEN / THEN the construct keeps it
    assert HelmRelease(manifest(), "r", props).props is props


# Errors


def test_release_without_chart_or_chart_ref_is_rejected() -> None:
    # GIVEN / WHEN / THEN a release must say where its chart comes from
    with pytest.raises(
        ConstructError,
        match=r"^root/m/r: HelmReleaseProps\.\(props\): set exactly one of chart and chartRef$",
    ):
        HelmRelease(manifest(), "r", {"name": "podinfo"})


def test_release_with_both_chart_and_chart_ref_is_rejected() -> None:
    # GIVEN / WHEN / THEN giving both is ambiguous and refused
    with pytest.raises(
        ConstructError,
        match=r"^root/m/podinfo: HelmReleaseProps\.\(props\): set exactly one of chart and "
        r"chartRef$",
    ):
        release(chart=CHART, chartRef=CHART_REF)


def test_chart_ref_kind_is_checked() -> None:
    # GIVEN / WHEN / THEN a chartRef to a HelmRepository is refused, naming the allowed kinds
    with pytest.raises(
        ConstructError,
        match=r"^root/m/podinfo: HelmReleaseProps\.chartRef\.kind: input should be 'OCIRepository', "
        r"'HelmChart' or "
        r"'ExternalArtifact'$",
    ):
        release(chartRef={"kind": "HelmRepository", "name": "podinfo"})


def test_chart_template_needs_a_source_ref() -> None:
    # GIVEN / WHEN / THEN a chart without a sourceRef is refused, naming the nested field
    with pytest.raises(
        ConstructError, match=r"^root/m/podinfo: HelmReleaseProps\.chart\.spec\.sourceRef: field required$"
    ):
        release(chart={"spec": {"chart": "podinfo"}})


def test_upgrade_remediation_strategy_is_checked() -> None:
    # GIVEN / WHEN / THEN an unknown remediation strategy is refused
    with pytest.raises(
        ConstructError,
        match=r"^root/m/podinfo: HelmReleaseProps\.upgrade\.remediation\.strategy: input should be "
        r"'rollback' or "
        r"'uninstall'$",
    ):
        release(upgrade={"remediation": {"strategy": "retry"}})


def test_install_does_not_accept_an_upgrade_only_field() -> None:
    # GIVEN / WHEN / THEN a remediation strategy under install is an unknown field
    with pytest.raises(
        ConstructError,
        match=r"^root/m/podinfo: HelmReleaseProps\.install\.remediation\.strategy: extra inputs are not "
        r"permitted$",
    ):
        release(install={"remediation": {"strategy": "rollback"}})


def test_values_must_be_a_mapping() -> None:
    # GIVEN / WHEN / THEN values given as a list are refused
    with pytest.raises(
        ConstructError,
        match=r"^root/m/podinfo: HelmReleaseProps\.values: input should be a valid dictionary$",
    ):
        release(values=["replicaCount=2"])


def test_chart_template_source_must_be_a_chart_source() -> None:
    # GIVEN / WHEN / THEN an OCIRepository as chart template source is refused like the CRD does
    with pytest.raises(ConstructError, match=r"HelmReleaseProps\.chart\.spec\.sourceRef\.kind"):
        release(chart={"spec": {"chart": "podinfo", "sourceRef": {"kind": "OCIRepository", "name": "podinfo"}}})


def test_release_name_longer_than_53_characters_is_rejected() -> None:
    # GIVEN / WHEN / THEN a release name Helm cannot use is refused in the constructor
    with pytest.raises(ConstructError, match=r"HelmReleaseProps\.releaseName"):
        release(release_name="a" * 54)


@pytest.mark.parametrize("name", ["Podinfo", "pod_info", "-podinfo", "podinfo."])
def test_a_release_name_helm_refuses_is_rejected(name: str) -> None:
    # GIVEN / WHEN / THEN a name that is no DNS-1123 subdomain is refused, as Helm refuses it
    with pytest.raises(ConstructError, match=r"HelmReleaseProps\.releaseName: string should match pattern"):
        release(release_name=name)
    # AND a dotted one of 53 characters is Helm's
    assert release(release_name="a.b-" + "c" * 49).to_dict()["spec"]["releaseName"] == "a.b-" + "c" * 49


def test_the_service_account_is_any_service_account_name() -> None:
    # GIVEN an account name longer than a DNS label (a ServiceAccount's name is a DNS-1123 subdomain)
    account = "a" * 63 + "-deployer"
    # WHEN it is impersonated THEN it is written as given
    assert release(serviceAccountName=account).to_dict()["spec"]["serviceAccountName"] == account
    # AND one that is no ServiceAccount name is refused
    with pytest.raises(ConstructError, match=r"HelmReleaseProps\.serviceAccountName: string should match pattern"):
        release(serviceAccountName="Helm")


# add_values


def test_add_values_merges_mappings_recursively() -> None:
    # GIVEN a release with nested values
    podinfo = release(values={"ingress": {"enabled": False, "className": "nginx"}, "replicaCount": 1})

    # WHEN values are added that change one nested key and add another
    merged = podinfo.add_values({"ingress": {"enabled": True, "hosts": ["a.example.com"]}})

    # THEN untouched keys stay, changed keys change, new keys are added, and the result is returned
    expected = {
        "ingress": {"enabled": True, "className": "nginx", "hosts": ["a.example.com"]},
        "replicaCount": 1,
    }
    assert merged == expected
    assert podinfo.values == expected
    assert podinfo.to_dict()["spec"]["values"] == expected


def test_add_values_replaces_lists_whole() -> None:
    # GIVEN a release whose values hold a list
    podinfo = release(values={"tolerations": [{"key": "a"}, {"key": "b"}]})

    # WHEN a shorter list is added
    podinfo.add_values({"tolerations": [{"key": "c"}]})

    # THEN the list is replaced, not appended to or merged by index
    assert podinfo.values == {"tolerations": [{"key": "c"}]}


def test_add_values_replaces_a_mapping_with_a_scalar_and_back() -> None:
    # GIVEN a release with a mapping and a scalar value
    podinfo = release(values={"resources": {"limits": {"cpu": "1"}}, "image": "podinfo:6"})

    # WHEN the mapping is overridden by a scalar and the scalar by a mapping
    podinfo.add_values({"resources": None, "image": {"tag": "6.7.0"}})

    # THEN each is replaced whole (None sets null, it does not delete the key)
    assert podinfo.values == {"resources": None, "image": {"tag": "6.7.0"}}


def test_add_values_on_a_release_without_values() -> None:
    # GIVEN a release with no values
    podinfo = release()

    # WHEN values are added twice
    podinfo.add_values({"a": 1})
    podinfo.add_values({"b": 2})

    # THEN both are written, in the order added
    assert list(podinfo.to_dict()["spec"]["values"].items()) == [("a", 1), ("b", 2)]


def test_add_values_keeps_key_order_of_existing_values() -> None:
    # GIVEN values with keys z, a
    podinfo = release(values={"z": {"y": 1, "x": 2}, "a": 0})

    # WHEN z.x is overridden and z.w added
    podinfo.add_values({"z": {"w": 3, "x": 9}})

    # THEN existing keys keep their place and new keys are appended
    assert list(podinfo.values) == ["z", "a"]
    assert list(podinfo.values["z"].items()) == [("y", 1), ("x", 9), ("w", 3)]


def test_add_values_does_not_change_props_or_the_given_mapping() -> None:
    # GIVEN a release built with nested values and an override mapping
    podinfo = release(values={"ingress": {"enabled": False}})
    override = {"ingress": {"enabled": True}}

    # WHEN the override is added
    podinfo.add_values(override)

    # THEN neither the frozen props nor the caller's mapping was modified
    assert podinfo.props.values == {"ingress": {"enabled": False}}
    assert override == {"ingress": {"enabled": True}}


def test_changing_to_dict_output_does_not_change_the_release() -> None:
    # GIVEN a rendered release with nested values
    podinfo = release(values={"ingress": {"enabled": False}})
    doc = podinfo.to_dict()

    # WHEN the caller changes the rendered values
    doc["spec"]["values"]["ingress"]["enabled"] = True
    doc["spec"]["values"]["extra"] = 1

    # THEN the release still renders its own values
    assert podinfo.to_dict()["spec"]["values"] == {"ingress": {"enabled": False}}


def test_changing_returned_values_does_not_change_the_release() -> None:
    # GIVEN a release with nested values
    podinfo = release(values={"ingress": {"enabled": False}})

    # WHEN the caller changes a nested mapping of the returned values
    podinfo.values["ingress"]["enabled"] = True

    # THEN the release is unchanged
    assert podinfo.values == {"ingress": {"enabled": False}}


# depends_on


def test_depends_on_same_namespace_release_leaves_namespace_out() -> None:
    # GIVEN two releases in the same namespace
    scope = manifest()
    redis = release(scope, "redis")
    podinfo = release(scope, "podinfo")

    # WHEN podinfo depends on redis
    entry = podinfo.depends_on(redis)

    # THEN the entry names redis without namespace
    assert entry == DependsOn(name="redis")
    assert podinfo.to_dict()["spec"]["dependsOn"] == [{"name": "redis"}]


def test_depends_on_other_namespace_release_names_its_namespace() -> None:
    # GIVEN releases in different namespaces
    scope = manifest()
    cert_manager = release(scope, "cert-manager", namespace="cert-manager")
    podinfo = release(scope, "podinfo")

    # WHEN podinfo depends on cert-manager
    entry = podinfo.depends_on(cert_manager)

    # THEN the entry carries cert-manager's namespace
    assert entry == DependsOn(name="cert-manager", namespace="cert-manager")


def test_depends_on_by_name_and_deduplicated() -> None:
    # GIVEN a release that depends on "redis" through props
    scope = manifest()
    podinfo = release(scope, "podinfo", depends_on=[{"name": "redis"}])
    redis = release(scope, "redis")

    # WHEN it is added again by name and by construct, and a new one by name
    podinfo.depends_on("redis")
    podinfo.depends_on(redis)
    podinfo.depends_on("keda")

    # THEN each dependency is listed once, props first, in order
    assert podinfo.dependencies == (DependsOn(name="redis"), DependsOn(name="keda"))
    assert podinfo.to_dict()["spec"]["dependsOn"] == [{"name": "redis"}, {"name": "keda"}]


def test_depends_on_lands_in_declared_position() -> None:
    # GIVEN a release with values and a timeout (declared after dependsOn)
    podinfo = release(values={"a": 1}, timeout="5m")

    # WHEN a dependency is added afterwards
    podinfo.depends_on("redis")

    # THEN dependsOn comes before timeout and values
    assert list(podinfo.to_dict()["spec"]) == ["interval", "chartRef", "dependsOn", "timeout", "values"]


def test_depends_on_does_not_change_props() -> None:
    # GIVEN a release without dependencies in props
    podinfo = release()

    # WHEN one is added
    podinfo.depends_on("redis")

    # THEN props are unchanged
    assert podinfo.props.depends_on is None
