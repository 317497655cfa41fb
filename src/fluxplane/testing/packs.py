"""Testing a pack: bind it as synth does and read what it made, and check it against the pack contract.

* :func:`bind_pack` binds a pack to a fresh output file, its config escaped for Flux's post-build
  substitution as synth escapes it, and returns a :class:`BoundPack`: the objects as plain dicts in
  output order, and the health gates, pod identities and timeout the pack declared;
* :func:`check_pack` lists what breaks the contract every pack keeps (a DNS label for a name, a semver
  version, a strict config model, objects that name themselves and stay in the pack's namespaces ...),
  one line each; a pack that keeps it returns ``[]``.

A pack's own tests are then a few lines each::

    from fluxplane.testing import bind_pack, check_pack

    def test_the_pack_keeps_the_contract() -> None:
        assert check_pack(PACK) == []

    def test_the_release_is_health_checked() -> None:
        bound = bind_pack(PACK, {"watchGlobally": False})
        assert [check.name for check in bound.health_checks] == ["reloader"]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, get_args

from pydantic import ValidationError

from fluxplane.config.hub import cluster_namespace
from fluxplane.config.models import Fleet, WorkloadCluster, is_dns_label
from fluxplane.constructs.base import Root
from fluxplane.constructs.kustomization import escaped
from fluxplane.constructs.manifest import Manifest
from fluxplane.constructs.props import FLUX_NAMESPACE, CustomHealthCheck, NamespacedObjectKindReference
from fluxplane.packs.api import (
    SEMVER,
    Layer,
    Pack,
    PackConfig,
    PackContext,
    PodIdentity,
    RunsOn,
)
from fluxplane.packs.registry import declaration_problems

__all__ = ["BoundPack", "bind_pack", "check_pack"]

#: Keys whose value is a namespace an object lives in, installs into or refers to.
NAMESPACE_KEYS = ("namespace", "targetNamespace", "storageNamespace")
#: An API group: a DNS subdomain with at least one dot (``cert-manager.io``).
_API_GROUP = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+")


@dataclass(frozen=True)
class BoundPack:
    """What one bind of a pack made."""

    pack: Pack
    #: The config the pack was bound with, as ``bind`` got it (escaped for post-build substitution).
    config: PackConfig
    #: The objects, as plain dicts in the order synth writes them.
    objects: list[dict[str, Any]]
    health_checks: list[NamespacedObjectKindReference]
    health_check_exprs: list[CustomHealthCheck]
    pod_identities: list[PodIdentity]
    #: The Flux Kustomization's wait the pack asked for, if longer than the default.
    timeout: str | None
    #: The context ``bind`` worked with (its manifest holds the constructs).
    context: PackContext

    def kinds(self) -> list[tuple[str, str]]:
        """(kind, name) of every object, in output order: the shape of what the pack makes, at a glance."""
        return [(document["kind"], document["metadata"]["name"]) for document in self.objects]

    def one(self, kind: str, name: str | None = None) -> dict[str, Any]:
        """The only object of ``kind`` (and ``name``, when given); an AssertionError lists what there is."""
        found = [
            document
            for document in self.objects
            if document["kind"] == kind and (name is None or document["metadata"]["name"] == name)
        ]
        if len(found) != 1:
            wanted = f"{kind} {name}" if name else kind
            raise AssertionError(f"expected one {wanted}, found {len(found)} among {self.kinds()}")
        return found[0]


def bind_pack(
    pack: Pack,
    config: PackConfig | Mapping[str, Any] | None = None,
    *,
    fleet: Fleet | None = None,
    cluster: WorkloadCluster | None = None,
) -> BoundPack:
    """Bind ``pack`` as synth binds it: with ``config`` (its default when None; a mapping is validated by the
    pack's config model, as a ``packs:`` section is), its strings and ``cluster``'s escaped for Flux's
    post-build substitution, and ``fleet`` as written. A pack that builds clusters needs ``fleet`` and the
    ``cluster`` to build."""
    if config is None:
        config = pack.config()
    elif isinstance(config, Mapping):
        config = pack.config.model_validate(dict(config))
    context = PackContext(
        Manifest(Root(), "pack", path="pack.yaml"),
        fleet,
        cluster=None if cluster is None else escaped(cluster),
    )
    bound_config = escaped(config)
    pack.apply(context, bound_config)
    return BoundPack(
        pack=pack,
        config=bound_config,
        objects=context.manifest.documents(),
        health_checks=list(context.health_checks),
        health_check_exprs=list(context.health_check_exprs),
        pod_identities=list(context.pod_identities),
        timeout=context.timeout,
        context=context,
    )


def check_pack(
    pack: Pack,
    example: PackConfig | Mapping[str, Any] | None = None,
    *,
    fleet: Fleet | None = None,
    cluster: WorkloadCluster | None = None,
) -> list[str]:
    """What in ``pack`` breaks the pack contract, one line each (``[]``: nothing).

    The declaration: what the registry refuses, in the registry's words (a name or namespaces that are no
    DNS-1123 labels, a need no cluster offers, a feature fluxplane does not have), then a semver version, a
    one-line description, a known layer and ``runs_on``, DNS labels for the packs it requires, and API groups
    for ``crd_groups`` and ``crds`` (there also ``*.<group>``).
    The config model: a PackConfig that forbids unknown fields, made with no values, or from ``example``
    when some are required. The bind, with that config (and ``fleet`` and ``cluster`` for a pack that
    builds clusters): it succeeds, every object has an apiVersion, a kind and a name, every namespace its
    objects live in, install into or name is one the pack declares (Flux's own for Flux objects, a
    workload cluster's hub namespace of ``fleet``), and every health check names an object it made.
    """
    problems = _declaration_problems(pack)
    config = _config(pack, example, problems)
    if config is None:
        return problems
    try:
        bound = bind_pack(pack, config, fleet=fleet, cluster=cluster)
    except Exception as exc:
        first = str(exc).strip().splitlines()
        problems.append(f"bind failed: {type(exc).__name__}: {first[0] if first else ''}".rstrip(": "))
        return problems
    problems += _object_problems(bound, fleet)
    return problems


def _declaration_problems(pack: Pack) -> list[str]:
    """What the registry refuses (declaration_problems), then what else the contract asks of a declaration."""
    problems = declaration_problems(pack)
    if re.fullmatch(SEMVER, pack.version) is None:
        problems.append(f"version {pack.version!r} is not a semver version such as 1.2.3")
    if not pack.description.strip() or "\n" in pack.description:
        problems.append(f"description {pack.description!r} must be one line of text")
    if pack.layer not in get_args(Layer):
        problems.append(f"layer {pack.layer!r} is not one of {', '.join(get_args(Layer))}")
    if pack.runs_on not in get_args(RunsOn):
        problems.append(f"runs_on {pack.runs_on!r} is not one of {', '.join(get_args(RunsOn))}")
    for required in pack.requires:
        if not is_dns_label(required):
            problems.append(f"requires {required!r}, which is not a DNS-1123 label")
        elif required == pack.name:
            problems.append("requires itself")
    problems += [
        f"crd_groups has {group!r}, which is not an API group"
        for group in pack.crd_groups
        if not _API_GROUP.fullmatch(group)
    ]
    problems += [
        f"crds has {group!r}, which is not an API group nor *.<API group>"
        for group in pack.crds
        if not _API_GROUP.fullmatch(group.removeprefix("*."))
    ]
    return problems


def _config(pack: Pack, example: PackConfig | Mapping[str, Any] | None, problems: list[str]) -> PackConfig | None:
    """The config to bind with, or None (with the problem recorded) when there is none."""
    model = pack.config
    if not (isinstance(model, type) and issubclass(model, PackConfig)):
        problems.append(f"config {model!r} is not a PackConfig model")
        return None
    if model.model_config.get("extra") != "forbid":
        problems.append(f"config {model.__name__} does not forbid unknown fields (model_config extra='forbid')")
    try:
        if example is None:
            return model()
        if isinstance(example, Mapping):
            return model.model_validate(dict(example))
    except ValidationError as exc:
        fields = "; ".join(
            f"{'.'.join(map(str, error['loc'])) or 'config'}: {error['msg']}" for error in exc.errors(include_url=False)
        )
        given = "the example" if example is not None else "no values"
        hint = "" if example is not None else "; give check_pack an example config"
        problems.append(f"config {model.__name__} cannot be made from {given} ({fields}){hint}")
        return None
    if not isinstance(example, model):
        problems.append(f"the example is a {type(example).__name__}, not the pack's {model.__name__}")
        return None
    return example


def _namespaces(node: Any) -> set[str]:
    """Every namespace ``node`` names under NAMESPACE_KEYS, at any depth."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key in NAMESPACE_KEYS and isinstance(value, str):
                found.add(value)
            found |= _namespaces(value)
    elif isinstance(node, list):
        for item in node:
            found |= _namespaces(item)
    return found


def _object_problems(bound: BoundPack, fleet: Fleet | None) -> list[str]:
    problems: list[str] = []
    declared = set(bound.pack.namespaces)
    hub_namespaces = {cluster_namespace(cluster.name) for cluster in fleet.clusters} if fleet else set()
    for index, document in enumerate(bound.objects):
        metadata = document.get("metadata")
        name = metadata.get("name") if isinstance(metadata, dict) else None
        missing = [
            key
            for key, value in (
                ("apiVersion", document.get("apiVersion")),
                ("kind", document.get("kind")),
                ("metadata.name", name),
            )
            if not value
        ]
        if missing:
            problems.append(f"object {index + 1} ({document.get('kind', '?')}) has no {', '.join(missing)}")
            continue
        if document["kind"] == "Composition":
            # its templates are made beside each composite (a hub namespace) or on the workload cluster it addresses
            continue
        used = _namespaces(document)
        if document["kind"] == "Namespace":
            used.add(str(name))
        if str(document["apiVersion"]).split("/")[0].endswith(".toolkit.fluxcd.io"):
            used.discard(FLUX_NAMESPACE)  # its Flux sources and releases live with Flux
        for namespace in sorted(used - declared - hub_namespaces):
            problems.append(
                f"{document['kind']} {name} uses namespace {namespace!r}, which the pack does not declare (namespaces)"
            )
    for identity in bound.pod_identities:
        if identity.namespace not in declared:
            problems.append(
                f"pod identity {identity.name!r} is for namespace {identity.namespace!r}, which the pack does not "
                "declare (namespaces)"
            )
    made = {
        (
            document.get("apiVersion"),
            document.get("kind"),
            document["metadata"].get("name"),
            document["metadata"].get("namespace"),
        )
        for document in bound.objects
        if isinstance(document.get("metadata"), dict)
    }
    for check in bound.health_checks:
        if (check.api_version, check.kind, check.name, check.namespace) not in made:
            problems.append(f"health check {check.kind} {check.namespace}/{check.name} names no object the pack made")
    return problems
