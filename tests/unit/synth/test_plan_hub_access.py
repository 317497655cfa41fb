"""Planning checks of the hub's reach into workload clusters: keyless access and sealed Git credentials."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fluxplane.config.loader import load_fleet
from fluxplane.errors import ConfigError
from fluxplane.packs.registry import PackRegistry
from fluxplane.synth.plan import plan_fleet
from tests.conftest import HUB_PACKS, MINIMAL_BASE, FleetWriter

ROLE = "arn:aws:iam::111122223333:role/hub-flux"


def problems(root: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        plan_fleet(load_fleet(root), PackRegistry.from_entry_points())
    return list(caught.value.problems)


def base(**extra: Any) -> dict[str, Any]:
    return {**MINIMAL_BASE, **extra}


def test_keyless_on_a_flux_without_it_is_refused(write_fleet: FleetWriter) -> None:
    # GIVEN a keyless cluster and a hub Flux 2.6 WHEN planned THEN the field and the version are named
    root = write_fleet(
        base=base(
            flux={"version": "2.6"},
            management={**MINIMAL_BASE["management"], "fluxRoleArn": ROLE, "kubernetesVersion": "1.33"},
        ),
        envs={
            "staging": {
                "clusters": [{"name": "a", "region": "us-west-2", "hubAccess": "keyless", "kubernetesVersion": "1.33"}]
            }
        },
    )
    assert problems(root) == [
        "environments/staging.yaml: clusters[0].hubAccess: keyless needs Flux 2.7 or newer on the hub, "
        "flux.version is '2.6'; upgrade Flux and set flux.version, or use kubeconfig"
    ]


def test_keyless_without_the_hubs_flux_role_is_refused(write_fleet: FleetWriter) -> None:
    root = write_fleet(
        base=base(), envs={"staging": {"clusters": [{"name": "a", "region": "us-west-2", "hubAccess": "keyless"}]}}
    )
    (line,) = problems(root)
    assert line.startswith("environments/staging.yaml: clusters[0].hubAccess: keyless needs management.fluxRoleArn")


def test_keyless_with_a_recent_flux_and_a_role_plans(write_fleet: FleetWriter) -> None:
    root = write_fleet(
        base=base(flux={"version": "2.7"}, management={**MINIMAL_BASE["management"], "fluxRoleArn": ROLE}),
        envs={"staging": {"clusters": [{"name": "a", "region": "us-west-2", "hubAccess": "keyless"}]}},
    )
    plan = plan_fleet(load_fleet(root), PackRegistry.from_entry_points())
    assert plan.fleet.clusters[0].hub_access == "keyless"


def test_an_unquoted_or_malformed_flux_version_is_refused(write_fleet: FleetWriter) -> None:
    root = write_fleet(
        base=base(flux={"version": "v2.7"}), envs={"staging": {"clusters": [{"name": "a", "region": "us-west-2"}]}}
    )
    with pytest.raises(ConfigError, match=r"environments/base.yaml: flux.version"):
        load_fleet(root)


def test_a_hub_that_bootstraps_spokes_needs_their_sealed_git_credentials(write_fleet: FleetWriter) -> None:
    # GIVEN a hub with the workload-clusters pack and a platform repository read with a deploy key
    management = {
        **MINIMAL_BASE["management"],
        "packs": {
            "crossplane": {},
            "crossplane-providers": {"roleArn": "arn:aws:iam::111122223333:role/providers"},
            "crossplane-provider-configs": {},
            "eks-compositions": {},
            "workload-clusters": {},
        },
    }
    repositories = {"platform": {"url": "ssh://git@example.com/org/fleet.git"}}
    root = write_fleet(
        base=base(management=management, repositories=repositories),
        envs={"staging": {"clusters": [{"name": "a", "region": "us-west-2"}]}},
    )
    # WHEN planned without environments/secrets/a/flux-system/flux-system.yaml THEN the command is given
    (line,) = problems(root)
    assert line.startswith("environments/secrets/a/flux-system/flux-system.yaml: missing;")
    assert "fluxplane seal --cluster a --namespace flux-system --name flux-system" in line


def test_a_spoke_that_runs_its_own_flux_has_its_git_credentials_from_its_own_bootstrap(
    write_fleet: FleetWriter,
) -> None:
    # GIVEN the same hub, and a cluster whose Flux `flux bootstrap` installed (with its own deploy key)
    management = {**MINIMAL_BASE["management"], "packs": HUB_PACKS}
    repositories = {"platform": {"url": "ssh://git@example.com/org/fleet.git"}}
    root = write_fleet(
        base=base(management=management, repositories=repositories),
        envs={"staging": {"clusters": [{"name": "a", "region": "us-west-2", "bootstrap": "flux"}]}},
    )
    # WHEN planned without sealed Git credentials for it THEN none are asked for: the hub hands it no sync
    plan = plan_fleet(load_fleet(root), PackRegistry.from_entry_points())
    assert plan.fleet.clusters[0].bootstrap == "flux"


def test_a_registered_cluster_needs_the_kubeconfig_the_hub_reaches_it_with(write_fleet: FleetWriter) -> None:
    # GIVEN a registered cluster the hub reaches with a kubeconfig, and another keyless
    existing = {"mode": "registered", "externalSecretsRoleArn": "arn:aws:iam::111122223333:role/old-eso"}
    clusters = [
        {
            "name": "old",
            "region": "us-west-2",
            "kubernetesVersion": "1.34",
            "network": {"cidr": "10.64.0.0/16"},
            "existing": existing,
        },
        {
            "name": "keyless",
            "region": "us-west-2",
            "kubernetesVersion": "1.34",
            "network": {"cidr": "10.65.0.0/16"},
            "hubAccess": "keyless",
            "existing": {**existing, "clusterArn": "arn:aws:eks:us-west-2:111122223333:cluster/keyless"},
        },
    ]
    management = {**MINIMAL_BASE["management"], "packs": HUB_PACKS, "fluxRoleArn": ROLE}
    root = write_fleet(base=base(management=management), envs={"staging": {"clusters": clusters}})
    # WHEN planned without it THEN the first one's is asked for, with the command that seals it; the keyless one
    # needs none
    assert problems(root) == [
        "environments/secrets/hub/old/old-kubeconfig.yaml: missing; the hub reaches registered cluster 'old' with it "
        "(or set hubAccess: keyless): fluxplane seal --cluster hub --namespace old --name old-kubeconfig "
        "--from-file value=<kubeconfig>"
    ]
