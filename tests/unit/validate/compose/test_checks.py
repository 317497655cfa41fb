"""Tests for fluxplane.validate.compose.checks (render_compositions, the checks over a tree): the example dist/ and
one fault of each kind in a copy of it, then small trees for the rules the example does not exercise (Composition
selection, functions, scopes)."""

from __future__ import annotations

import copy
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.validate.compose import ComposeReport, NotRendered, render_compositions
from fluxplane.validate.findings import Finding
from fluxplane.validate.schemas import CoreSchemas, CrdCorpus
from fluxplane.validate.tree import Document, load_tree
from tests.conftest import CRDS, ROOT

needs_crds = pytest.mark.skipif(
    not CRDS.is_dir(), reason="../shared/crds is missing: composed resources cannot be checked against provider CRDs"
)

EKS = "platform/infrastructure/configs/eks-compositions/base/eks-compositions.yaml"
EKS_COMPOSITION = 4  # eks-3-zones-1-node-group, used by staging-usw2 and production-usw2
KEYLESS_COMPOSITION = 5
STAGING = "platform/spokes/staging-usw2/cluster/cluster.yaml"
RESOURCES = "spec.pipeline[0].input.resources"


@pytest.fixture(scope="module")
def corpus() -> CrdCorpus:
    if not CRDS.is_dir():
        pytest.skip("../shared/crds is missing: composed resources cannot be checked against provider CRDs")
    return CrdCorpus.from_dirs([CRDS])


@pytest.fixture(scope="module")
def core() -> CoreSchemas:
    return CoreSchemas()


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    return Path(shutil.copytree(ROOT / "dist", tmp_path / "dist"))


def composition_finding(path: str, message: str) -> Finding:
    """A finding on the Composition eks-3-zones-1-node-group (document EKS_COMPOSITION of EKS)."""
    return Finding(EKS, EKS_COMPOSITION, "Composition", "eks-3-zones-1-node-group", path, message)


def edit(dist: Path, file: str, index: int, change: Callable[[dict[str, Any]], None]) -> None:
    """Change document ``index`` (1-based) of ``file`` in place."""
    path = dist / file
    documents = list(yaml.safe_load_all(path.read_text()))
    change(documents[index - 1])
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))


def check(dist: Path, corpus: CrdCorpus | None = None, core: CoreSchemas | None = None) -> ComposeReport:
    return render_compositions(load_tree(dist).documents, corpus, core)


def resource(composition: dict[str, Any], name: str) -> dict[str, Any]:
    resources = composition["spec"]["pipeline"][0]["input"]["resources"]
    found: dict[str, Any] = next(item for item in resources if item["name"] == name)
    return found


def resource_index(dist: Path, name: str, index: int = EKS_COMPOSITION) -> int:
    documents = list(yaml.safe_load_all((dist / EKS).read_text()))
    resources = documents[index - 1]["spec"]["pipeline"][0]["input"]["resources"]
    return next(number for number, item in enumerate(resources) if item["name"] == name)


# -- the example -----------------------------------------------------------------------------------------


@needs_crds
def test_example_dist_is_clean(dist: Path, corpus: CrdCorpus, core: CoreSchemas) -> None:
    # GIVEN the committed dist/ WHEN its XRs are checked and their Compositions rendered THEN no finding
    report = check(dist, corpus, core)
    assert report.findings == []
    # THEN every XR was checked and rendered, every composed resource checked against a schema
    assert report.xrs_checked == 58
    assert report.compositions_rendered == 58
    assert report.composed_resources_checked > 100
    assert report.not_rendered == 0
    assert report.unchecked == {}
    assert report.warning_lines() == []


