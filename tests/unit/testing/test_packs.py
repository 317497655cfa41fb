"""Tests for fluxplane.testing.packs: bind_pack, and check_pack over deliberately broken packs."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

import pytest
from pydantic import ConfigDict, Field, ValidationError

from fluxplane.config.loader import load_fleet
from fluxplane.config.models import Fleet
from fluxplane.sdk import (
    SUBSTITUTED,
    Chart,
    ConfigMap,
    Namespace,
    NamespacedObjectKindReference,
    Pack,
    PackConfig,
    PackContext,
    PackError,
    RawObject,
    chart_release,
)
from fluxplane.testing import bind_pack, check_pack
from tests.conftest import ROOT

CHART = Chart("https://charts.example.com", "sample", "1.0.0")


class SampleConfig(PackConfig):
    greeting: str = Field("hello ${cluster_name}", description="Written as given: Flux leaves it alone.")
    region: Annotated[str, SUBSTITUTED] = Field("${cluster_region}", description="Expanded by Flux.")
    size: int = Field(1, ge=1, description="How many.")


def _bind(ctx: PackContext, config: SampleConfig) -> None:
    Namespace(ctx.scope, "namespace", {"name": "sample"})
    ConfigMap(
        ctx.scope,
        "settings",
        {
            "name": "settings",
            "namespace": "sample",
            "data": {"greeting": config.greeting, "region": config.region, "size": str(config.size)},
        },
    )
    release = chart_release(ctx.scope, name="sample", chart=CHART, version="1.0.0", target_namespace="sample")
    ctx.add_health_check(release)
    ctx.add_pod_identity("controller", namespace="sample", service_account="sample", managed_policies=("ReadOnly",))


SAMPLE = Pack(
    name="sample",
    version="0.1.0",
    description="a sample",
    config=SampleConfig,
    layer="controllers",
    bind=_bind,
    namespaces=("sample",),
)


# -- bind_pack ------------------------------------------------------------------------------------------


def test_bind_pack_binds_the_default_config_and_returns_plain_objects_in_output_order() -> None:
    # GIVEN the sample pack WHEN bound with no config
    bound = bind_pack(SAMPLE)
    # THEN its objects are plain dicts in output order, with its health check and pod identity
    assert bound.kinds() == [
        ("Namespace", "sample"),
        ("ConfigMap", "settings"),
        ("HelmRepository", "sample"),
        ("HelmRelease", "sample"),
    ]
    assert bound.objects[0] == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "sample"}}
    assert [(check.kind, check.namespace, check.name) for check in bound.health_checks] == [
        ("HelmRelease", "flux-system", "sample")
    ]
    assert [(identity.name, identity.namespace) for identity in bound.pod_identities] == [("controller", "sample")]
    assert (bound.health_check_exprs, bound.timeout, bound.pack) == ([], None, SAMPLE)


def test_bind_pack_escapes_the_config_as_synth_does() -> None:
    # GIVEN the default config, with cluster variables in a plain and in a SUBSTITUTED field
    # WHEN bound THEN the plain field reaches the cluster as written, the substituted one is left for Flux
    assert bind_pack(SAMPLE).one("ConfigMap")["data"] == {
        "greeting": "hello $${cluster_name}",
        "region": "${cluster_region}",
        "size": "1",
    }


def test_bind_pack_validates_a_mapping_as_a_packs_section() -> None:
    # GIVEN the section's values by their YAML names WHEN bound THEN the config model reads them
    assert bind_pack(SAMPLE, {"size": 3}).config == SampleConfig(size=3, greeting="hello $${cluster_name}")
    with pytest.raises(ValidationError, match=r"sise\n  Extra inputs are not permitted"):
        bind_pack(SAMPLE, {"sise": 3})


def test_bind_pack_takes_a_config_object() -> None:
    assert bind_pack(SAMPLE, SampleConfig(size=2)).one("ConfigMap", "settings")["data"]["size"] == "2"


def test_one_refuses_none_or_several_and_lists_what_there_is() -> None:
    # GIVEN a bound pack WHEN asked for a kind it did not make THEN the error lists its objects
    bound = bind_pack(SAMPLE)
    with pytest.raises(AssertionError, match=r"expected one Secret, found 0 among \[\('Namespace', 'sample'\), "):
        bound.one("Secret")
    with pytest.raises(AssertionError, match="expected one ConfigMap other, found 0"):
        bound.one("ConfigMap", "other")


# -- check_pack -------------------------------------------------------------------------------------------


def test_a_pack_that_keeps_the_contract_has_no_problems() -> None:
    assert check_pack(SAMPLE) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"name": "Sample_Pack"}, "pack 'Sample_Pack': name must be a DNS-1123 label"),
        ({"version": "1.0"}, "version '1.0' is not a semver version such as 1.2.3"),
        ({"description": ""}, "description '' must be one line of text"),
        ({"description": "two\nlines"}, "description 'two\\nlines' must be one line of text"),
        ({"layer": "platform"}, "layer 'platform' is not one of controllers, configs, apps"),
        ({"runs_on": "everywhere"}, "runs_on 'everywhere' is not one of management, workload, any"),
        ({"requires": ("Cert_Manager",)}, "requires 'Cert_Manager', which is not a DNS-1123 label"),
        ({"requires": ("sample",)}, "requires itself"),
        ({"namespaces": ("sample", "Bad_NS")}, "pack 'sample': namespaces must be DNS-1123 labels, got 'Bad_NS'"),
        ({"needs": ("gpu",)}, "pack 'sample': needs 'gpu', which no cluster offers (known: fluxplane-network)"),
        (
            {"provides": ("aws-provider",)},
            "pack 'sample': provides 'aws-provider', which is not a fluxplane feature "
            "(known: app-resources, aws-providers)",
        ),
        ({"crd_groups": ("sample",)}, "crd_groups has 'sample', which is not an API group"),
        ({"crds": ("*.sample",)}, "crds has '*.sample', which is not an API group nor *.<API group>"),
        ({"crds": ("Sample.io",)}, "crds has 'Sample.io', which is not an API group nor *.<API group>"),
    ],
)
def test_each_bad_declaration_is_a_problem(change: dict[str, Any], problem: str) -> None:
    # GIVEN the sample pack with one bad declaration WHEN checked THEN that is its one problem
    assert check_pack(replace(SAMPLE, **change)) == [problem]


def test_a_pack_that_provides_fluxplanes_features_has_no_problems() -> None:
    # GIVEN the sample pack standing in for both of fluxplane's features WHEN checked THEN that is no problem
    assert check_pack(replace(SAMPLE, provides=("app-resources", "aws-providers"))) == []


def test_a_config_that_is_no_pack_config_is_a_problem() -> None:
    assert check_pack(replace(SAMPLE, config=dict)) == ["config <class 'dict'> is not a PackConfig model"]  # type: ignore[arg-type]


def test_a_config_that_accepts_unknown_fields_is_a_problem() -> None:
    # GIVEN a config model that lets unknown keys through WHEN checked THEN it is named
    class LaxConfig(SampleConfig):
        model_config = ConfigDict(extra="allow")

    assert check_pack(replace(SAMPLE, config=LaxConfig)) == [
        "config LaxConfig does not forbid unknown fields (model_config extra='forbid')"
    ]


class NeedsValuesConfig(PackConfig):
    domain: str = Field(description="Required.")


def _bind_needs_values(ctx: PackContext, config: NeedsValuesConfig) -> None:
    Namespace(ctx.scope, "namespace", {"name": config.domain})


NEEDS_VALUES = Pack(
    name="needs-values",
    version="1.0.0",
    description="needs a domain",
    config=NeedsValuesConfig,
    layer="apps",
    bind=_bind_needs_values,
    namespaces=("example",),
)


def test_a_config_with_required_fields_needs_an_example() -> None:
    # GIVEN a config with a required field WHEN checked without an example THEN it asks for one
    assert check_pack(NEEDS_VALUES) == [
        "config NeedsValuesConfig cannot be made from no values (domain: Field required); give check_pack an "
        "example config"
    ]
    # WHEN checked with one, as a mapping or a config THEN it passes
    assert check_pack(NEEDS_VALUES, {"domain": "example"}) == []
    assert check_pack(NEEDS_VALUES, NeedsValuesConfig(domain="example")) == []


def test_a_bad_example_is_a_problem() -> None:
    assert check_pack(NEEDS_VALUES, {"domain": 3}) == [
        "config NeedsValuesConfig cannot be made from the example (domain: Input should be a valid string)"
    ]
    assert check_pack(NEEDS_VALUES, SampleConfig()) == [
        "the example is a SampleConfig, not the pack's NeedsValuesConfig"
    ]


def _bind_fails(ctx: PackContext, config: PackConfig) -> None:
    raise PackError("sample: bind it with a fleet\nmore")


def test_a_bind_that_fails_is_a_problem() -> None:
    assert check_pack(replace(SAMPLE, config=PackConfig, bind=_bind_fails)) == [
        "bind failed: PackError: sample: bind it with a fleet"
    ]


class _Nameless(RawObject):
    """A construct that writes an object without a name."""

    def to_dict(self) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}


def _bind_nameless(ctx: PackContext, config: PackConfig) -> None:
    _Nameless(ctx.scope, "nameless", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})


def test_an_object_without_a_name_is_a_problem() -> None:
    assert check_pack(replace(SAMPLE, config=PackConfig, bind=_bind_nameless)) == [
        "object 1 (ConfigMap) has no metadata.name"
    ]


def test_an_undeclared_namespace_is_a_problem_for_each_object_and_identity() -> None:
    # GIVEN the sample pack declaring another namespace WHEN checked
    # THEN every object and identity that uses "sample" is named; the Flux objects' flux-system is not
    assert check_pack(replace(SAMPLE, namespaces=("other",))) == [
        "Namespace sample uses namespace 'sample', which the pack does not declare (namespaces)",
        "ConfigMap settings uses namespace 'sample', which the pack does not declare (namespaces)",
        "HelmRelease sample uses namespace 'sample', which the pack does not declare (namespaces)",
        "pod identity 'controller' is for namespace 'sample', which the pack does not declare (namespaces)",
    ]


def _bind_in_hub_namespace(ctx: PackContext, config: PackConfig) -> None:
    RawObject(
        ctx.scope,
        "composite",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "staging-usw2"}},
    )


@pytest.fixture(scope="module")
def example_fleet() -> Fleet:
    """The example fleet, whose workload clusters include staging-usw2."""
    return load_fleet(ROOT).fleet


def test_a_workload_clusters_hub_namespace_is_the_fleets(example_fleet: Fleet) -> None:
    # GIVEN a pack that writes into a workload cluster's hub namespace
    pack = replace(SAMPLE, config=PackConfig, bind=_bind_in_hub_namespace, namespaces=())
    # WHEN checked with the fleet THEN that is fine; without it THEN it is an undeclared namespace
    assert check_pack(pack, fleet=example_fleet) == []
    assert check_pack(pack) == [
        "ConfigMap c uses namespace 'staging-usw2', which the pack does not declare (namespaces)"
    ]


def _bind_checks_nothing_made(ctx: PackContext, config: PackConfig) -> None:
    ctx.health_checks.append(
        NamespacedObjectKindReference(api_version="v1", kind="ConfigMap", name="settings", namespace="sample")
    )


def test_a_health_check_on_an_object_the_pack_did_not_make_is_a_problem() -> None:
    assert check_pack(replace(SAMPLE, config=PackConfig, bind=_bind_checks_nothing_made)) == [
        "health check ConfigMap sample/settings names no object the pack made"
    ]
