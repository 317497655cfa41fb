"""A small synthesized tree written by hand: a hub with charts, sources and Crossplane packages that brings up a
spoke through kubeConfig, and a cluster only Flux's bootstrap applies; {path under dist/: text}."""

from __future__ import annotations

from typing import Any

from fluxplane.core.codec import dump_documents

FLEET = "https://github.com/example-org/fleet.git"


def kustomization(*resources: str) -> list[dict[str, Any]]:
    return [{"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": list(resources)}]


def flux(name: str, path: str, namespace: str = "flux-system", **spec: Any) -> dict[str, Any]:
    ref = {"kind": "GitRepository", "name": "flux-system", "namespace": "flux-system"}
    return {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"path": path, "sourceRef": ref, **spec},
    }


def gotk_sync(cluster: str) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "source.toolkit.fluxcd.io/v1",
            "kind": "GitRepository",
            "metadata": {"name": "flux-system", "namespace": "flux-system"},
            "spec": {"url": FLEET, "ref": {"branch": "main"}},
        },
        flux("flux-system", f"./dist/platform/clusters/{cluster}"),
    ]


def release(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def tree() -> dict[str, str]:
    """A hub whose addons run a chart from a HelmRepository and one from an OCIRepository, and a Crossplane
    provider with a ProviderConfig of each of two groups; and which brings up the spoke ``a``: a Kustomization
    and a HelmRelease of the hub that work on ``a`` (kubeConfig). ``b``'s entry folder has no Kustomization of
    its own."""
    remote = {"kubeConfig": {"secretRef": {"name": "a-kubeconfig", "key": "value"}}}
    provider_config = {"metadata": {"name": "default", "namespace": "crossplane-system"}, "kind": "ProviderConfig"}
    docs: dict[str, list[dict[str, Any]]] = {
        "platform/clusters/hub/kustomization.yaml": kustomization("flux-system", "infrastructure.yaml"),
        "platform/clusters/hub/flux-system/kustomization.yaml": kustomization("gotk-sync.yaml"),
        "platform/clusters/hub/flux-system/gotk-sync.yaml": gotk_sync("hub"),
        "platform/clusters/hub/infrastructure.yaml": [
            flux("crossplane", "./dist/platform/crossplane"),
            flux("addons", "./dist/platform/addons", dependsOn=[{"name": "crossplane"}]),
            flux("spokes", "./dist/platform/spokes"),
        ],
        "platform/crossplane/kustomization.yaml": kustomization("crossplane.yaml"),
        "platform/crossplane/crossplane.yaml": [
            {
                "apiVersion": "pkg.crossplane.io/v1",
                "kind": "Provider",
                "metadata": {"name": "provider-aws-s3"},
                "spec": {"package": "xpkg.crossplane.io/crossplane-contrib/provider-aws-s3:v2.6.0"},
            },
            {"apiVersion": "aws.m.upbound.io/v1beta1", **provider_config},
            {"apiVersion": "kubernetes.m.crossplane.io/v1alpha1", **provider_config},
        ],
        "platform/addons/kustomization.yaml": kustomization("addons.yaml"),
        "platform/addons/addons.yaml": [
            release("metrics-server", "kube-system", chart={"spec": {"chart": "metrics-server", "version": "3.13.1"}}),
            {
                "apiVersion": "source.toolkit.fluxcd.io/v1",
                "kind": "OCIRepository",
                "metadata": {"name": "karpenter", "namespace": "flux-system"},
                "spec": {"url": "oci://public.ecr.aws/karpenter/karpenter", "ref": {"tag": "1.14.1"}},
            },
            release(
                "karpenter",
                "kube-system",
                chartRef={"kind": "OCIRepository", "name": "karpenter", "namespace": "flux-system"},
            ),
        ],
        "platform/spokes/kustomization.yaml": kustomization("a.yaml"),
        "platform/spokes/a.yaml": [
            flux("flux-sync", "./dist/platform/clusters/a/flux-system", namespace="a", **remote),
            release("flux", "a", chart={"spec": {"chart": "flux2", "version": "2.19.0"}}, **remote),
        ],
        "platform/clusters/a/kustomization.yaml": kustomization("flux-system"),
        "platform/clusters/a/flux-system/kustomization.yaml": kustomization("gotk-sync.yaml"),
        "platform/clusters/a/flux-system/gotk-sync.yaml": gotk_sync("a"),
        "platform/clusters/b/kustomization.yaml": kustomization("namespace.yaml"),
        "platform/clusters/b/namespace.yaml": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "b"}}],
    }
    return {path: dump_documents(documents) for path, documents in docs.items()}