def test_example_dist_without_crds_checks_xrs_and_selectors(dist: Path) -> None:
    # GIVEN no CRD corpus WHEN checked THEN XRs, renders and selectors are still checked, composed kinds counted
    report = check(dist)
    assert report.findings == []
    assert report.xrs_checked == 58 and report.compositions_rendered == 58
    assert report.composed_resources_checked == 0
    # six per cluster the hub makes, and the three private subnets of the observed one
    assert report.unchecked[("ec2.aws.m.upbound.io/v1beta1", "Subnet")] == 27


# -- one fault at a time -----------------------------------------------------------------------------------


def test_misspelled_xr_field(dist: Path) -> None:
    # GIVEN an EKSCluster with "regoin" next to "region" WHEN checked THEN the unknown field, located
    edit(dist, STAGING, 1, lambda d: d["spec"].__setitem__("regoin", "us-west-2"))
    assert check(dist).findings == [
        Finding(
            STAGING, 1, "EKSCluster", "staging-usw2", "spec.regoin", 'unknown field "regoin" (did you mean "region"?)'
        )
    ]


def test_renamed_xr_field_is_unknown_and_missing(dist: Path) -> None:
    # GIVEN "region" renamed to "regoin" WHEN checked THEN unknown and missing, as the API server says; not rendered
    edit(dist, STAGING, 1, lambda d: d["spec"].__setitem__("regoin", d["spec"].pop("region")))
    report = check(dist)
    assert [(finding.path, finding.message) for finding in report.findings] == [
        ("spec", 'missing required field "region"'),
        ("spec.regoin", 'unknown field "regoin" (did you mean "region"?)'),
    ]
    assert report.compositions_rendered == 57


def test_xr_defaults_are_applied_before_validation(dist: Path) -> None:
    # GIVEN an EKSCluster without natGateways and diskSize WHEN checked THEN the XRD's defaults fill them
    def strip(document: dict[str, Any]) -> None:
        del document["spec"]["network"]["natGateways"]
        del document["spec"]["nodeGroups"][0]["diskSize"]

    edit(dist, STAGING, 1, strip)
    assert check(dist).findings == []


def test_crossplane_fields_of_an_xr_are_part_of_its_schema(dist: Path) -> None:
    # GIVEN Crossplane's fields under spec.crossplane WHEN checked THEN accepted; a misspelled one is not
    def crossplane(document: dict[str, Any]) -> None:
        document["spec"]["crossplane"].update(
            {"compositionUpdatePolicy": "Manual", "resourceRefs": [{"apiVersion": "v1", "kind": "ConfigMap"}]}
        )

    edit(dist, STAGING, 1, crossplane)
    assert check(dist).findings == []
    edit(dist, STAGING, 1, lambda d: d["spec"]["crossplane"].__setitem__("compositionRefs", {"name": "x"}))
    assert [finding.message for finding in check(dist).findings] == [
        'unknown field "compositionRefs" (did you mean "compositionRef"?)'
    ]


@needs_crds
def test_patch_to_a_misspelled_field_of_the_managed_resource(dist: Path, corpus: CrdCorpus) -> None:
    # GIVEN the VPC's cidrBlock patch writing cidrBlok WHEN rendered THEN one finding: Composition, resource,
    # patch, the XRs it was rendered for, the field
    vpc = resource_index(dist, "vpc")
    edit(
        dist,
        EKS,
        EKS_COMPOSITION,
        lambda d: resource(d, "vpc")["patches"][1].__setitem__("toFieldPath", "spec.forProvider.cidrBlok"),
    )
    assert check(dist, corpus).findings == [
        composition_finding(
            f"{RESOURCES}[{vpc}].patches[1]",
            'resource "vpc" patch 1 (ec2.aws.m.upbound.io/v1beta1 VPC) rendered for EKSCluster '
            "production-usw2/production-usw2, EKSCluster staging-usw2/staging-usw2: "
            'spec.forProvider.cidrBlok: unknown field "cidrBlok" (did you mean "cidrBlock"?)',
        )
    ]


