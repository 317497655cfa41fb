"""Crossplane Provider and Function packages."""

from __future__ import annotations

import pytest

from fluxplane.constructs import Manifest, Root
from fluxplane.constructs.crossplane_package import Function, Provider
from fluxplane.errors import ConstructError


def _manifest() -> Manifest:
    return Manifest(Root(), "m", path="x.yaml")


def test_provider_with_runtime_config() -> None:
    provider = Provider(
        _manifest(),
        "ec2",
        {
            "name": "provider-aws-ec2",
            "package": "xpkg.crossplane.io/crossplane-contrib/provider-aws-ec2:v2.6.0",
            "runtimeConfigRef": {"name": "provider-aws-ec2"},
        },
    )
    assert provider.to_dict() == {
        "apiVersion": "pkg.crossplane.io/v1",
        "kind": "Provider",
        "metadata": {"name": "provider-aws-ec2"},
        "spec": {
            "package": "xpkg.crossplane.io/crossplane-contrib/provider-aws-ec2:v2.6.0",
            "runtimeConfigRef": {
                "apiVersion": "pkg.crossplane.io/v1beta1",
                "kind": "DeploymentRuntimeConfig",
                "name": "provider-aws-ec2",
            },
        },
    }


def test_function_pinned_by_digest() -> None:
    digest = "sha256:" + "a" * 64
    function = Function(
        _manifest(),
        "fn",
        {"name": "function-auto-ready", "package": f"xpkg.crossplane.io/x/function-auto-ready@{digest}"},
    )
    assert function.to_dict()["spec"] == {"package": f"xpkg.crossplane.io/x/function-auto-ready@{digest}"}
    assert function.namespace is None


@pytest.mark.parametrize("package", ["xpkg.crossplane.io/x/provider-aws-ec2", "provider-aws-ec2:v1", "Upper/x:v1"])
def test_unpinned_or_malformed_packages_are_refused(package: str) -> None:
    with pytest.raises(ConstructError, match=r"^root/m/p: PackageProps\.package: string should match pattern"):
        Provider(_manifest(), "p", {"name": "p", "package": package})
