"""The field types every model of the fleet shares: the patterns, Go durations and the frozen ``Model`` base.

A pattern is a public constant because other layers (the editor, the packs, the app files) check values
against the same rule the definition does.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, StringConstraints, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from fluxplane.config.merge import quoted

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DURATION = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"
GIT_URL = r"^(ssh|https)://[^\s]+$"
AWS_REGION = r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]$"
KUBERNETES_VERSION = r"^1\.[0-9]{2}$"
GIT_BRANCH = r"^[A-Za-z0-9._/-]+$"
RELATIVE_PATH = r"^(\.|[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*)$"
INSTANCE_TYPE = r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$"
#: An availability zone's name: its region's name and a letter.
AVAILABILITY_ZONE = r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9][a-z]$"
#: A CODEOWNERS owner: a GitHub or GitLab @user or @org/team, or an e-mail address.
OWNER = r"^(@[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?|[^@\s]+@[^@\s]+\.[A-Za-z]{2,})$"
#: Characters a Git ref name may hold (git check-ref-format); the rules on sequences are in config.apps.
GIT_REF = r"^[^\s~^:?*\[\\]+$"

#: The longest duration Go's time.Duration holds (int64 nanoseconds): Flux cannot read a longer one.
MAX_DURATION_NS = 2**63 - 1
_DURATION_PART = re.compile(r"([0-9]+)(?:\.([0-9]+))?(ms|s|m|h)")
_UNIT_NS = {"ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}


def duration_ns(value: str) -> int:
    """The nanoseconds of a duration that matches DURATION, as Go's time.ParseDuration counts them."""
    total = 0
    for whole, fraction, unit in _DURATION_PART.findall(value):
        scale = _UNIT_NS[unit]
        total += int(whole) * scale + (int(fraction) * scale // 10 ** len(fraction) if fraction else 0)
    return total


def _flux_duration(value: str) -> str:
    """Flux reads its intervals and timeouts as Go durations, and needs them above zero: at ``0s`` a
    controller requeues its object at once, again and again (a hot loop), and a timeout is over before it
    starts."""
    nanoseconds = duration_ns(value)
    if nanoseconds <= 0:
        raise ValueError(
            f"expected a duration above zero such as 30s, 5m or 1h30m, got {quoted(value, 80)}: at zero Flux "
            "reconciles without pause"
        )
    if nanoseconds > MAX_DURATION_NS:
        raise ValueError(f"expected a duration Go can hold (at most 2562047h47m16s), got {quoted(value, 80)}")
    return value


DnsLabel = Annotated[str, StringConstraints(pattern=DNS_LABEL, max_length=63)]
Duration = Annotated[str, StringConstraints(pattern=DURATION), AfterValidator(_flux_duration)]
AwsRegion = Annotated[str, StringConstraints(pattern=AWS_REGION)]
InstanceType = Annotated[str, StringConstraints(pattern=INSTANCE_TYPE)]
AvailabilityZone = Annotated[str, StringConstraints(pattern=AVAILABILITY_ZONE)]
KubernetesVersion = Annotated[str, StringConstraints(pattern=KUBERNETES_VERSION)]


class Model(BaseModel):
    """Base of the definition's models: frozen, strict about unknown fields.

    A model builds its validator when it first validates (``defer_build``), not when it is imported: a fleet uses
    some of them, and a command reads the definition or not, so none pays for the models it never validates.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=False, defer_build=True)


def quoted_version(value: Any) -> Any:
    """``value`` unless YAML read an unquoted version as a number, which loses digits (1.30 becomes 1.3)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(
            f'expected a Kubernetes minor version such as "1.33" (quoted), got {value}: YAML reads an unquoted '
            "version as a number (1.30 becomes 1.3), so quote it"
        )
    return value


def repeated(values: Sequence[str]) -> list[str]:
    """The values given more than once in ``values``, sorted, each once."""
    counts = Counter(values)
    return sorted(value for value, count in counts.items() if count > 1)


def located(title: str, problems: Sequence[tuple[tuple[str | int, ...], str]]) -> ValidationError:
    """The problems a model's own validator finds in its fields, each at its field's path (``("network",
    "cidr")``), not at the model: raised from the validator, pydantic places them below the model's own path, so a
    problem line names the field to change."""
    return ValidationError.from_exception_data(
        title,
        [
            InitErrorDetails(type=PydanticCustomError("value_error", "{error}", {"error": text}), loc=loc, input=None)
            for loc, text in problems
        ],
    )


def is_dns_label(value: str) -> bool:
    return len(value) <= 63 and re.fullmatch(DNS_LABEL, value) is not None