@needs_crds
def test_patch_path_is_checked_when_no_xr_sets_its_source(dist: Path, corpus: CrdCorpus) -> None:
    # GIVEN a patch from spec.hubAccess (which no XR of this Composition sets) to a misspelled field
    # WHEN checked THEN the toFieldPath is still a finding, without an XR
    vpc = resource_index(dist, "vpc")
    patch = {"fromFieldPath": "spec.hubAccess.principalArn", "toFieldPath": "spec.forProvider.cidrBlok"}
    edit(dist, EKS, EKS_COMPOSITION, lambda d: resource(d, "vpc")["patches"].append(patch))
    assert check(dist, corpus).findings == [
        composition_finding(
            f"{RESOURCES}[{vpc}].patches[6].toFieldPath",
            'resource "vpc" patch 6: toFieldPath of VPC (ec2.aws.m.upbound.io/v1beta1): '
            'spec.forProvider.cidrBlok: unknown field "cidrBlok" (did you mean "cidrBlock"?)',
        )
    ]


def test_from_field_path_is_checked_against_the_xrd(dist: Path) -> None:
    # GIVEN a patch from a misspelled XR field WHEN checked THEN a finding, whatever the XRs hold
    cluster = resource_index(dist, "cluster")
    edit(
        dist,
        EKS,
        EKS_COMPOSITION,
        lambda d: resource(d, "cluster")["patches"][2].__setitem__("fromFieldPath", "spec.kubernetesVersoin"),
    )
    assert check(dist).findings == [
        composition_finding(
            f"{RESOURCES}[{cluster}].patches[2].fromFieldPath",
            'resource "cluster" patch 2: fromFieldPath of EKSCluster (platform.fluxplane.io): spec.kubernetesVersoin: '
            'unknown field "kubernetesVersoin" (did you mean "kubernetesVersion"?)',
        )
    ]


def test_selector_that_matches_nothing(dist: Path) -> None:
    # GIVEN the private route's route table selector asking for a label no route table has
    # WHEN rendered THEN one finding at the selector, with what the render composes instead
    route = resource_index(dist, "route-private-0-nat")
    edit(
        dist,
        EKS,
        EKS_COMPOSITION,
        lambda d: resource(d, "route-private-0-nat")["base"]["spec"]["forProvider"]["routeTableIdSelector"][
            "matchLabels"
        ].__setitem__("platform.fluxplane.io/route-table", "privat-0"),
    )
    assert check(dist).findings == [
        composition_finding(
            f"{RESOURCES}[{route}].base.spec.forProvider.routeTableIdSelector",
            'resource "route-private-0-nat" (ec2.aws.m.upbound.io/v1beta1 Route) rendered for EKSCluster '
            "production-usw2/production-usw2, EKSCluster staging-usw2/staging-usw2: "
            "spec.forProvider.routeTableIdSelector selects no RouteTable (ec2.aws.m.upbound.io) composed for the "
            "same XR (matchControllerRef) with labels platform.fluxplane.io/route-table=privat-0: "
            '"route-table-public" has platform.fluxplane.io/route-table=public; '
            '"route-table-private-0" has platform.fluxplane.io/route-table=private-0; '
            '"route-table-private-1" has platform.fluxplane.io/route-table=private-1; and 1 more',
        )
    ]


def test_selector_needs_the_selected_resource_to_be_composed(dist: Path) -> None:
    # GIVEN the internet gateway made conditional on a field no XR sets WHEN rendered THEN the public route's
    # gateway selector selects nothing (the gateway is never composed)
    gateway = {
        "fromFieldPath": "spec.hubAccess.principalArn",
        "toFieldPath": "metadata.annotations[x]",
        "policy": {"fromFieldPath": "Required"},
    }
    edit(dist, EKS, EKS_COMPOSITION, lambda d: resource(d, "internet-gateway")["patches"].append(gateway))
    messages = [finding.message for finding in check(dist).findings]
    assert len(messages) == 1
    assert "spec.forProvider.gatewayIdSelector selects no InternetGateway (ec2.aws.m.upbound.io)" in messages[0]
    assert messages[0].endswith(": none is composed")


