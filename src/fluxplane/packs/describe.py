"""``fluxplane packs list`` and ``fluxplane packs show``: the installed catalogue, for people.

``show`` prints what a user needs to enable a pack: its place in the dependency order, its config
keys with types and defaults (from the pack's model, so they cannot drift), what it emits with its
defaults, and an example section for the definition.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Iterator, Sequence
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from fluxplane.config.models import (
    ClusterNetwork,
    Environment,
    Fleet,
    FluxSettings,
    ManagementCluster,
    Repositories,
    WorkloadCluster,
)
from fluxplane.config.reference import field_rows, markdown_cell
from fluxplane.constructs.base import Root
from fluxplane.constructs.manifest import Manifest
from fluxplane.packs.api import CONFIGS_SUFFIX, Pack, PackContext
from fluxplane.packs.registry import PackRegistry


def _table(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[-1] for row in rows
    ]


def list_packs(registry: PackRegistry) -> str:
    """One line per installed pack: name, version, layer, requires, description."""
    rows = [("NAME", "VERSION", "LAYER", "REQUIRES", "DESCRIPTION")]
    for pack in registry:
        rows.append((pack.name, pack.version, pack.layer, ", ".join(pack.requires) or "-", pack.description))
    return "\n".join(line.rstrip() for line in _table(rows)) + "\n"


def _nested(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, type[BaseModel]]]:
    """Models used by ``model``'s fields (directly, or as list items or mapping values), with their key path."""
    for name, field in model.model_fields.items():
        key = f"{prefix}{field.alias or name}"
        pending: list[Any] = [field.annotation]
        while pending:
            annotation = pending.pop()
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                yield key, annotation
                yield from _nested(annotation, f"{key}.")
            else:
                pending.extend(typing.get_args(annotation))


def _emitted(pack: Pack, section: dict[str, Any] | None = None) -> tuple[list[dict[str, Any]], PackContext] | str:
    try:
        config = pack.config.model_validate(section or {})
    except ValidationError as exc:
        problems = [
            (".".join(str(part) for part in error["loc"]) + ": " if error["loc"] else "")
            + str(error["msg"]).removeprefix("Value error, ")
            for error in exc.errors()
        ]
        return f"(nothing without values: {'; '.join(problems)})"
    fleet = example_fleet()
    # packs whose output follows from the fleet (the Compositions of its cluster shapes, a cluster's composite
    # resource) are shown for a fleet of one default cluster
    context = PackContext(
        Manifest(Root(), "show", path="show.yaml"),
        fleet,
        cluster=fleet.clusters[0] if pack.builds_clusters else None,
    )
    pack.apply(context, config)
    return context.manifest.documents(), context


#: The fleet ``packs show`` renders a pack for: a management cluster and one workload cluster, all defaults.
EXAMPLE_CLUSTER = "example"


def example_fleet() -> Fleet:
    """A fleet of one workload cluster with every default, its VPC range allocated as synth would."""
    cluster = WorkloadCluster.model_validate({"name": EXAMPLE_CLUSTER, "region": "us-west-2"})
    network = cluster.network.model_copy(update={"cidr": next(ClusterNetwork().pool.subnets(new_prefix=16))})
    return Fleet(
        repositories=Repositories.model_validate({"platform": {"url": "ssh://git@example.com/example-org/fleet.git"}}),
        flux=FluxSettings(),
        management=ManagementCluster.model_validate({"region": "us-west-2"}),
        environments=(
            Environment(
                name=EXAMPLE_CLUSTER,
                file=f"environments/{EXAMPLE_CLUSTER}.yaml",
                packs={},
                clusters=(cluster.model_copy(update={"network": network}),),
            ),
        ),
    )


def _example_section(pack: Pack) -> dict[str, Any]:
    """The pack's section with only its required keys, each set to its example (or a placeholder)."""
    section: dict[str, Any] = {}
    for name, field in pack.config.model_fields.items():
        key = field.alias or name
        if field.is_required():
            section[key] = field.examples[0] if field.examples else f"<{name}>"
    return section


def _example(pack: Pack) -> str:
    return yaml.safe_dump({"packs": {pack.name: _example_section(pack)}}, sort_keys=False, default_flow_style=False)


