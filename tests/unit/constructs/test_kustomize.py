"""kustomization.yaml: a directory's kustomize configuration (not Flux's Kustomization)."""

from __future__ import annotations

import pytest

from fluxplane.constructs import (
    KustomizationFile,
    KustomizeConfig,
    KustomizeConfigProps,
    Manifest,
    Patch,
    PatchSelector,
    Root,
)
from fluxplane.core.codec import dump_documents
from fluxplane.errors import ConstructError


def config(props: KustomizeConfigProps | dict[str, object] | None = None) -> KustomizeConfig:
    return KustomizationFile(Root(), "kf", directory="apps", props=props).config


def test_empty_config_lists_no_resources_explicitly() -> None:
    # GIVEN / WHEN a kustomization.yaml without props
    doc = config().to_dict()

    # THEN it is header plus an explicit empty resources list (no metadata: it is not a cluster object)
    assert doc == {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": []}


def test_config_renders_every_field_in_kustomize_order() -> None:
    # GIVEN a config with namespace, resources, components and patches
    doc = config(
        {
            "patches": [{"patch": "x", "target": {"kind": "Deployment"}}],
            "components": ["../components/tls"],
            "resources": ["a.yaml", "../base"],
            "namespace": "apps",
        }
    ).to_dict()

    # WHEN / THEN keys come as apiVersion, kind, namespace, resources, components, patches
    assert doc == {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "namespace": "apps",
        "resources": ["a.yaml", "../base"],
        "components": ["../components/tls"],
        "patches": [{"patch": "x", "target": {"kind": "Deployment"}}],
    }
    assert list(doc) == ["apiVersion", "kind", "namespace", "resources", "components", "patches"]


def test_add_resource_appends_after_props_resources_and_returns_the_path() -> None:
    # GIVEN a config that already lists one resource
    kustomize = config({"resources": ["namespace.yaml"]})

    # WHEN two more are added
    returned = kustomize.add_resource("podinfo.yaml")
    kustomize.add_resource("../base")

    # THEN the path is returned and resources keep the order they were listed in
    assert returned == "podinfo.yaml"
    assert kustomize.resources == ("namespace.yaml", "podinfo.yaml", "../base")
    assert kustomize.to_dict()["resources"] == ["namespace.yaml", "podinfo.yaml", "../base"]


def test_add_resource_does_not_change_the_props() -> None:
    # GIVEN a config built from props
    kustomize = config({"resources": ["namespace.yaml"]})

    # WHEN a resource is added
    kustomize.add_resource("podinfo.yaml")

    # THEN the frozen props still hold what was given
    assert kustomize.props.resources == ("namespace.yaml",)


def test_add_patch_appends_after_props_patches_and_returns_the_patch() -> None:
    # GIVEN a config with one patch from props
    kustomize = config({"patches": [{"patch": "first"}]})
    patch = Patch(patch="second", target=PatchSelector(kind="Deployment", label_selector="app=web"))

    # WHEN another patch is added
    returned = kustomize.add_patch(patch)

    # THEN it is returned as given and rendered after the first, with kustomize's selector names
    assert returned is patch
    assert kustomize.patches == (Patch(patch="first"), patch)
    assert kustomize.to_dict()["patches"] == [
        {"patch": "first"},
        {"patch": "second", "target": {"kind": "Deployment", "labelSelector": "app=web"}},
    ]


def test_multi_line_patch_is_rendered_as_a_literal_block() -> None:
    # GIVEN a config with a multi-line JSON 6902 patch
    kustomize = config({"resources": ["podinfo.yaml"]})
    kustomize.add_patch(
        Patch(
            patch="- op: remove\n  path: /spec/replicas\n",
            target=PatchSelector(kind="Deployment", name="web"),
        )
    )

    # WHEN the file is rendered
    text = dump_documents([kustomize.to_dict()])

    # THEN the patch body is a "|" block
    assert text == (
        "apiVersion: kustomize.config.k8s.io/v1beta1\n"
        "kind: Kustomization\n"
        "resources:\n"
        "- podinfo.yaml\n"
        "patches:\n"
        "- patch: |\n"
        "    - op: remove\n"
        "      path: /spec/replicas\n"
        "  target:\n"
        "    kind: Deployment\n"
        "    name: web\n"
    )


def test_config_takes_a_props_instance() -> None:
    # GIVEN / WHEN props given as a model
    kustomize = config(KustomizeConfigProps(resources=("a.yaml",), namespace="apps"))

    # THEN they are used as given
    assert kustomize.to_dict()["namespace"] == "apps"
    assert kustomize.resources == ("a.yaml",)


def test_unknown_config_field_is_rejected_with_the_construct_path() -> None:
    # GIVEN / WHEN / THEN a field kustomize has but this model does not (bases) is refused
    with pytest.raises(
        ConstructError, match=r"^root/kf/config: KustomizeConfigProps\.bases: extra inputs are not permitted$"
    ):
        config({"bases": ["../base"]})


def test_config_resources_must_be_strings() -> None:
    # GIVEN / WHEN / THEN a non-string resource is refused, naming its index
    with pytest.raises(ConstructError, match=r"^root/kf/config: KustomizeConfigProps\.resources\.0: input should be"):
        config({"resources": [1]})


def test_kustomization_file_is_a_manifest_at_directory_kustomization_yaml() -> None:
    # GIVEN / WHEN a kustomization file for a nested directory
    kf = KustomizationFile(Root(), "kf", directory="clusters/hub/apps")

    # THEN it is a Manifest at <directory>/kustomization.yaml whose single document is its config
    assert isinstance(kf, Manifest)
    assert kf.path == "clusters/hub/apps/kustomization.yaml"
    assert kf.directory == "clusters/hub/apps"
    assert kf.resources() == [kf.config]
    assert kf.config.node.path == "root/kf/config"


def test_kustomization_file_at_the_top_level() -> None:
    # GIVEN / WHEN / THEN an empty directory puts the file at the top of the output folder
    assert KustomizationFile(Root(), "kf", directory="").path == "kustomization.yaml"


def test_kustomization_file_with_bad_directory_is_rejected() -> None:
    # GIVEN / WHEN / THEN a directory outside the output folder is refused by the Manifest check
    with pytest.raises(ConstructError, match=r"^root/kf: output path '\.\./kustomization\.yaml' must be"):
        KustomizationFile(Root(), "kf", directory="..")


def test_config_is_cluster_scoped_and_named_kustomization() -> None:
    # GIVEN / WHEN / THEN the document identifies as the directory's kustomization
    kustomize = config()
    assert kustomize.ref == ("kustomize.config.k8s.io/v1beta1", "Kustomization", None, "kustomization")