def test_selector_across_xrs_in_the_namespace(dist: Path) -> None:
    # GIVEN the AppTable's role selector (no matchControllerRef) naming an app without an AppIdentity
    # WHEN rendered THEN nothing in the namespace carries the label
    app = "platform/cloud/production-use1/orders.yaml"
    edit(dist, app, 2, lambda d: d["spec"].__setitem__("app", "billing"))
    findings = check(dist).findings
    assert [(finding.name, finding.message.split(": ", 1)[1]) for finding in findings] == [
        (
            "apptable",
            'spec.forProvider.roleSelector selects no Role (iam.aws.m.upbound.io) in namespace "production-use1" '
            'with labels platform.fluxplane.io/app-role=billing: "role" of AppIdentity production-use1/orders has '
            'platform.fluxplane.io/app-role=orders; "role" of AddonIdentity '
            'production-use1/aws-ebs-csi-driver-controller has none of these labels; "role" of AddonIdentity '
            "production-use1/aws-load-balancer-controller-controller has none of these labels; and 9 more",
        )
    ]


@needs_crds
def test_value_from_the_xr_the_managed_resource_refuses(dist: Path, corpus: CrdCorpus) -> None:
    # GIVEN the node group's disk size converted to a string WHEN rendered THEN the type error, at the patch
    node_group = resource_index(dist, "node-group-0")
    transform = {"type": "convert", "convert": {"toType": "string"}}
    edit(
        dist,
        EKS,
        EKS_COMPOSITION,
        lambda d: resource(d, "node-group-0")["patches"][5].__setitem__("transforms", [transform]),
    )
    findings = check(dist, corpus).findings
    assert [(finding.path, finding.message) for finding in findings] == [
        (
            f"{RESOURCES}[{node_group}].patches[5]",
            'resource "node-group-0" patch 5 (eks.aws.m.upbound.io/v1beta1 NodeGroup) rendered for EKSCluster '
            "production-usw2/production-usw2, EKSCluster staging-usw2/staging-usw2: spec.forProvider.diskSize: "
            'expected number, got string "50"',
        )
    ]


def test_failing_transform_is_one_finding_for_all_xrs(dist: Path) -> None:
    # GIVEN a math transform of the XRs' CIDR (a string) WHEN rendered THEN the function's fatal result, once
    vpc = resource_index(dist, "vpc")
    transform = {"type": "math", "math": {"type": "Multiply", "multiply": 2}}
    edit(dist, EKS, EKS_COMPOSITION, lambda d: resource(d, "vpc")["patches"][1].__setitem__("transforms", [transform]))
    assert [(finding.path, finding.message) for finding in check(dist).findings] == [
        (
            f"{RESOURCES}[{vpc}].patches[1]",
            "rendered for EKSCluster production-usw2/production-usw2, EKSCluster staging-usw2/staging-usw2: "
            'cannot render composed resource "vpc" "FromCompositeFieldPath" patch at index 1: transform at index 0 '
            "returned error: math transform could not resolve: input is required to be a number for math "
            "transformer, got string",
        )
    ]


def test_unknown_input_field(dist: Path) -> None:
    # GIVEN a patch with "toFieldPaht" WHEN checked THEN a finding: the function drops the field
    vpc = resource_index(dist, "vpc")
    edit(dist, EKS, EKS_COMPOSITION, lambda d: resource(d, "vpc")["patches"][1].__setitem__("toFieldPaht", "x"))
    assert [(finding.path, finding.message) for finding in check(dist).findings] == [
        (
            f"{RESOURCES}[{vpc}].patches[1].toFieldPaht",
            'unknown field "toFieldPaht" (did you mean "toFieldPath"?): the function ignores it',
        )
    ]


