"""chart_release: a HelmRepository and a HelmRelease with the fleet's release defaults."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from fluxplane.config.merge import Layer, Origins
from fluxplane.constructs import Manifest, Root
from fluxplane.packs.cert_manager import CertManagerConfig
from fluxplane.packs.helm import ReleaseConfig, ReleaseSettings, chart_release, oci_chart_release
from fluxplane.packs.registry import PackRegistry
from fluxplane.packs.versions import Chart
from fluxplane.synth import load_plan
from fluxplane.synth.plan import FleetPlan
from fluxplane.testing import bind_pack
from tests.conftest import ROOT

REGISTRY = PackRegistry.from_entry_points()


def test_chart_release_pairs_a_repository_and_a_release_in_flux_system() -> None:
    manifest = Manifest(Root(), "m", path="x.yaml")
    release = chart_release(
        manifest,
        name="demo",
        chart=Chart("https://charts.example.com", "demo-chart", "1.2.3"),
        version="1.2.4",
        target_namespace="demo",
        repository="example",
    )
    repository, released = manifest.documents()
    assert repository == {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "HelmRepository",
        "metadata": {"name": "example", "namespace": "flux-system"},
        "spec": {"interval": "1h", "url": "https://charts.example.com"},
    }
    assert released["metadata"] == {"name": "demo", "namespace": "flux-system"}
    assert released["spec"]["chart"] == {
        "spec": {"chart": "demo-chart", "version": "1.2.4", "sourceRef": {"kind": "HelmRepository", "name": "example"}}
    }
    assert released["spec"]["targetNamespace"] == "demo"
    assert released["spec"]["releaseName"] == "demo"
    assert released["spec"]["install"] == {"crds": "CreateReplace", "remediation": {"retries": 3}}
    assert released["spec"]["upgrade"] == {
        "crds": "CreateReplace",
        "remediation": {"retries": 3, "strategy": "rollback"},
    }
    assert released["spec"]["driftDetection"] == {"mode": "enabled"}
    # AND the chart's hooks stay out of the post-renderers, whatever Flux's default
    assert released["spec"]["postRenderStrategy"] == "nohooks"
    assert release.name == "demo"


def test_repository_defaults_to_the_release_name() -> None:
    manifest = Manifest(Root(), "m", path="x.yaml")
    chart_release(
        manifest, name="demo", chart=Chart("https://c.example.com", "demo", "1"), version="1", target_namespace="d"
    )
    assert manifest.documents()[0]["metadata"]["name"] == "demo"


# -- the release's identity and settings --------------------------------------------------------------


class DemoConfig(ReleaseConfig):
    release_namespace: ClassVar[str] = "demo"


def test_a_release_takes_its_name_and_storage_from_the_config_and_its_settings_over_the_defaults() -> None:
    # GIVEN a pack config naming a running release, and settings over the fleet's defaults
    manifest = Manifest(Root(), "m", path="x.yaml")
    identity = DemoConfig.model_validate({"releaseName": "demo-demo", "storageNamespace": "demo"})
    settings = ReleaseSettings(
        timeout="10m",
        upgrade={"remediation": {"strategy": "uninstall"}, "strategy": {"name": "RetryOnFailure"}},
        test={"enable": True},
        drift_detection={"ignore": [{"paths": ["/spec/replicas"]}]},
    )
    # WHEN released
    chart_release(
        manifest,
        name="demo",
        chart=Chart("https://charts.example.com", "demo", "1.2.3"),
        version="1.2.x",
        target_namespace="demo",
        identity=identity,
        settings=settings,
    )
    # THEN the release is the running one, and each setting is merged over the defaults (mappings merge)
    assert manifest.documents()[1]["spec"] == {
        "interval": "30m",
        "chart": {
            "spec": {"chart": "demo", "version": "1.2.x", "sourceRef": {"kind": "HelmRepository", "name": "demo"}}
        },
        "releaseName": "demo-demo",
        "targetNamespace": "demo",
        "storageNamespace": "demo",
        "serviceAccountName": "helm-controller",
        "timeout": "10m",
        "install": {"crds": "CreateReplace", "remediation": {"retries": 3}},
        "upgrade": {
            "crds": "CreateReplace",
            "remediation": {"retries": 3, "strategy": "uninstall"},
            "strategy": {"name": "RetryOnFailure"},
        },
        "test": {"enable": True},
        "driftDetection": {"mode": "enabled", "ignore": [{"paths": ["/spec/replicas"]}]},
        "postRenderStrategy": "nohooks",
    }


def test_an_oci_chart_takes_a_range_as_the_sources_semver() -> None:
    # GIVEN an OCI chart at an exact version, and one at a range
    manifest = Manifest(Root(), "m", path="x.yaml")
    oci_chart_release(manifest, name="a", url="oci://ghcr.io/org/a", version="6.7.1", target_namespace="a")
    other = Manifest(Root(), "n", path="y.yaml")
    oci_chart_release(other, name="b", url="oci://ghcr.io/org/b", version="6.7.x", target_namespace="b")
    # THEN the exact one is a tag, the range a semver range of tags
    assert manifest.documents()[0]["spec"]["ref"] == {"tag": "6.7.1"}
    assert other.documents()[0]["spec"]["ref"] == {"semver": "6.7.x"}


def test_a_config_for_another_namespace_is_a_bug_of_the_pack() -> None:
    manifest = Manifest(Root(), "m", path="x.yaml")
    with pytest.raises(
        ValueError, match=r"^release 'x' installs into 'x', but its config's release_namespace is 'demo'$"
    ):
        oci_chart_release(
            manifest, name="x", url="oci://ghcr.io/org/x", version="1.0.0", target_namespace="x", identity=DemoConfig()
        )


@pytest.mark.parametrize(
    ("section", "problem"),
    [
        (
            {"storageNamespace": "apps"},
            'environments/staging.yaml: packs.cert-manager: storageNamespace "apps" is neither "flux-system" nor the '
            'namespace the release installs into, "cert-manager": Helm\'s records of the release hold its values, '
            "and stay where no app can read or change them",
        ),
        (
            {"releaseName": "Cert_Manager"},
            "environments/staging.yaml: packs.cert-manager.releaseName: expected a Helm release name: lower-case "
            "letters, digits, '-' and '.' (a DNS-1123 subdomain), at most 53 characters, got \"Cert_Manager\"",
        ),
        (
            {"releaseName": "c" * 54},
            "environments/staging.yaml: packs.cert-manager.releaseName: expected a Helm release name: lower-case "
            f"letters, digits, '-' and '.' (a DNS-1123 subdomain), at most 53 characters, got \"{'c' * 54}\"",
        ),
    ],
)
def test_a_release_identity_fleet_config_refuses_is_located(section: dict[str, Any], problem: str) -> None:
    # GIVEN a cluster's pack section naming a release Helm refuses, or keeping it where an app could reach it
    sections = {"cert-manager": section}
    # WHEN configured THEN one line with the file and field
    _, problems = REGISTRY.configure(
        sections, Origins([Layer("environments/staging.yaml", sections, prefix=("packs",))])
    )
    assert problems == [problem]


@pytest.mark.parametrize("storage", ["flux-system", "cert-manager"])
def test_the_release_is_kept_in_flux_system_or_where_it_installs(storage: str) -> None:
    config = CertManagerConfig.model_validate({"releaseName": "cert-manager", "storageNamespace": storage})
    assert (config.release_name, config.storage_namespace) == ("cert-manager", storage)


@pytest.fixture(scope="module")
def example() -> FleetPlan:
    return load_plan(ROOT)


def test_every_built_in_pack_that_releases_a_chart_takes_the_releases_identity(example: FleetPlan) -> None:
    # GIVEN every built-in pack whose bind makes a HelmRelease, with the example fleet's config for it
    releasing = []
    for pack in REGISTRY:
        if not pack.bind.__module__.startswith("fluxplane.packs.") or pack.builds_clusters:
            continue
        config = example.base_configs.get(pack.name) or pack.config()
        if not any(doc["kind"] == "HelmRelease" for doc in bind_pack(pack, config, fleet=example.fleet).objects):
            continue
        releasing.append(pack.name)
        # WHEN it is given the name of a running release, stored where the release installs
        assert isinstance(config, ReleaseConfig), pack.name
        namespace = config.installs_into()
        adopted = type(config).model_validate(
            {**config.model_dump(by_alias=True), "releaseName": "adopted", "storageNamespace": namespace}
        )
        # THEN its release is that one
        release = bind_pack(pack, adopted, fleet=example.fleet).one("HelmRelease")["spec"]
        assert (release["releaseName"], release["targetNamespace"], release["storageNamespace"]) == (
            "adopted",
            namespace,
            namespace,
        ), pack.name
    assert len(releasing) == 12
