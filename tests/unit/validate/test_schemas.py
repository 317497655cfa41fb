"""Tests for fluxplane.validate.schemas: strict CRD schemas, core kinds, coverage and the schema folders."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from fluxplane.validate.findings import Finding
from fluxplane.validate.schemas import (
    PULLED_BY,
    SHIPPED_CRDS,
    CoreSchemas,
    CrdCorpus,
    check_documents,
    default_crd_dirs,
    defined_kinds,
    pulled_by,
    warning_lines,
)
from fluxplane.validate.tree import Document, ValidateError, load_documents, load_tree
from tests.conftest import ROOT

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.io
spec:
  group: example.io
  names:
    kind: Widget
    plural: widgets
  scope: Namespaced
  versions:
  - name: v1beta1
    served: false
    storage: false
    schema:
      openAPIV3Schema:
        type: object
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size, mode]
            properties:
              size:
                x-kubernetes-int-or-string: true
              mode:
                type: string
                default: fast
                enum: [fast, slow]
              replicas:
                type: integer
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
"""


@pytest.fixture
def corpus(tmp_path: Path) -> CrdCorpus:
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "widgets.yaml").write_text(CRD)
    return CrdCorpus.from_dirs([tmp_path / "crds"])


@pytest.fixture(scope="module")
def core() -> CoreSchemas:
    return CoreSchemas()


def _doc(text: str) -> Document:
    documents, _ = load_documents(text, "f.yaml")
    return documents[0]


def _widget(spec: dict[str, Any], api: str = "example.io/v1") -> Document:
    return Document("f.yaml", 1, {"apiVersion": api, "kind": "Widget", "metadata": {"name": "w"}, "spec": spec})


def test_valid_widget_int_or_string_default_and_preserved_fields(corpus: CrdCorpus, core: CoreSchemas) -> None:
    # GIVEN a widget with size as a string, no mode (it has a default), and free-form extra fields
    report = check_documents([_widget({"size": "10%", "extra": {"any": {"thing": 1}}})], corpus, core, set())
    # THEN nothing is wrong
    assert report.findings == []


def test_unknown_field_is_a_finding_with_a_hint(corpus: CrdCorpus, core: CoreSchemas) -> None:
    report = check_documents([_widget({"size": 1, "replica": 2})], corpus, core, set())
    assert report.findings == [
        Finding("f.yaml", 1, "Widget", "w", "spec.replica", 'unknown field "replica" (did you mean "replicas"?)')
    ]


def test_wrong_type_and_placeholder(corpus: CrdCorpus, core: CoreSchemas) -> None:
    # GIVEN replicas as text, and a Flux placeholder where an integer belongs
    bad = check_documents([_widget({"size": 1, "replicas": "three"})], corpus, core, set())
    placeholder = check_documents([_widget({"size": 1, "replicas": "${count}"})], corpus, core, set())
    # THEN the text is a finding, the placeholder is not
    assert [f.line() for f in bad.findings] == [
        'f.yaml:1 Widget/w: spec.replicas: expected integer, got string "three"'
    ]
    assert placeholder.findings == []


def test_version_not_served_is_a_finding(corpus: CrdCorpus, core: CoreSchemas) -> None:
    report = check_documents([_widget({"size": 1}, api="example.io/v1beta1")], corpus, core, set())
    assert [f.line() for f in report.findings] == [
        "f.yaml:1 Widget/w: apiVersion: example.io/v1beta1 Widget is not served by its CRD (served versions: v1)"
    ]


def test_unknown_kind_in_covered_group_is_a_finding(corpus: CrdCorpus, core: CoreSchemas) -> None:
    document = Document("f.yaml", 1, {"apiVersion": "example.io/v1", "kind": "Gadget", "metadata": {"name": "g"}})
    report = check_documents([document], corpus, core, set())
    assert [f.line() for f in report.findings] == [
        "f.yaml:1 Gadget/g: kind: no schema for example.io/v1 Gadget: group example.io defines Widget"
    ]


def test_uncovered_group_is_counted_not_a_finding(corpus: CrdCorpus, core: CoreSchemas) -> None:
    # GIVEN two documents of a group no CRD folder covers and one the tree defines itself
    issuer = {"apiVersion": "cert-manager.io/v1", "kind": "ClusterIssuer", "metadata": {"name": "x"}}
    own = {"apiVersion": "platform.fluxplane.io/v1alpha1", "kind": "EKSCluster", "metadata": {"name": "x"}}
    documents = [Document("f.yaml", 1, issuer), Document("f.yaml", 2, issuer), Document("f.yaml", 3, own)]
    report = check_documents(documents, corpus, core, {("platform.fluxplane.io", "EKSCluster")})
    # THEN no finding; one warning line with the count
    assert report.findings == []
    assert warning_lines(report.uncovered) == [
        "no schema for cert-manager.io/v1 ClusterIssuer (2 documents): run 'fluxplane schemas pull' or pass --crds"
    ]


def test_core_kinds_are_strict(corpus: CrdCorpus, core: CoreSchemas) -> None:
    # GIVEN a ConfigMap with a misspelled field and an Ingress of a removed version
    config_map = _doc("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndatas:\n  a: b\n")
    ingress = Document("f.yaml", 2, {"apiVersion": "extensions/v1beta1", "kind": "Ingress", "metadata": {"name": "i"}})
    report = check_documents([config_map, ingress], corpus, core, set())
    lines = [f.line() for f in report.findings]
    assert lines[0] == 'f.yaml:1 ConfigMap/c: datas: unknown field "datas" (did you mean "data"?)'
    assert lines[1].startswith(
        f"f.yaml:2 Ingress/i: apiVersion: extensions/v1beta1 Ingress is not served by Kubernetes {core.version} "
        "(served as networking.k8s.io/v1"
    )
    assert len(lines) == 2