def test_composition_ref_to_a_missing_composition(dist: Path) -> None:
    edit(dist, STAGING, 1, lambda d: d["spec"]["crossplane"]["compositionRef"].__setitem__("name", "eks-9-zones"))
    assert check(dist).findings == [
        Finding(
            STAGING,
            1,
            "EKSCluster",
            "staging-usw2",
            "spec.crossplane.compositionRef.name",
            "Composition 'eks-9-zones' (spec.crossplane.compositionRef.name) is not in the tree (Compositions of "
            "EKSCluster: eks-3-zones-1-node-group, eks-3-zones-1-node-group-keyless, eks-3-zones-auto-mode, "
            "eks-observed-3-subnets-1-node-group)",
        )
    ]


def test_extra_check_is_attributed_like_the_schema(dist: Path) -> None:
    # GIVEN an extra check that refuses every VPC's region WHEN rendered THEN attributed to the region patch
    def refuse_region(document: Document) -> list[Finding]:
        if document.body.get("kind") != "VPC":
            return []
        return [document.finding("spec.forProvider.region", "region refused")]

    report = render_compositions(load_tree(dist).documents, None, None, refuse_region)
    assert [(finding.path, finding.message) for finding in report.findings] == [
        (
            "spec.pipeline[0].input.patchSets[0].patches[0]",
            'resource "vpc" patch 0 (PatchSet "region") (ec2.aws.m.upbound.io/v1beta1 VPC) rendered for '
            "EKSCluster staging-euw1/staging-euw1: spec.forProvider.region: region refused",
        ),
        (
            "spec.pipeline[0].input.patchSets[0].patches[0]",
            'resource "vpc" patch 0 (PatchSet "region") (ec2.aws.m.upbound.io/v1beta1 VPC) rendered for '
            "EKSCluster production-usw2/production-usw2, EKSCluster staging-usw2/staging-usw2: "
            "spec.forProvider.region: region refused",
        ),
        (
            "spec.pipeline[0].input.patchSets[0].patches[0]",
            'resource "vpc" patch 0 (PatchSet "region") (ec2.aws.m.upbound.io/v1beta1 VPC) rendered for '
            "EKSCluster production-use1/production-use1: spec.forProvider.region: region refused",
        ),
        (
            "spec.pipeline[0].input.patchSets[0].patches[0]",
            'resource "vpc" patch 0 (PatchSet "region") (ec2.aws.m.upbound.io/v1beta1 VPC) rendered for '
            "EKSCluster production-euw1/production-euw1: spec.forProvider.region: region refused",
        ),
    ]


# -- small trees ---------------------------------------------------------------------------------------------


def xrd(**spec: Any) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"size": {"type": "string", "default": "small"}}},
            "status": {"type": "object", "properties": {"arn": {"type": "string"}}},
        },
    }
    return {
        "apiVersion": "apiextensions.crossplane.io/v2",
        "kind": "CompositeResourceDefinition",
        "metadata": {"name": "things.example.org"},
        "spec": {
            "group": "example.org",
            "names": {"kind": "Thing", "plural": "things"},
            "versions": [{"name": "v1", "served": True, "referenceable": True, "schema": {"openAPIV3Schema": schema}}],
            **spec,
        },
    }


def composition(
    name: str, *resources: dict[str, Any], labels: dict[str, str] | None = None, functions: tuple[str, ...] = ()
) -> dict[str, Any]:
    pipeline: list[dict[str, Any]] = [
        {
            "step": "compose",
            "functionRef": {"name": "function-patch-and-transform"},
            "input": {"apiVersion": "pt.fn.crossplane.io/v1beta1", "kind": "Resources", "resources": list(resources)},
        }
    ]
    pipeline.extend({"step": function, "functionRef": {"name": function}} for function in functions)
    return {
        "apiVersion": "apiextensions.crossplane.io/v1",
        "kind": "Composition",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {
            "compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "Thing"},
            "mode": "Pipeline",
            "pipeline": pipeline,
        },
    }


