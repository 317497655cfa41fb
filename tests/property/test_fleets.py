"""Properties over generated fleets: deterministic output, references that resolve, DNS-safe names,
and bad input that never escapes as anything but a ConfigError.

The number of examples comes from the Hypothesis profile: "quick" by default (make test), "long"
(1,000 examples each) with ``pytest tests/property --hypothesis-profile=long``."""

from __future__ import annotations

import posixpath
import re
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fluxplane.config.hub import RELEASE_STEPS, SHARED_STEPS, platform_namespace
from fluxplane.errors import ConfigError, FluxplaneError
from fluxplane.packs.registry import PackRegistry
from fluxplane.synth import load_plan, render_plan
from tests.conftest import HUB_PACKS

LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

#: Namespaces the add-ons install into: a workload cluster's name is its hub namespace, so none is named so.
ADD_ON_NAMESPACES = frozenset(namespace for pack in PackRegistry.from_entry_points() for namespace in pack.namespaces)

labels = st.from_regex(r"[a-z][a-z0-9]{0,6}(-[a-z0-9]{1,4})?", fullmatch=True)
regions = st.sampled_from(["us-west-2", "us-east-1", "eu-west-1", "ap-southeast-2"])
versions = st.sampled_from(["1.31", "1.32", "1.33", "1.37"])


def pack_values() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "metrics-server": st.fixed_dictionaries({}, optional={"replicas": st.integers(1, 3)}),
            "podinfo": st.fixed_dictionaries(
                {}, optional={"replicas": st.integers(1, 5), "enabled": st.booleans(), "message": labels}
            ),
        },
    )


@st.composite
def fleets(draw: st.DrawFn) -> dict[str, Any]:
    """A valid definition: base plus 1-3 environments of 0-3 clusters, names unique fleet-wide."""
    env_names = draw(st.lists(labels.filter(lambda n: n != "base"), min_size=1, max_size=3, unique=True))
    taken = {"hub"}
    environments: dict[str, Any] = {}
    for env in env_names:
        clusters = []
        for name in draw(st.lists(labels, max_size=3, unique=True)):
            cluster_name = f"{env}-{name}"[:63].rstrip("-")
            if (
                cluster_name in taken
                or platform_namespace(cluster_name)
                or cluster_name in ADD_ON_NAMESPACES
                or cluster_name in SHARED_STEPS
                or cluster_name.endswith(tuple(f"-{step}" for step in RELEASE_STEPS))
            ):
                continue  # names the loader refuses: see test_loader's bootstrap-step tests
            taken.add(cluster_name)
            clusters.append(
                {
                    "name": cluster_name,
                    "region": draw(regions),
                    "kubernetesVersion": draw(versions),
                    "packs": draw(pack_values()),
                }
            )
        environments[env] = {"packs": draw(pack_values()), "clusters": clusters}
    base = {
        # a public repository: no sealed Git credentials to write
        "repositories": {
            "platform": {"url": "ssh://git@example.com/org/fleet.git", "branch": draw(labels), "secretRef": None}
        },
        # the hub builds the clusters (HUB_PACKS), with packs of its own
        "management": {"name": "hub", "region": draw(regions), "packs": {**HUB_PACKS, **draw(pack_values())}},
        "packs": draw(pack_values()),
    }
    return {"base": base, **environments}


def write(definition: dict[str, Any], root: Path) -> Path:
    (root / "environments").mkdir(parents=True, exist_ok=True)
    for name, data in definition.items():
        text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
        (root / "environments" / f"{name}.yaml").write_text(text)
    return root


SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(fleets())
def test_generated_fleets_render_deterministically_with_resolving_references(definition: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = write(definition, Path(tmp))
        files = render_plan(load_plan(root))
        assert render_plan(load_plan(root)) == files  # the same definition, byte-identical output

    documents = {
        path: [d for d in yaml.safe_load_all(text) if d] for path, text in files.items() if path.endswith(".yaml")
    }
    directories = {posixpath.dirname(p) for p in files if p.endswith("/kustomization.yaml")}
    for path, docs in documents.items():
        for doc in docs:
            if doc.get("apiVersion") == "kustomize.config.k8s.io/v1beta1":
                # every resource a kustomization.yaml lists exists: a file, or a folder with its own
                for entry in doc["resources"]:
                    target = posixpath.normpath(posixpath.join(posixpath.dirname(path), entry))
                    assert target in files or target in directories, (path, entry)
                continue
            name = doc["metadata"]["name"]
            assert SUBDOMAIN.fullmatch(name) and len(name) <= 253, (path, name)
            if doc["kind"] in ("Namespace", "Kustomization", "HelmRelease"):
                assert LABEL.fullmatch(name), (path, name)
    # every Flux dependsOn names a Flux Kustomization of the same cluster; every spec.path is a dist/ folder
    flux: dict[str, list[dict[str, Any]]] = {}
    for path, docs in documents.items():
        parts = path.split("/")
        if parts[1] == "clusters" and "overlays" not in parts:
            flux.setdefault(parts[2], []).extend(
                d for d in docs if d.get("apiVersion", "").startswith("kustomize.toolkit.fluxcd.io")
            )
    for cluster, kustomizations in flux.items():
        names = {k["metadata"]["name"] for k in kustomizations}
        for kustomization in kustomizations:
            for dependency in kustomization["spec"].get("dependsOn", []):
                assert dependency["name"] in names, (cluster, dependency)
            assert kustomization["spec"]["path"].removeprefix("./dist/") in directories, (cluster, kustomization)


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(["", "..", "../etc", "a/b", "UPPER", "-x", "1.33", "hub", "\x00", "é", "\u202e"]),
)
keys = st.one_of(
    st.sampled_from(
        [
            "repositories",
            "platform",
            "url",
            "management",
            "name",
            "region",
            "clusters",
            "packs",
            "clusterDefaults",
            "nodeGroups",
            "minSize",
            "maxSize",
            "desiredSize",
            "metrics-server",
            "podinfo",
            "replicas",
            "enabled",
            "kubernetesVersion",
            "flux",
            "interval",
            "branch",
            "path",
            "secretRef",
            "taints",
            "labels",
        ]
    ),
    st.text(max_size=8),
)


def _nested(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=5))


values = st.recursive(scalars, _nested, max_leaves=25)


@SETTINGS
@given(base=st.dictionaries(keys, values, max_size=6), env=values, text=st.text(max_size=40))
def test_bad_input_is_a_config_error_never_a_traceback(base: dict[str, Any], env: Any, text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = write({"base": base, "staging": env, "production": text}, Path(tmp))
        try:
            load_plan(root)
        except ConfigError as exc:
            # one line per problem, each naming the file it is about
            assert all(line.startswith(("environments/", str(root))) for line in exc.problems), exc.problems
        except FluxplaneError as exc:  # pragma: no cover - a different kind of error is a bug here
            raise AssertionError(f"unexpected {type(exc).__name__}: {exc}") from exc
