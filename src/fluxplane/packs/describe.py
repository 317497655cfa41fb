"""``fluxplane packs list`` and ``fluxplane packs show``: the installed catalogue, for people.

``show`` prints what a user needs to enable a pack: its place in the dependency order, its config
keys with types and defaults (from the pack's model, so they cannot drift), what it emits with its
defaults, and an example section for the definition.
"""

from __future__ import annotations

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
from fluxplane.config.reference import field_rows
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


def _emitted(pack: Pack) -> tuple[list[dict[str, Any]], PackContext] | str:
    try:
        config = pack.config.model_validate({})
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
    pack.bind(context, config)
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


def _example(pack: Pack) -> str:
    section: dict[str, Any] = {}
    for name, field in pack.config.model_fields.items():
        key = field.alias or name
        if field.is_required():
            section[key] = field.examples[0] if field.examples else f"<{name}>"
    return yaml.safe_dump({"packs": {pack.name: section or {}}}, sort_keys=False, default_flow_style=False)


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