def config_map(name: str = "cm", *patches: dict[str, Any], kind: str = "ConfigMap") -> dict[str, Any]:
    return {"name": name, "base": {"apiVersion": "v1", "kind": kind, "data": {}}, "patches": list(patches)}


def thing(name: str = "a", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.org/v1",
        "kind": "Thing",
        "metadata": {"name": name, "namespace": "team"},
        "spec": spec,
    }


def documents(*bodies: dict[str, Any]) -> list[Document]:
    return [Document("tree.yaml", index, copy.deepcopy(body)) for index, body in enumerate(bodies, start=1)]


def test_default_composition_of_the_xrd() -> None:
    # GIVEN two Compositions and an XRD default WHEN an XR names none THEN only the default is rendered
    tree = documents(
        xrd(defaultCompositionRef={"name": "one"}),
        composition("one", config_map()),
        composition("two", config_map()),
        thing(),
    )
    assert render_compositions(tree, None).compositions_rendered == 1


def test_every_candidate_of_a_selector_is_rendered() -> None:
    # GIVEN two Compositions with the selected label and one without WHEN selected THEN both candidates rendered
    tree = documents(
        xrd(),
        composition("one", config_map(), labels={"tier": "gold"}),
        composition("two", config_map(), labels={"tier": "gold"}),
        composition("three", config_map()),
        thing(crossplane={"compositionSelector": {"matchLabels": {"tier": "gold"}}}),
    )
    assert render_compositions(tree, None).compositions_rendered == 2


def test_no_composition_matches_the_selector() -> None:
    tree = documents(
        xrd(),
        composition("one", config_map()),
        thing(crossplane={"compositionSelector": {"matchLabels": {"tier": "x"}}}),
    )
    assert render_compositions(tree, None).findings == [
        Finding(
            "tree.yaml",
            3,
            "Thing",
            "a",
            "spec.crossplane.compositionSelector",
            "no Composition of Thing matches the labels tier=x (Crossplane: no compatible Compositions found)",
        )
    ]


def test_enforced_composition_wins() -> None:
    # GIVEN an enforced Composition WHEN the XR names another THEN the enforced one is rendered
    tree = documents(
        xrd(enforcedCompositionRef={"name": "two"}),
        composition("one", config_map("first")),
        composition("two", config_map("second", {"fromFieldPath": "spec.nope", "toFieldPath": "data.x"})),
        thing(crossplane={"compositionRef": {"name": "one"}}),
    )
    findings = render_compositions(tree, None).findings
    assert [(finding.name, finding.path) for finding in findings] == [
        ("two", "spec.pipeline[0].input.resources[0].patches[0].fromFieldPath")
    ]


def test_unknown_function_is_not_rendered_and_counted() -> None:
    # GIVEN a pipeline with function-go-templating WHEN checked THEN not rendered, counted, listed
    tree = documents(xrd(), composition("one", config_map(), functions=("function-go-templating",)), thing())
    report = render_compositions(tree, None)
    assert report.findings == []
    assert report.not_rendered == 1 and report.compositions_rendered == 0
    assert report.skipped == [
        NotRendered(
            "one",
            "Thing team/a",
            "pipeline step 'function-go-templating' runs function 'function-go-templating', which this check "
            "does not render",
        )
    ]
    assert report.warning_lines()[0].startswith("Composition 'one' not rendered for Thing team/a: pipeline step")


def test_functions_are_known_by_their_package() -> None:
    # GIVEN a Function named "pt" whose package is function-patch-and-transform WHEN referenced THEN rendered
    function = {
        "apiVersion": "pkg.crossplane.io/v1",
        "kind": "Function",
        "metadata": {"name": "pt"},
        "spec": {"package": "xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform:v0.10.8"},
    }
    built = composition("one", config_map())
    built["spec"]["pipeline"][0]["functionRef"]["name"] = "pt"
    assert render_compositions(documents(xrd(), function, built, thing()), None).compositions_rendered == 1


