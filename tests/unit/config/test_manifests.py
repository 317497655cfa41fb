"""The definition's plain manifests (fluxplane.config.manifests): environments/manifests/<environment>/[<cluster>/]
<layer>/*.yaml read per workload cluster, and what Flux could not apply refused with its file and document."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.config.manifests import MANIFESTS_DIR, object_problems, read_manifests
from fluxplane.errors import ConfigError

ENVIRONMENTS = {"staging": ["staging-1", "staging-2"]}


def config_map(name: str, namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}}


def put(root: Path, relative: str, *documents: Any) -> None:
    path = root / MANIFESTS_DIR / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))


def shown(path: Path) -> str:
    return path.name


def read(root: Path) -> dict[str, list[tuple[str, str, str, list[str]]]]:
    """Per cluster: each file's layer, scope, name and the names of its objects."""
    return {
        cluster: [
            (item.layer, item.scope, item.name, [d["metadata"]["name"] for d in item.documents]) for item in files
        ]
        for cluster, files in read_manifests(root, ENVIRONMENTS, shown).items()
    }


def test_a_cluster_gets_its_environment_s_files_and_its_own_in_layer_order(tmp_path: Path) -> None:
    # GIVEN an apps file for the environment, and a controllers file for staging-1 alone
    put(tmp_path, "staging/apps/web.yaml", config_map("web"))
    put(tmp_path, "staging/staging-1/controllers/ops.yaml", config_map("ops"), config_map("ops-2"))

    # WHEN read THEN staging-1 gets both, controllers first; staging-2 the environment's alone
    assert read(tmp_path) == {
        "staging-1": [
            ("controllers", "cluster", "ops.yaml", ["ops", "ops-2"]),
            ("apps", "environment", "web.yaml", ["web"]),
        ],
        "staging-2": [("apps", "environment", "web.yaml", ["web"])],
    }


def test_no_manifests_folder_is_no_manifests(tmp_path: Path) -> None:
    assert read_manifests(tmp_path, ENVIRONMENTS, shown) == {}


def test_every_problem_is_reported_at_once_with_its_file(tmp_path: Path) -> None:
    # GIVEN an unknown environment, a folder that is neither a layer nor a cluster, and the same object twice
    put(tmp_path, "prod/apps/web.yaml", config_map("web"))
    put(tmp_path, "staging/extras/web.yaml", config_map("web"))
    put(tmp_path, "staging/apps/a.yaml", config_map("web"))
    put(tmp_path, "staging/staging-1/apps/b.yaml", config_map("web"))

    # WHEN read THEN one ConfigError lists each problem
    with pytest.raises(ConfigError) as caught:
        read_manifests(tmp_path, ENVIRONMENTS, shown)
    assert caught.value.problems == (
        "prod: not an environment's folder (environments: staging)",
        "extras: neither a layer (controllers, configs, apps) nor a cluster of environment 'staging' "
        "(clusters: staging-1, staging-2)",
        "b.yaml: ConfigMap 'web' is also in a.yaml, for cluster 'staging-1''s apps",
    )


@pytest.mark.parametrize(
    ("document", "problems"),
    [
        (["a list"], ["f.yaml:1: expected a Kubernetes object (a mapping), got list"]),
        (
            {"kind": "ConfigMap", "metadata": {"name": "Web"}},
            [
                "f.yaml:1: apiVersion: required, a string",
                'f.yaml:1: metadata.name: expected a Kubernetes name (a DNS-1123 subdomain), got "Web"',
            ],
        ),
        (
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"}},
            [
                "f.yaml:1: a plain Secret would put its values in Git: seal it with `fluxplane seal` "
                "(environments/secrets/) instead"
            ],
        ),
        (config_map("web"), []),
    ],
)
def test_what_flux_could_not_apply_is_named_with_its_document(document: Any, problems: list[str]) -> None:
    assert object_problems(document, "f.yaml:1") == problems