def test_metadata_is_checked(corpus: CrdCorpus, core: CoreSchemas) -> None:
    document = Document(
        "f.yaml", 1, {"apiVersion": "example.io/v1", "kind": "Widget", "metadata": {"name": "Bad_Name"}}
    )
    report = check_documents([document], corpus, core, set())
    assert [f.line() for f in report.findings] == [
        'f.yaml:1 Widget/Bad_Name: metadata.name: "Bad_Name" does not match pattern '
        "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    ]


def test_kustomize_files_are_not_objects(corpus: CrdCorpus, core: CoreSchemas) -> None:
    document = _doc("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n")
    assert check_documents([document], corpus, core, set()).findings == []


def test_defined_kinds() -> None:
    xrd = {"kind": "CompositeResourceDefinition", "spec": {"group": "g.io", "names": {"kind": "X"}}}
    assert defined_kinds([Document("f.yaml", 1, xrd)]) == {("g.io", "X")}


def test_missing_crd_folder_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ValidateError, match=r"^--crds .*nope: no such folder$"):
        CrdCorpus.from_dirs([tmp_path / "nope"])


def test_unparsable_crd_file_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("kind: [\n")
    with pytest.raises(ValidateError, match=r"bad\.yaml: cannot parse CRD file: "):
        CrdCorpus.from_dirs([tmp_path])


def test_default_crd_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN FLUXPLANE_CRDS THEN its entries
    monkeypatch.setenv("FLUXPLANE_CRDS", f"{tmp_path / 'a'}:{tmp_path / 'b'}")
    assert default_crd_dirs() == [tmp_path / "a", tmp_path / "b"]
    # GIVEN no cache THEN the CRDs fluxplane ships
    monkeypatch.delenv("FLUXPLANE_CRDS")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert default_crd_dirs() == [SHIPPED_CRDS]
    # GIVEN a cache another fluxplane pulled, or one that does not say THEN still the shipped ones
    cache = tmp_path / "cache" / "fluxplane" / "crds"
    cache.mkdir(parents=True)
    assert default_crd_dirs() == [SHIPPED_CRDS]
    (cache / PULLED_BY).write_text("fluxplane 0.0.1\n")
    assert default_crd_dirs() == [SHIPPED_CRDS]
    # GIVEN a cache this fluxplane pulled THEN the cache
    (cache / PULLED_BY).write_text(pulled_by())
    assert default_crd_dirs() == [cache]


def test_a_group_bundle_is_read_as_its_crds(tmp_path: Path, core: CoreSchemas) -> None:
    # GIVEN the CRD as a shipped group bundle: a gzip-compressed JSON list of the group's CRDs
    (tmp_path / "example.io.json.gz").write_bytes(gzip.compress(json.dumps([yaml.safe_load(CRD)]).encode()))
    corpus = CrdCorpus.from_dirs([tmp_path])
    # THEN its group is covered, and its documents are checked as from the YAML
    assert corpus.covers("example.io") and corpus.scope("example.io", "Widget") == "Namespaced"
    report = check_documents([_widget({"size": 1, "replica": 2})], corpus, core, set())
    assert [finding.message for finding in report.findings] == ['unknown field "replica" (did you mean "replicas"?)']


def test_a_broken_bundle_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "example.io.json.gz").write_bytes(b"\x1f\x8b\x08\x00 not gzip")
    corpus = CrdCorpus.from_dirs([tmp_path])
    with pytest.raises(ValidateError, match=r"example\.io\.json\.gz: cannot (read|parse) CRD file: "):
        corpus.schema("example.io", "v1", "Widget")
    (tmp_path / "example.io.json.gz").write_bytes(gzip.compress(b'{"not": "a list"}'))
    with pytest.raises(ValidateError, match=r"example\.io\.json\.gz: cannot parse CRD file: expected a list of CRDs$"):
        CrdCorpus.from_dirs([tmp_path]).schema("example.io", "v1", "Widget")


def test_the_shipped_crds_cover_every_kind_the_example_emits(core: CoreSchemas) -> None:
    # GIVEN the example's committed dist/ WHEN checked against the CRDs fluxplane ships
    tree = load_tree(ROOT / "dist")
    report = check_documents(tree.documents, CrdCorpus.from_dirs([SHIPPED_CRDS]), core, defined_kinds(tree.documents))
    # THEN every kind has a schema but EKS Auto Mode's NodeClass, whose CRD EKS does not publish (the fields it
    # documents are checked in tests/unit/packs/test_auto_mode.py), and every document is valid
    assert report.uncovered == {("eks.amazonaws.com/v1", "NodeClass"): 1}
    assert report.findings == []


def test_a_kind_whose_crd_is_not_published_says_why_it_went_unchecked() -> None:
    # GIVEN EKS Auto Mode's NodeClass, whose CRD AWS does not publish, and a kind whose CRDs were not pulled
    lines = warning_lines({("eks.amazonaws.com/v1", "NodeClass"): 1, ("example.io/v1", "Widget"): 2})
    # THEN pulling schemas is offered only where it can help
    assert lines == [
        "no schema for eks.amazonaws.com/v1 NodeClass (1 document): not checked: EKS Auto Mode's own kind, whose CRD "
        "AWS does not publish",
        "no schema for example.io/v1 Widget (2 documents): run 'fluxplane schemas pull' or pass --crds",
    ]
