"""fluxplane.testing.summary: what each cluster of a tree runs, as a reviewer reads it (the snapshot a fleet
repository's tests keep)."""

from __future__ import annotations

from fluxplane.core.codec import dump_documents
from fluxplane.testing.summary import summarize
from tests.support.trees import FLEET, release, tree


def test_each_cluster_s_versions_and_what_each_kustomization_applies_there() -> None:
    summary = summarize(tree())
    assert list(summary) == ["a", "b", "hub"]
    assert summary["hub"] == {
        "versions": {
            "GitRepository flux-system/flux-system": f"{FLEET} branch main",
            "HelmRelease a/flux": "flux2 2.19.0",
            "HelmRelease kube-system/karpenter": "oci://public.ecr.aws/karpenter/karpenter tag 1.14.1",
            "HelmRelease kube-system/metrics-server": "metrics-server 3.13.1",
            "OCIRepository flux-system/karpenter": "oci://public.ecr.aws/karpenter/karpenter tag 1.14.1",
            "Provider provider-aws-s3": "xpkg.crossplane.io/crossplane-contrib/provider-aws-s3:v2.6.0",
        },
        "kustomizations": {
            "flux-system/addons": {
                "path": "./dist/platform/addons",
                "dependsOn": ["crossplane"],
                "applies": [
                    "HelmRelease kube-system/karpenter",
                    "HelmRelease kube-system/metrics-server",
                    "OCIRepository flux-system/karpenter",
                ],
            },
            "flux-system/crossplane": {
                "path": "./dist/platform/crossplane",
                "applies": [
                    "Provider provider-aws-s3",
                    "ProviderConfig.aws.m.upbound.io crossplane-system/default",
                    "ProviderConfig.kubernetes.m.crossplane.io crossplane-system/default",
                ],
            },
            "flux-system/flux-system": {
                "path": "./dist/platform/clusters/hub",
                "applies": [
                    "GitRepository flux-system/flux-system",
                    "Kustomization flux-system/addons",
                    "Kustomization flux-system/crossplane",
                    "Kustomization flux-system/flux-system",
                    "Kustomization flux-system/spokes",
                ],
            },
            "flux-system/spokes": {
                "path": "./dist/platform/spokes",
                "applies": ["HelmRelease a/flux", "Kustomization a/flux-sync"],
            },
        },
    }


def test_what_another_cluster_applies_or_installs_there_says_which_cluster_it_is() -> None:
    assert summarize(tree())["a"] == {
        "versions": {
            "GitRepository flux-system/flux-system": f"{FLEET} branch main",
            "HelmRelease a/flux (from hub)": "flux2 2.19.0",
        },
        "kustomizations": {
            "a/flux-sync (from hub)": {
                "path": "./dist/platform/clusters/a/flux-system",
                "applies": ["GitRepository flux-system/flux-system", "Kustomization flux-system/flux-system"],
            },
            "flux-system/flux-system": {
                "path": "./dist/platform/clusters/a",
                "applies": ["GitRepository flux-system/flux-system", "Kustomization flux-system/flux-system"],
            },
        },
    }


def test_what_only_the_bootstrap_applies_is_the_entry_folder_s() -> None:
    assert summarize(tree())["b"] == {
        "versions": {},
        "kustomizations": {"(bootstrap)": {"path": "platform/clusters/b", "applies": ["Namespace b"]}},
    }


def test_a_chart_without_a_version_and_a_chart_ref_to_no_source_say_so() -> None:
    # GIVEN a cluster with a HelmRelease of no chart version, and one whose chartRef names no source in the tree
    files = tree()
    files["platform/clusters/b/namespace.yaml"] = dump_documents(
        [
            release("latest", "b", chart={"spec": {"chart": "podinfo"}}),
            release("lost", "b", chartRef={"kind": "OCIRepository", "name": "gone"}),
        ]
    )
    # THEN each says what it is
    assert summarize(files)["b"]["versions"] == {
        "HelmRelease b/latest": "podinfo (latest)",
        "HelmRelease b/lost": "OCIRepository b/gone",
    }
