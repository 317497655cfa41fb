"""Tests for fluxplane.core.tree.objects: object keys, and documents made or parsed when first asked for."""

from __future__ import annotations

from typing import Any

from fluxplane.core.tree import Key, LazyDocuments, group_of, key_of


def test_key_is_group_kind_namespace_name() -> None:
    # GIVEN documents of a custom group, the core group, and one without metadata
    release = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "a", "namespace": "b"},
    }
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    # THEN the key holds the group without its version, and "" for what the document does not name
    assert key_of(release) == Key("helm.toolkit.fluxcd.io", "HelmRelease", "b", "a")
    assert key_of(config) == ("", "ConfigMap", "", "c")
    assert key_of({"kind": "X"}) == ("", "X", "", "")
    # AND the namespace an object lands in replaces its own when given
    assert key_of(release, "elsewhere").namespace == "elsewhere"
    assert group_of("v1") == "" and group_of(None) == ""
    # AND messages name it by kind, namespace and name, a cluster-scoped one without a namespace
    assert key_of(release).shown == "HelmRelease b/a"
    assert Key("", "Namespace", "", "apps").shown == "Namespace apps"


def test_lazy_documents_are_made_or_parsed_on_each_access() -> None:
    # GIVEN a maker for one path and texts for others, one of them not YAML
    calls: list[str] = []

    def make() -> list[dict[str, str]]:
        calls.append("made")
        return [{"kind": "Made"}]

    documents = LazyDocuments(
        {"a/made.yaml": make},
        {"a/made.yaml": "kind: Text\n", "a/text.yaml": "kind: One\n---\n---\nkind: Two\n", "README.md": "# no\n"},
    )
    # THEN the maker wins over a text of the same path, texts are parsed (empty documents dropped), and files that
    # are not YAML are left out
    assert documents["a/made.yaml"] == [{"kind": "Made"}]
    assert documents["a/text.yaml"] == [{"kind": "One"}, {"kind": "Two"}]
    assert "README.md" not in documents
    assert sorted(documents) == ["a/made.yaml", "a/text.yaml"]
    assert len(documents) == 2
    # AND nothing is kept: each access makes the documents anew (the folder reader keeps what it builds)
    documents["a/made.yaml"]
    assert calls == ["made", "made"]


def test_lazy_documents_of_texts_alone_or_makers_alone_hold_the_same_paths() -> None:
    # GIVEN texts alone: YAML, kustomization files named Kustomization at the root and below it, and names that
    # only end like one
    texts = {
        "Kustomization": "resources: []\n",
        "a/Kustomization": "resources: []\n",
        "a/b.yml": "kind: B\n",
        "a/NotKustomization": "x\n",
        "a/Kustomization.md": "x\n",
        "a/c.yaml.bak": "x\n",
    }
    documents = LazyDocuments({}, texts)
    # THEN the YAML and the kustomization files are there, in the order given, and the others not
    kept = ["Kustomization", "a/Kustomization", "a/b.yml"]
    assert list(documents) == kept and len(documents) == 3
    assert "a/NotKustomization" not in documents and "a/Kustomization" in documents
    # AND makers alone hold every path they make, whatever its name
    made = LazyDocuments({"x/notes.txt": list, "x/a.yaml": list})
    assert list(made) == ["x/notes.txt", "x/a.yaml"] and len(made) == 2 and "x/notes.txt" in made


def test_documents_but_some_files_are_another_tree_the_first_left_as_it_was() -> None:
    # GIVEN the documents of a tree
    texts = {"a/one.yaml": "kind: One\n", "a/two.yaml": "kind: Two\n", "a/kustomization.yaml": "resources: []\n"}
    documents = LazyDocuments({}, texts)
    # WHEN another tree is made from them: one file left out, one made another way
    other = documents.but({"a/two.yaml": lambda: [{"kind": "Old"}]}, ["a/one.yaml", "a/two.yaml", "a/absent.yaml"])
    # THEN the other tree holds the rest as texts, and what the makers make
    assert sorted(other) == ["a/kustomization.yaml", "a/two.yaml"] and len(other) == 2
    assert other["a/two.yaml"] == [{"kind": "Old"}] and "a/one.yaml" not in other
    # AND the first tree is unchanged
    assert sorted(documents) == sorted(texts) and documents["a/two.yaml"] == [{"kind": "Two"}]


class _Counted(dict[str, str]):
    """Texts that count which are read."""

    def __init__(self, texts: dict[str, str]) -> None:
        super().__init__(texts)
        self.read: list[str] = []

    def __getitem__(self, path: str) -> str:
        self.read.append(path)
        return super().__getitem__(path)

    def items(self) -> Any:
        raise AssertionError("every text read")

    def values(self) -> Any:
        raise AssertionError("every text read")


def test_documents_read_a_text_only_when_its_documents_are_asked_for() -> None:
    # GIVEN texts that count the reads (a tree whose texts come from the synth cache reads them only then)
    texts = _Counted({"a/one.yaml": "kind: One\n", "a/two.yaml": "kind: Two\n", "a/README.md": "# a\n"})
    # WHEN documents are made of them, another tree made from those, and one file's documents asked for
    documents = LazyDocuments({}, texts)
    other = documents.but({}, ["a/two.yaml"])
    assert sorted(documents) == ["a/one.yaml", "a/two.yaml"] and sorted(other) == ["a/one.yaml"]
    assert texts.read == []
    # THEN that file's text alone is read
    assert other["a/one.yaml"] == [{"kind": "One"}]
    assert texts.read == ["a/one.yaml"]
