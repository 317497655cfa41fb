"""Tests for fluxplane.config.models.fleet: repositories, Flux settings, AWS data, the definition files and
the fleet."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from fluxplane.config import models

REPOSITORIES = {"platform": {"url": "ssh://git@example.com/org/fleet.git"}}


def _errors(model: type[models.Model], data: Any) -> list[tuple[tuple[str | int, ...], str, str]]:
    with pytest.raises(ValidationError) as exc:
        model.model_validate(data)
    return [(tuple(e["loc"]), e["type"], e["msg"]) for e in exc.value.errors(include_url=False)]


# -- Repository ----------------------------------------------------------------------------------


def test_repository_defaults() -> None:
    # GIVEN only a URL WHEN validated THEN branch, secretRef and path take their defaults
    repo = models.Repository.model_validate({"url": "https://example.com/org/fleet.git"})
    assert (repo.url, repo.branch, repo.secret_ref, repo.path) == (
        "https://example.com/org/fleet.git",
        "main",
        "flux-system",
        None,
    )


def test_repository_secret_ref_may_be_null_for_a_public_repository() -> None:
    # GIVEN secretRef null WHEN validated THEN there is no secret
    repo = models.Repository.model_validate({"url": "https://example.com/x.git", "secretRef": None})
    assert repo.secret_ref is None


@pytest.mark.parametrize("url", ["git@github.com:org/fleet.git", "http://example.com/x.git", "ssh://has space/x"])
def test_repository_url_must_be_ssh_or_https(url: str) -> None:
    # GIVEN a URL Flux cannot clone over ssh:// or https:// WHEN validated THEN the pattern fails
    assert [(loc, kind) for loc, kind, _ in _errors(models.Repository, {"url": url})] == [
        (("url",), "string_pattern_mismatch")
    ]


@pytest.mark.parametrize("path", ["dist/platform", ".", "a.b/c_d-e"])
def test_repository_path_accepts_relative_paths(path: str) -> None:
    # GIVEN a relative path WHEN validated THEN it is kept
    assert models.Repository.model_validate({"url": "ssh://x/y", "path": path}).path == path


@pytest.mark.parametrize("path", ["/abs", "a//b", "a/", ""])
def test_repository_path_refuses_absolute_and_malformed_paths(path: str) -> None:
    # GIVEN a path that is not a clean relative path WHEN validated THEN the pattern fails
    assert [(loc, kind) for loc, kind, _ in _errors(models.Repository, {"url": "ssh://x/y", "path": path})] == [
        (("path",), "string_pattern_mismatch")
    ]


@pytest.mark.parametrize("path", ["..", "a/../b", "../x"])
def test_repository_path_refuses_parent_segments(path: str) -> None:
    # GIVEN a path that leaves the repository WHEN validated THEN the validator says why
    assert _errors(models.Repository, {"url": "ssh://x/y", "path": path}) == [
        (
            ("path",),
            "value_error",
            f"Value error, must stay inside the repository (no '..' segments), got \"{path}\"",
        )
    ]


def test_repository_aliases_are_the_only_accepted_names() -> None:
    # GIVEN the Python field name instead of the YAML key WHEN validated THEN it is an unknown key
    assert _errors(models.Repository, {"url": "ssh://x/y", "secret_ref": "x"}) == [
        (("secret_ref",), "extra_forbidden", "Extra inputs are not permitted")
    ]


# -- FluxSettings --------------------------------------------------------------------------------


def test_flux_settings_defaults() -> None:
    # GIVEN nothing WHEN validated THEN Flux's usual intervals are used
    flux = models.FluxSettings()
    assert (flux.interval, flux.retry_interval, flux.timeout) == ("10m", "2m", "5m")


@pytest.mark.parametrize("value", ["1h30m", "30s", "500ms", "1.5h"])
def test_flux_settings_accept_go_durations(value: str) -> None:
    # GIVEN a Go duration WHEN validated THEN it is kept
    assert models.FluxSettings.model_validate({"interval": value}).interval == value


@pytest.mark.parametrize("value", ["10 minutes", "10", "m", "1d"])
def test_flux_settings_refuse_other_durations(value: str) -> None:
    # GIVEN something that is not a Go duration WHEN validated THEN the pattern fails
    assert [(loc, kind) for loc, kind, _ in _errors(models.FluxSettings, {"timeout": value})] == [
        (("timeout",), "string_pattern_mismatch")
    ]


# -- AwsData -------------------------------------------------------------------------------------


def test_aws_data_is_empty_by_default() -> None:
    base = models.BaseFile.model_validate({"repositories": REPOSITORIES, "management": {"region": "us-west-2"}})
    assert base.aws_data == models.AwsData(instanceTypes=[], regions={}, kubernetesVersions=[])


def test_aws_data_accepts_well_formed_additions() -> None:
    # GIVEN a type, a region with its zones and a version WHEN validated THEN they are kept as written
    data = models.AwsData.model_validate(
        {
            "instanceTypes": ["m99g.large"],
            "regions": {"xx-new-1": ["xx-new-1a", "xx-new-1b", "xx-new-1c"]},
            "kubernetesVersions": ["1.38"],
        }
    )
    assert (data.instance_types, data.regions, data.kubernetes_versions) == (
        ["m99g.large"],
        {"xx-new-1": ["xx-new-1a", "xx-new-1b", "xx-new-1c"]},
        ["1.38"],
    )


@pytest.mark.parametrize(
    ("data", "loc", "kind"),
    [
        ({"instanceTypes": ["m9g"]}, ("instanceTypes", 0), "string_pattern_mismatch"),
        ({"instanceTypes": ["m9g.large", "m9g.large"]}, ("instanceTypes",), "value_error"),
        ({"regions": {"Frankfurt": ["eu-central-1a", "eu-central-1b"]}}, ("regions", "Frankfurt", "[key]"), None),
        ({"regions": {"xx-new-1": ["xx-new-1a"]}}, ("regions", "xx-new-1"), "too_short"),
        ({"regions": {"xx-new-1": ["xx-new-1a", "xx-new-1-b"]}}, ("regions", "xx-new-1", 1), None),
        ({"regions": {"xx-new-1": ["xx-new-1a", "xx-new-2b"]}}, ("regions",), "value_error"),
        ({"regions": {"xx-new-1": ["xx-new-1a", "xx-new-1a"]}}, ("regions",), "value_error"),
        ({"kubernetesVersions": ["1.4"]}, ("kubernetesVersions", 0), "string_pattern_mismatch"),
        ({"kubernetesVersions": [1.38]}, ("kubernetesVersions",), "value_error"),
        ({"zones": {}}, ("zones",), "extra_forbidden"),
    ],
    ids=[
        "type-without-size",
        "repeated-type",
        "region-name",
        "one-zone",
        "zone-name",
        "zone-of-another-region",
        "repeated-zone",
        "one-digit-minor",
        "unquoted-version",
        "unknown-key",
    ],
)
def test_aws_data_is_checked_strictly(data: dict[str, Any], loc: tuple[str | int, ...], kind: str | None) -> None:
    # GIVEN awsData that is not of the documented shape WHEN validated THEN the field is named
    ((found_loc, found_kind, _),) = _errors(models.AwsData, data)
    assert found_loc == loc
    assert kind is None or found_kind == kind


def test_aws_data_zone_names_start_with_their_region() -> None:
    assert _errors(models.AwsData, {"regions": {"xx-new-1": ["xx-new-1a", "xx-new-2b"]}}) == [
        (
            ("regions",),
            "value_error",
            "Value error, zones of xx-new-1 are named xx-new-1 and a letter (xx-new-1a, xx-new-1b, ...), "
            'got "xx-new-2b"',
        )
    ]


def test_aws_data_versions_must_be_quoted() -> None:
    ((_, _, message),) = _errors(models.AwsData, {"kubernetesVersions": [1.38]})
    assert message.endswith("YAML reads an unquoted version as a number (1.30 becomes 1.3), so quote it")


# -- files ---------------------------------------------------------------------------------------


def test_base_file_requires_repositories_and_management() -> None:
    # GIVEN an empty base WHEN validated THEN both required sections are missing
    assert [(loc, kind) for loc, kind, _ in _errors(models.BaseFile, {})] == [
        (("repositories",), "missing"),
        (("management",), "missing"),
    ]


def test_base_file_defaults() -> None:
    # GIVEN the required sections only WHEN validated THEN flux, clusterDefaults and packs are defaulted
    base = models.BaseFile.model_validate({"repositories": REPOSITORIES, "management": {"region": "us-west-2"}})
    assert base.flux == models.FluxSettings()
    assert base.cluster_defaults == {}
    assert base.packs == {}


def test_environment_file_may_be_empty() -> None:
    # GIVEN an empty environment file WHEN validated THEN it has no clusters, defaults or packs
    env = models.EnvironmentFile.model_validate({})
    assert (env.cluster_defaults, env.packs, env.clusters) == ({}, {}, [])


def test_environment_file_refuses_base_only_keys() -> None:
    # GIVEN a key only the base file may set WHEN validated THEN it is unknown here
    assert [(loc, kind) for loc, kind, _ in _errors(models.EnvironmentFile, {"repositories": {}})] == [
        (("repositories",), "extra_forbidden")
    ]


def test_the_file_keys_are_the_documented_ones() -> None:
    # GIVEN the keys the documentation describes WHEN compared with the models' aliases THEN they agree
    base_keys = tuple(field.alias or name for name, field in models.BaseFile.model_fields.items())
    environment_keys = tuple(field.alias or name for name, field in models.EnvironmentFile.model_fields.items())
    assert base_keys == (
        "repositories",
        "flux",
        "management",
        "clusterNetwork",
        "clusterDefaults",
        "packs",
        "sealingKey",
        "teams",
        "accounts",
        "awsData",
    )
    assert environment_keys == ("clusterDefaults", "packs", "clusters")


# -- Fleet ---------------------------------------------------------------------------------------


def _fleet() -> models.Fleet:
    def cluster(name: str) -> models.WorkloadCluster:
        return models.WorkloadCluster.model_validate({"name": name, "region": "us-west-2"})

    return models.Fleet(
        repositories=models.Repositories.model_validate(REPOSITORIES),
        flux=models.FluxSettings(),
        management=models.ManagementCluster.model_validate({"region": "us-west-2"}),
        environments=(
            models.Environment(name="production", file="p", packs={}, clusters=(cluster("p1"), cluster("p2"))),
            models.Environment(name="staging", file="s", packs={}, clusters=(cluster("s1"),)),
        ),
    )


def test_fleet_clusters_lists_every_workload_cluster_in_definition_order() -> None:
    # GIVEN two environments WHEN their clusters are listed THEN environment by environment, in order
    assert [cluster.name for cluster in _fleet().clusters] == ["p1", "p2", "s1"]
