"""The library facade: ``fluxplane.synthesize`` and ``fluxplane.check`` for use from Python."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import fluxplane
from fluxplane.synth.app import FleetApp
from tests.conftest import FleetWriter


def test_synthesize_then_check(write_fleet: FleetWriter, tmp_path: Path) -> None:
    # GIVEN a fleet WHEN synthesized from Python THEN dist/ holds what was returned
    root = write_fleet()
    result = fluxplane.synthesize(root)
    assert result.outdir == root / "dist"
    written = {p.relative_to(result.outdir).as_posix() for p in result.outdir.rglob("*") if p.is_file()}
    assert written == set(result.files)
    # THEN check finds nothing to change, until the definition changes
    assert not fluxplane.check(root).stale
    (root / "environments/staging.yaml").write_text("clusters:\n  - {name: staging-2, region: eu-west-1}\n")
    staleness = fluxplane.check(root)
    assert "platform/clusters/staging-2/kustomization.yaml" in staleness.added
    assert "platform/clusters/staging-1/kustomization.yaml" in staleness.removed


def test_the_facade_names_what_the_docs_teach_and_keeps_them_sorted() -> None:
    # GIVEN the facade WHEN its names are looked up THEN each is there, __all__ is sorted, and every name of
    # _HOMES is in it; FleetApp (custom cdk8s objects beside a fleet's) is synth's own class
    assert [name for name in fluxplane.__all__ if not hasattr(fluxplane, name)] == []
    assert fluxplane.__all__ == sorted(fluxplane.__all__)
    assert set(fluxplane._HOMES) | {"__version__"} == set(fluxplane.__all__)
    assert fluxplane.FleetApp is FleetApp


def test_importing_the_facade_loads_no_cdk8s_until_a_name_needs_it() -> None:
    # GIVEN a fresh interpreter WHEN it imports fluxplane and lists its names THEN cdk8s is not loaded;
    # WHEN it asks for FleetApp THEN it is
    code = (
        "import sys, fluxplane; dir(fluxplane); print('cdk8s' in sys.modules); "
        "fluxplane.FleetApp; print('cdk8s' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "True"]


def test_importing_synth_builds_no_validator_until_a_model_validates() -> None:
    # GIVEN a fresh interpreter WHEN it imports fluxplane.synth and the installed packs (what a synth does before
    # it reads the definition) THEN no model has its validator built yet, those every synth uses included (a
    # workload cluster, a HelmRelease's props, a pack's settings): a command pays only for the models it validates;
    # WHEN one is validated THEN it builds and checks as before
    models = (
        "fluxplane.config.models.clusters:WorkloadCluster",
        "fluxplane.config.models.clusters:ExistingCluster",
        "fluxplane.config.models.auto_mode:AutoMode",
        "fluxplane.kinds.app_table:AppTableProps",
        "fluxplane.constructs.helm_release:HelmReleaseProps",
        "fluxplane.constructs.oci_repository:OCIRepositoryProps",
        "fluxplane.constructs.rbac:RoleBindingProps",
        "fluxplane.packs.cert_manager:CertManagerConfig",
    )
    code = f"""
import importlib
import fluxplane.synth
from fluxplane.packs.registry import PackRegistry
PackRegistry.from_entry_points()
def model(name):
    module, cls = name.split(":")
    return getattr(importlib.import_module(module), cls)
print([model(name).__pydantic_complete__ for name in {models!r}])
from pydantic import ValidationError
role_ref = model("fluxplane.constructs.rbac:RoleRef")
try:
    role_ref.model_validate({{"kind": "Role", "name": "x", "extra": 1}})
except ValidationError as error:
    print([item["type"] for item in error.errors()])
print(role_ref.__pydantic_complete__)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == [str([False] * len(models)), "['extra_forbidden']", "True"]
