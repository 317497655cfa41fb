"""Tests for fluxplane.config.problems: one readable line per validation problem."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from fluxplane.config import models
from fluxplane.config.merge import Layer, Origins
from fluxplane.config.problems import allowed_keys, closest, describe_validation_error, show, show_url

FILE = "environments/staging.yaml"

# -- show -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("UPPER", '"UPPER"'),
        ("", '""'),
        ('say "hi"', '"say \\"hi\\""'),
        ("é", '"é"'),
        (0, "0"),
        (1.3, "1.3"),
        (True, "true"),
        (False, "false"),
        (None, "null"),
        ({"a": 1}, "a mapping"),
        ([1, 2], "a list"),
    ],
)
def test_show_renders_values_unambiguously(value: Any, expected: str) -> None:
    # GIVEN a value found in the input WHEN shown THEN strings are quoted and containers named
    assert show(value) == expected


def test_show_escapes_characters_that_would_break_or_hide_in_the_line() -> None:
    # GIVEN a line separator and a zero-width space WHEN shown THEN they appear as escapes
    assert show("a\u2028b\u200b") == '"a\\u2028b\\u200b"'


def test_show_shortens_long_strings_and_keeps_the_closing_quote() -> None:
    # GIVEN a 100-character string WHEN shown THEN it is cut with an ellipsis inside the quotes
    assert show("x" * 100) == '"' + "x" * 76 + '..."'


def test_show_shortens_long_numbers() -> None:
    # GIVEN a huge number WHEN shown THEN it is cut to 80 characters
    assert show(10**100) == "1" + "0" * 76 + "..."


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("retentionDay", "retentionDays"),
        ("nodegroups", "nodeGroups"),
        ("cluster_defaults", "clusterDefaults"),
        ("metrics-servr", "metrics-server"),
        ("us-west2", "us-west-2"),
        # a short name is three quarters alike to none: no guess rather than a wrong one
        ("size", None),
        ("kee", None),
        ("istio", None),
    ],
)
def test_closest_offers_what_a_typo_meant_and_nothing_else(value: str, expected: str | None) -> None:
    known = ["retentionDays", "nodeGroups", "clusterDefaults", "metrics-server", "us-west-2", "diskSize", "key"]
    assert closest(value, known) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://charts.example.com/stable", '"https://charts.example.com/stable"'),
        ("oci://localhost:5000/charts/podinfo", '"oci://localhost:5000/charts/podinfo"'),
        ("https://user:t0ken@example.com/x", '"https://***@example.com/x"'),
        ("https://t0ken@example.com/x", '"https://***@example.com/x"'),
        # an SSH login is a name, not a credential; a password in an SSH URL is one
        ("ssh://git@example.com/org/fleet.git", '"ssh://git@example.com/org/fleet.git"'),
        ("git@github.com:org/fleet.git", '"git@github.com:org/fleet.git"'),
        ("ssh://git:pw@example.com/org/fleet.git", '"ssh://***@example.com/org/fleet.git"'),
        # a token may hold a '/' (base64) or an '@': everything up to the last '@' is hidden
        ("https://user:a/b@c@example.com/x", '"https://***@example.com/x"'),
        ("user:t0ken@example.com/x", '"***@example.com/x"'),
        ("https://example.com/x?access_token=t0ken", '"https://example.com/x?***"'),
        ("https://example.com/x#t0ken", '"https://example.com/x#***"'),
        ("1password://user:t0ken@example.com", '"***@example.com"'),
    ],
)
def test_show_url_hides_credentials(url: str, expected: str) -> None:
    # GIVEN a URL found in the input WHEN shown THEN what could be a credential is not
    assert show_url(url) == expected


# -- allowed_keys ---------------------------------------------------------------------------------


def test_allowed_keys_of_a_model_are_its_yaml_keys_in_order() -> None:
    # GIVEN the base file model WHEN asked at the top level THEN its aliases are listed
    assert allowed_keys(models.BaseFile, ()) == [
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
    ]


def test_allowed_keys_follow_fields_and_list_items() -> None:
    # GIVEN a location inside a list of node groups and their taints
    # WHEN asked THEN the nested models' keys are listed
    assert allowed_keys(models.WorkloadCluster, ("nodeGroups", 0)) == [
        "name",
        "instanceTypes",
        "capacityType",
        "minSize",
        "maxSize",
        "desiredSize",
        "diskSize",
        "labels",
        "taints",
    ]
    assert allowed_keys(models.WorkloadCluster, ("nodeGroups", 0, "taints", 0)) == ["key", "value", "effect"]


def test_allowed_keys_see_through_optional_fields() -> None:
    # GIVEN a nested model reached through a required field WHEN asked THEN its keys are listed
    assert allowed_keys(models.BaseFile, ("repositories", "platform")) == [
        "url",
        "branch",
        "secretRef",
        "path",
    ]


@pytest.mark.parametrize(
    ("model", "loc"),
    [
        (models.EnvironmentFile, ("clusters", 0)),
        (models.EnvironmentFile, ("packs",)),
        (models.BaseFile, ("nope",)),
        (models.BaseFile, ("repositories", "platform", "url")),
    ],
    ids=["free-form-list-item", "free-form-mapping", "unknown-field", "scalar"],
)
def test_allowed_keys_are_unknown_where_no_model_applies(model: type[BaseModel], loc: tuple[str | int, ...]) -> None:
    # GIVEN a location that is not a model (free-form data, a scalar, an unknown key) WHEN asked THEN []
    assert allowed_keys(model, loc) == []


# -- describe_validation_error --------------------------------------------------------------------


class _Tag(BaseModel):
    model_config = ConfigDict(extra="forbid")
    key: str


class _Sample(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field("a", pattern=models.DNS_LABEL, max_length=5)
    count: int = Field(1, ge=1, le=9)
    positive: int = Field(1, gt=0)
    small: int = Field(1, lt=10)
    ratio: float = 1.0
    flag: bool = True
    mode: Literal["a", "b"] = "a"
    items: list[int] = Field(default_factory=list)
    pair: tuple[int, ...] = ()
    tags: list[_Tag] = Field(default_factory=list)
    nested: _Tag | None = None
    several: list[str] = Field(["x"], min_length=1, max_length=3)
    mapping: dict[str, int] = Field(default_factory=dict)
    required: str
    checked: str = "ok"

    @field_validator("checked")
    @classmethod
    def _check(cls, value: str) -> str:
        if value != "ok":
            raise ValueError(f"must be 'ok', not {value!r}")
        return value


SAMPLE_ALLOWED = (
    "allowed: name, count, positive, small, ratio, flag, mode, items, pair, tags, nested, several, mapping, "
    "required, checked"
)


def _lines(data: dict[str, Any], origins: Origins | None = None, mount: tuple[str | int, ...] = ()) -> list[str]:
    with pytest.raises(ValidationError) as exc:
        _Sample.model_validate(data)
    return describe_validation_error(exc.value, _Sample, origins or Origins([Layer(FILE, data)]), mount)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({}, "environments/staging.yaml: required: required field is missing"),
        (
            {"zzz": 1},
            f"environments/staging.yaml: zzz: unknown field; {SAMPLE_ALLOWED}",
        ),
        (
            {"flgs": True},
            f'environments/staging.yaml: flgs: unknown field; did you mean "flag"? {SAMPLE_ALLOWED}',
        ),
        (
            {"tags": [{"key": "k", "kee": 1}]},
            "environments/staging.yaml: tags[0].kee: unknown field; allowed: key",
        ),
        (
            {"nested": {"kee": 1, "key": "k"}},
            "environments/staging.yaml: nested.kee: unknown field; allowed: key",
        ),
        (
            {"name": "A"},
            "environments/staging.yaml: name: expected a DNS-1123 label (lower-case letters, digits and '-', "
            'starting and ending with a letter or digit), got "A"',
        ),
        ({"name": "abcdef"}, 'environments/staging.yaml: name: expected at most 5 characters, got 6: "abcdef"'),
        ({"count": 0}, "environments/staging.yaml: count: expected an integer >= 1, got 0"),
        ({"count": 10}, "environments/staging.yaml: count: expected an integer <= 9, got 10"),
        ({"positive": 0}, "environments/staging.yaml: positive: expected an integer > 0, got 0"),
        ({"small": 10}, "environments/staging.yaml: small: expected an integer < 10, got 10"),
        ({"count": "two"}, 'environments/staging.yaml: count: expected an integer, got "two"'),
        ({"count": 1.5}, "environments/staging.yaml: count: expected an integer, got 1.5"),
        ({"count": [1]}, "environments/staging.yaml: count: expected an integer, got a list"),
        ({"name": 3}, "environments/staging.yaml: name: expected a string, got 3"),
        ({"flag": "maybe"}, 'environments/staging.yaml: flag: expected true or false, got "maybe"'),
        ({"mode": "c"}, "environments/staging.yaml: mode: expected one of 'a' or 'b', got \"c\""),
        ({"items": "x"}, 'environments/staging.yaml: items: expected a list, got "x"'),
        ({"pair": 5}, "environments/staging.yaml: pair: expected a list, got 5"),
        ({"mapping": []}, "environments/staging.yaml: mapping: expected a mapping, got a list"),
        ({"nested": "k"}, 'environments/staging.yaml: nested: expected a mapping, got "k"'),
        ({"tags": [None]}, "environments/staging.yaml: tags[0]: expected a mapping, got null"),
        ({"several": []}, "environments/staging.yaml: several: expected at least 1 item(s), got 0"),
        ({"several": list("abcd")}, "environments/staging.yaml: several: expected at most 3 item(s), got 4"),
        (
            {"mapping": {"bad key!": "x"}},
            'environments/staging.yaml: mapping["bad key!"]: expected an integer, got "x"',
        ),
        ({"checked": "no"}, "environments/staging.yaml: checked: must be 'ok', not 'no'"),
        (
            {"ratio": "abc"},
            "environments/staging.yaml: ratio: "
            'input should be a valid number, unable to parse string as a number, got "abc"',
        ),
    ],
    ids=lambda value: None if isinstance(value, dict) else value.split(": ")[1],
)
def test_each_kind_of_problem_reads_as_one_line(data: dict[str, Any], expected: str) -> None:
    # GIVEN one bad field (and the required field set, unless it is the one missing)
    payload = {"required": "x", **data} if data else data

    # WHEN the validation error is described
    # THEN it is one line: file, field path, what is allowed, what was found
    assert _lines(payload) == [expected]


def test_all_problems_of_one_validation_are_reported_in_order() -> None:
    # GIVEN three bad fields WHEN described THEN there is one line per problem, in field order
    assert _lines({"name": "A", "count": 0, "zzz": 1}) == [
        "environments/staging.yaml: name: expected a DNS-1123 label (lower-case letters, digits and '-', "
        'starting and ending with a letter or digit), got "A"',
        "environments/staging.yaml: count: expected an integer >= 1, got 0",
        "environments/staging.yaml: required: required field is missing",
        f"environments/staging.yaml: zzz: unknown field; {SAMPLE_ALLOWED}",
    ]


def test_locations_are_mapped_through_origins_and_the_mount() -> None:
    # GIVEN a model validated at ("podinfo",) of a packs section written under clusters[2].packs
    data = {"required": "x", "count": 0}
    origins = Origins([Layer(FILE, {"podinfo": data}, prefix=("clusters", 2, "packs"))])

    # WHEN described with that mount
    lines = _lines(data, origins, mount=("podinfo",))

    # THEN the line names the file and the full path the user wrote
    assert lines == ["environments/staging.yaml: clusters[2].packs.podinfo.count: expected an integer >= 1, got 0"]


def test_a_bad_mapping_key_is_named_as_the_key() -> None:
    # GIVEN awsData.regions keyed by something that is not a region
    raw = {"awsData": {"regions": {"Frankfurt": ["eu-central-1a", "eu-central-1b"]}}}
    with pytest.raises(ValidationError) as exc:
        models.AwsData.model_validate(raw["awsData"])

    # WHEN described THEN the line names the key where it is written, not pydantic's "[key]" marker
    assert describe_validation_error(exc.value, models.AwsData, Origins([Layer(FILE, raw)]), ("awsData",)) == [
        "environments/staging.yaml: awsData.regions.Frankfurt: expected an AWS region such as us-west-2, "
        'got "Frankfurt"'
    ]


def test_a_location_no_file_wrote_is_described_by_its_path_alone() -> None:
    # GIVEN origins that know no file for the location WHEN described THEN only the field path is given
    assert _lines({"count": 0}, Origins([])) == [
        "count: expected an integer >= 1, got 0",
        "required: required field is missing",
    ]


@pytest.mark.parametrize(
    ("pattern", "value", "help_text"),
    [
        (models.DURATION, "10 minutes", "expected a duration such as 30s, 5m or 1h30m"),
        (models.GIT_URL, "ftp://x/y", "expected an ssh:// or https:// Git URL"),
        (models.AWS_REGION, "uswest2", "expected an AWS region such as us-west-2"),
        (models.KUBERNETES_VERSION, "1.3", 'expected a Kubernetes minor version such as "1.33" (quoted)'),
        (models.GIT_BRANCH, "a b", "expected a Git branch name"),
        (
            models.RELATIVE_PATH,
            "/abs",
            "expected a relative path such as dist/platform (no leading '/', no '..')",
        ),
        (models.INSTANCE_TYPE, "large", "expected an EC2 instance type such as m7i.large"),
        (models.AVAILABILITY_ZONE, "us-west-2", "expected an availability zone name such as us-west-2a"),
        (r"^z+$", "a", "expected a value matching ^z+$"),
    ],
    ids=["duration", "git-url", "region", "kubernetes", "branch", "path", "instance", "zone", "unknown-pattern"],
)
def test_pattern_mismatches_say_what_the_pattern_allows(pattern: str, value: str, help_text: str) -> None:
    # GIVEN a field constrained by one of the fleet's patterns
    class Patterned(BaseModel):
        field: str = Field(pattern=pattern)

    with pytest.raises(ValidationError) as exc:
        Patterned.model_validate({"field": value})

    # WHEN described THEN the help text for that pattern is used, with the value found
    assert describe_validation_error(exc.value, Patterned, Origins([Layer(FILE, {})])) == [
        f"environments/staging.yaml: field: {help_text}, got {show(value)}"
    ]


def test_a_git_url_is_shown_without_its_credentials() -> None:
    # GIVEN a Git URL of a scheme Flux does not take, with a user and token in it
    class Repository(BaseModel):
        url: str = Field(pattern=models.GIT_URL)

    with pytest.raises(ValidationError) as exc:
        Repository.model_validate({"url": "http://user:t0ken@example.com/org/app.git"})

    # WHEN described THEN the URL is shown without them
    assert describe_validation_error(exc.value, Repository, Origins([Layer(FILE, {})])) == [
        'environments/staging.yaml: url: expected an ssh:// or https:// Git URL, got "http://***@example.com/org/app.git"'
    ]