def show_pack(pack: Pack) -> str:
    """A pack in full: what it is, where it sits, its config, what it emits, an example."""
    out = [f"{pack.name} {pack.version}: {pack.description}", ""]
    out.append(f"layer:    {pack.layer} (Flux Kustomization {pack.name!r})")
    if pack.crd_groups:
        out.append(
            f"          its {', '.join(pack.crd_groups)} objects: configs (Kustomization "
            f"{pack.name + CONFIGS_SUFFIX!r}, after {pack.name!r} is Ready)"
        )
    out.append(f"requires: {', '.join(pack.requires) or 'nothing'}")
    if pack.installed_groups:
        out.append(f"CRDs of:  {', '.join(pack.installed_groups)} (what applies their kinds waits for {pack.name!r})")
    out.append(f"runs on:  {pack.placement()}")
    if pack.builds_clusters:
        out.append(
            "builds:   each workload cluster, on the hub (Kustomization 'cluster' of the cluster's chain, in its hub "
            "namespace); shown below for one cluster"
        )
    if pack.namespaces:
        out.append(f"namespaces: {', '.join(pack.namespaces)} (the add-on's: no app runs there)")
    else:
        out.append("namespaces: none of its own")
    out += ["", f"config (packs.{pack.name} in environments/*.yaml, or a cluster's packs):"]
    rows = [("KEY", "TYPE", "DEFAULT", "DESCRIPTION")]
    nested = list(_nested(pack.config))
    parents = {prefix for prefix, _ in nested}
    # A section of its own shows its keys below, not its whole default on one line.
    for prefix, model in [("", pack.config), *nested]:
        for key, kind, default, text in field_rows(model, quote=False):
            path = f"{prefix}.{key}" if prefix else key
            rows.append((path, kind, "(below)" if path in parents else default, text))
    out += ["  " + line.rstrip() for line in _table(rows)]
    emitted = _emitted(pack)
    out += ["", "emits, with the defaults:"]
    if isinstance(emitted, str):
        out.append(f"  {emitted}")
    else:
        documents, context = emitted
        for document in documents:
            metadata = document.get("metadata", {})
            where = f"{metadata['namespace']}/" if metadata.get("namespace") else ""
            group = document["apiVersion"].split("/")[0] if "/" in document["apiVersion"] else ""
            layer = "configs" if group in pack.crd_groups else pack.layer
            out.append(f"  {document['kind']} {where}{metadata.get('name')} ({document['apiVersion']}, {layer})")
        for identity in context.pod_identities:
            policies = [*identity.managed_policies, *(["an inline policy"] if identity.policy else [])]
            out.append(
                f"  IAM role {identity.name!r} for service account {identity.namespace}/{identity.service_account} "
                f"(EKS Pod Identity, made by the hub): {', '.join(policies)}"
            )
    out += ["", "example:"]
    out += ["  " + line for line in _example(pack).splitlines()]
    return "\n".join(out) + "\n"


def pack_markdown(pack: Pack) -> str:
    """A pack for the documentation's reference: what ``packs show`` prints, as Markdown, with the IAM
    policies of its add-on roles in full (shown for its example section when it has required keys)."""
    out = [f"## `{pack.name}`", "", f"{markdown_cell(pack.description)}.", ""]
    facts = [
        ("version", f"`{pack.version}` (the pack's; its charts' and packages' versions are config keys below)"),
        ("layer", f"{pack.layer} (Flux Kustomization `{pack.name}`)"),
        ("runs on", pack.placement()),
        ("requires", ", ".join(f"`{name}`" for name in pack.requires) or "nothing"),
        ("provides", ", ".join(pack.provides) or "nothing"),
        ("CRDs of", ", ".join(f"`{group}`" for group in pack.installed_groups) or "none"),
        ("namespaces", ", ".join(f"`{name}`" for name in pack.namespaces) or "none of its own"),
    ]
    if pack.crd_groups:
        facts.append(
            (
                "configs",
                f"its {', '.join(f'`{group}`' for group in pack.crd_groups)} objects go to Kustomization "
                f"`{pack.name + CONFIGS_SUFFIX}`, after `{pack.name}` is Ready",
            )
        )
    if pack.replaced_by_auto_mode:
        facts.append(("EKS Auto Mode", f"does its work itself ({pack.replaced_by_auto_mode}): left off there"))
    if pack.builds_clusters:
        facts.append(("builds", "each workload cluster, on the hub, from the cluster's own chain"))
    out += ["| | |", "|---|---|", *(f"| {name} | {value} |" for name, value in facts), ""]
    out += [f"Config: `packs.{pack.name}` in `environments/*.yaml`, or a cluster's `packs`.", ""]
    out += ["| key | type | default | description |", "|---|---|---|---|"]
    nested = list(_nested(pack.config))
    parents = {prefix for prefix, _ in nested}
    for prefix, model in [("", pack.config), *nested]:
        for key, kind, default, text in field_rows(model):
            path = f"{prefix}.{key}" if prefix else key
            shown = "(below)" if path in parents else default
            out.append(f"| `{path}` | {markdown_cell(kind)} | {markdown_cell(shown)} | {markdown_cell(text)} |")
    out += ["", "Example:", "", "```yaml", _example(pack).rstrip("\n"), "```", ""]
    section = _example_section(pack)
    emitted = _emitted(pack, section)
    if isinstance(emitted, str):
        out += [f"IAM: {markdown_cell(emitted)}", ""]
        return "\n".join(out)
    documents, context = emitted
    out += ["It emits, for the example:", ""]
    for document in documents:
        metadata = document.get("metadata", {})
        where = f"{metadata['namespace']}/" if metadata.get("namespace") else ""
        group = document["apiVersion"].split("/")[0] if "/" in document["apiVersion"] else ""
        layer = "configs" if group in pack.crd_groups else pack.layer
        out.append(f"- {document['kind']} `{where}{metadata.get('name')}` ({document['apiVersion']}, {layer})")
    out.append("")
    if not context.pod_identities:
        out += ["IAM: no role of its own.", ""]
    for identity in context.pod_identities:
        out.append(
            f"IAM role `{identity.name}`, for service account `{identity.namespace}/{identity.service_account}` "
            "(EKS Pod Identity, made by the hub for each cluster that runs the pack):"
        )
        out.append("")
        for arn in identity.managed_policies:
            out.append(f"- managed policy `{arn}`")
        if identity.policy:
            policy = json.dumps(identity.policy, indent=2)
            out += ["- inline policy:", "", "    ```json", *(f"    {line}" for line in policy.splitlines()), "    ```"]
        out.append("")
    return "\n".join(out)
