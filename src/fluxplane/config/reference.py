"""The fleet definition reference, generated from the models so it cannot drift from them.

``fluxplane reference`` prints it, and the documentation's reference page of the definition is made from it
(fluxplane.docs; ``make docs`` writes it, and a test keeps the page in step).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from fluxplane.config import apps, models

#: Sections in reading order: model, heading, where it appears.
SECTIONS: tuple[tuple[type[BaseModel], str, str], ...] = (
    (models.BaseFile, "`environments/base.yaml`", "the shared base of every environment"),
    (models.EnvironmentFile, "`environments/<environment>.yaml`", "one environment, merged over the base"),
    (models.Repositories, "Repositories", "`repositories`"),
    (models.Repository, "Repository", "`repositories.platform`"),
    (models.FluxSettings, "Flux settings", "`flux`"),
    (models.ClusterNetwork, "Cluster network", "`clusterNetwork`"),
    (models.ManagementCluster, "Management cluster", "`management`"),
    (models.WorkloadCluster, "Workload cluster", "each entry of `clusters`, merged over `clusterDefaults`"),
    (models.Network, "Network", "a workload cluster's `network`"),
    (models.Endpoint, "Endpoint", "a workload cluster's `endpoint`"),
    (models.ExistingCluster, "Existing cluster", "a workload cluster's `existing`"),
    (models.NodeGroup, "Node group", "each entry of `nodeGroups`"),
    (models.Taint, "Taint", "each entry of `taints`"),
    (models.AutoMode, "EKS Auto Mode", "a workload cluster's `autoMode`"),
    (models.AutoModeNodeClass, "Auto Mode NodeClass", "each entry of `autoMode.nodeClasses`"),
    (models.EphemeralStorage, "Ephemeral storage", "a NodeClass's `ephemeralStorage`"),
    (models.AutoModeNodePool, "Auto Mode NodePool", "each entry of `autoMode.customNodePools`"),
    (models.Teams, "Teams", "`teams` in `environments/base.yaml`"),
    (models.AwsData, "AWS data", "`awsData` in `environments/base.yaml`"),
    (apps.App, "`environments/apps/<app>.yaml`", "one app; the file name is the app's name"),
    (apps.AppRepository, "App repository", "an app's `repository`"),
    (apps.GitRefSpec, "Git ref", "an app's `repository.ref`"),
    (apps.AwsNeeds, "AWS needs", "an app's `aws`"),
    (apps.Table, "Table", "each entry of `aws.tables`"),
    (apps.Queue, "Queue", "each entry of `aws.queues`"),
    (apps.Bucket, "Bucket", "each entry of `aws.buckets`"),
)

#: Fields users do not write: an app's name is its file name.
IMPLIED: frozenset[tuple[type[BaseModel], str]] = frozenset({(apps.App, "name")})


def _type(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        headings = {model.__name__: heading for model, heading, _ in SECTIONS}
        return f"{headings[name]} (below)" if name in headings else "mapping (below)"
    if "anyOf" in schema:
        kinds = [_type(option, defs) for option in schema["anyOf"] if option.get("type") != "null"]
        nullable = any(option.get("type") == "null" for option in schema["anyOf"])
        return " or ".join(kinds) + (" or null" if nullable else "")
    if "enum" in schema:
        return "one of " + ", ".join(f"`{value}`" for value in schema["enum"])
    if "const" in schema:
        return f"`{schema['const']}`"
    kind = schema.get("type", "any")
    if kind == "array":
        item = _type(schema.get("items", {}), defs)
        bound = f", at least {schema['minItems']}" if "minItems" in schema else ""
        return f"list of {item}{bound}"
    if kind == "object":
        return "mapping"
    if kind == "integer":
        low, high = schema.get("minimum"), schema.get("maximum")
        if low is not None and high is not None:
            return f"integer {low}..{high}"
        return "integer"
    return str(kind)


def _default(name: str, model: type[BaseModel]) -> str:
    field = model.model_fields[name]
    if field.is_required():
        return "**required**"
    if field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
        if isinstance(value, BaseModel):
            value = value.model_dump(by_alias=True)
    else:
        value = field.default
    if isinstance(value, list) and value and isinstance(value[0], BaseModel):
        value = [item.model_dump(by_alias=True) for item in value]
    return f"`{json.dumps(to_jsonable_python(value))}`"


def field_rows(model: type[BaseModel], quote: bool = True) -> list[tuple[str, str, str, str]]:
    """(key, type, default, description) of every field users write, in declaration order."""
    schema = model.model_json_schema(by_alias=True)
    defs = schema.get("$defs", {})
    rows = []
    for name, field in model.model_fields.items():
        if (model, name) in IMPLIED:
            continue
        key = field.alias or name
        default, kind = _default(name, model), _type(schema["properties"][key], defs)
        if not quote:
            default, kind = default.strip("`*"), kind.replace("`", "").replace(" (below)", "")
        rows.append((key, kind, default, field.description or ""))
    return rows


def html_escaped(text: str) -> str:
    """``text`` with ``<`` outside code spans as an entity, so that a placeholder such as ``<name>`` shows on a
    Markdown page instead of passing as an HTML tag."""
    parts = text.split("`")
    return "`".join(part if index % 2 else part.replace("<", "&lt;") for index, part in enumerate(parts))


def markdown_cell(text: str) -> str:
    """``text`` in a Markdown table cell: pipes escaped, ``<`` outside code spans as an entity."""
    return html_escaped(text.replace("|", "\\|"))


def markdown() -> str:
    """The reference as Markdown: one table per model."""
    out: list[str] = []
    for model, heading, where in SECTIONS:
        out.append(f"#### {heading}\n")
        summary = " ".join((model.__doc__ or "").split())
        out.append(f"{summary} Appears as {where}.\n")
        out.append("| key | type | default | description |")
        out.append("|---|---|---|---|")
        for key, kind, default, description in field_rows(model):
            out.append(f"| `{key}` | {kind} | {default} | {description.replace('|', chr(92) + '|')} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"