def test_status_read_no_patch_writes() -> None:
    # GIVEN a Required patch from status.arn and no ToCompositeFieldPath writing it WHEN checked THEN a finding
    reader = config_map(
        "cm", {"fromFieldPath": "status.arn", "toFieldPath": "data.arn", "policy": {"fromFieldPath": "Required"}}
    )
    findings = render_compositions(documents(xrd(), composition("one", reader), thing()), None).findings
    assert [finding.message for finding in findings] == [
        'resource "cm" patch 0: reads status.arn of the XR, which no ToCompositeFieldPath or CombineToComposite '
        "patch of this Composition writes: the resource is never composed"
    ]


def test_to_composite_outside_status_has_no_effect() -> None:
    writer = config_map("cm", {"type": "ToCompositeFieldPath", "fromFieldPath": "data.x", "toFieldPath": "spec.size"})
    findings = render_compositions(documents(xrd(), composition("one", writer), thing()), None).findings
    assert [finding.message for finding in findings] == [
        'resource "cm" patch 0: writes spec.size of the XR, but Crossplane applies only the status of the XR a '
        "function returns"
    ]


def test_namespaced_xr_cannot_compose_a_cluster_scoped_kind() -> None:
    tree = documents(xrd(), composition("one", config_map("ns", kind="Namespace")), thing(), thing("b"))
    findings = render_compositions(tree, None).findings
    assert [(finding.path, finding.message) for finding in findings] == [
        (
            "spec.pipeline[0].input.resources[0]",
            'resource "ns" (v1 Namespace) rendered for Thing team/a, Thing team/b: cannot apply a cluster scoped '
            "composed resource for a namespaced composite resource",
        )
    ]


def test_xr_version_not_served() -> None:
    definition = xrd()
    definition["spec"]["versions"].append({"name": "v2", "served": False, "referenceable": False})
    xr = thing()
    xr["apiVersion"] = "example.org/v2"
    findings = render_compositions(documents(definition, composition("one", config_map()), xr), None).findings
    assert [(finding.path, finding.message) for finding in findings] == [
        ("apiVersion", "example.org/v2 Thing is not served by its XRD 'things.example.org' (served versions: v1)")
    ]


def test_repeated_resource_name() -> None:
    tree = documents(xrd(), composition("one", config_map("cm"), config_map("cm")), thing())
    findings = render_compositions(tree, None).findings
    assert [(finding.path, finding.message) for finding in findings] == [
        (
            "spec.pipeline[0].input.resources[1].name",
            'resource name "cm" repeats resources[0]: the later template replaces the earlier one in the desired state',
        )
    ]


def test_core_kinds_are_checked_with_core_schemas(core: CoreSchemas) -> None:
    # GIVEN a ConfigMap patched with an object where Kubernetes wants a string WHEN rendered THEN a finding
    patch = {"fromFieldPath": "spec.crossplane", "toFieldPath": "data.x"}
    tree = documents(
        xrd(), composition("one", config_map("cm", patch)), thing(crossplane={"compositionRef": {"name": "one"}})
    )
    report = render_compositions(tree, None, core)
    assert report.composed_resources_checked == 1
    assert [finding.message.split(": ", 1)[1] for finding in report.findings] == [
        "data.x: expected string or null, got object {...}"
    ]


def test_composition_of_a_kind_no_xrd_defines() -> None:
    built = composition("one", config_map())
    built["spec"]["compositeTypeRef"]["kind"] = "Thang"
    findings = render_compositions(documents(xrd(), built), None).findings
    assert [(finding.path, finding.message) for finding in findings] == [
        ("spec.compositeTypeRef", "no CompositeResourceDefinition of the tree defines example.org/v1 Thang")
    ]
