"""Documents and object keys: what a synthesized tree holds, and how an object is told apart on a cluster.

A tree is read as documents keyed by their path under dist/ (``platform/clusters/hub/infrastructure.yaml``),
each path holding the documents of that file in order. Values that are not mappings (an empty document, a
list) are skipped where objects are read but keep their place, so an object's index in its file is the
index a reviewer counts. Synth hands its documents over without writing them (``LazyDocuments``), so a
cluster's graph reads only the files that cluster needs, each when first asked for.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from fluxplane.core.codec import load_documents

Document = dict[str, Any]
#: Documents by their path under dist/; values that are not mappings are skipped (they keep their index).
Documents = Mapping[str, Sequence[Any]]

FLUX_KUSTOMIZE = "kustomize.toolkit.fluxcd.io"
FLUX_HELM = "helm.toolkit.fluxcd.io"
FLUX_SOURCE = "source.toolkit.fluxcd.io"
#: The names kustomize reads a folder's build from, in the order it looks for them.
KUSTOMIZE_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
#: Kinds kustomize's namespace field and Flux's targetNamespace leave alone.
CLUSTER_SCOPED = frozenset(
    {
        "Namespace",
        "CustomResourceDefinition",
        "ClusterRole",
        "ClusterRoleBinding",
        "CompositeResourceDefinition",
        "Composition",
        "Provider",
        "Function",
        "Configuration",
        "DeploymentRuntimeConfig",
        "ClusterIssuer",
        "ClusterSecretStore",
        "ClusterPolicy",
        "GatewayClass",
        "StorageClass",
        "PriorityClass",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "NodePool",
        "EC2NodeClass",
        "ClusterProviderConfig",
    }
)


class Key(NamedTuple):
    """An object's identity on a cluster: its version may change, its group, kind, namespace and name not.

    The namespace is "" for a cluster-scoped object (and for one that names none)."""

    group: str
    kind: str
    namespace: str
    name: str

    @property
    def shown(self) -> str:
        """``Kind namespace/name`` (``Kind name`` for a cluster-scoped object), as messages name the object."""
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


class Item(NamedTuple):
    """One object as a kustomize build yields it: the document, the file and 1-based position in it that it was
    read from (None and 0 when a build tool made it), and the namespace a kustomization's ``namespace`` field
    gave it."""

    doc: Document
    path: str | None = None
    position: int = 0
    namespace: str | None = None


def group_of(api_version: object) -> str:
    """The API group of ``apiVersion`` ("" for the core group)."""
    return api_version.rpartition("/")[0] if isinstance(api_version, str) and "/" in api_version else ""


def metadata_of(doc: Mapping[str, Any]) -> dict[str, Any]:
    metadata = doc.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def spec_of(doc: Mapping[str, Any]) -> dict[str, Any]:
    spec = doc.get("spec")
    return spec if isinstance(spec, dict) else {}


def key_of(doc: Mapping[str, Any], namespace: str | None = None) -> Key:
    """The key of ``doc``; ``namespace`` is where it lands, when known (else its own ``metadata.namespace``)."""
    metadata = metadata_of(doc)
    return Key(
        group_of(doc.get("apiVersion")),
        str(doc.get("kind") or ""),
        str(metadata.get("namespace") or "") if namespace is None else namespace,
        str(metadata.get("name") or ""),
    )


def is_flux_kustomization(doc: Mapping[str, Any]) -> bool:
    return doc.get("kind") == "Kustomization" and group_of(doc.get("apiVersion")) == FLUX_KUSTOMIZE


#: How the path of a file kustomize reads ends: YAML, or a kustomization file named ``Kustomization``.
_MANIFEST_ENDINGS = (".yaml", ".yml", "/Kustomization")


class LazyDocuments(Mapping[str, Sequence[Any]]):
    """Documents by path, made when first asked for: by ``makers`` (synth's manifests), else parsed from
    ``texts`` (files that are not YAML, such as README.md, are left out). A text is taken from ``texts`` only when
    its documents are asked for: ``texts`` may read them only then (a tree whose files come from the synth cache)."""

    def __init__(
        self, makers: Mapping[str, Callable[[], Sequence[Any]]], texts: Mapping[str, str] | None = None
    ) -> None:
        self._makers = makers
        self._source: Mapping[str, str] = texts or {}
        # One pass over a fleet's paths, without a call per path: this runs on every file of dist/
        self._texts: dict[str, None] = dict.fromkeys(
            path for path in self._source if path.endswith(_MANIFEST_ENDINGS) or path == "Kustomization"
        )

    def but(self, makers: Mapping[str, Callable[[], Sequence[Any]]], left_out: Iterable[str]) -> LazyDocuments:
        """These documents with ``makers`` first and the texts of ``left_out`` gone: another tree that differs from
        this one in a few files, made with a copy of the paths instead of another pass over every path."""
        other = LazyDocuments(makers)
        texts = dict(self._texts)
        for path in left_out:
            texts.pop(path, None)
        other._source, other._texts = self._source, texts
        return other

    def __getitem__(self, path: str) -> Sequence[Any]:
        # Not kept: the folder reader keeps what it builds from a folder, and reads each file for one folder.
        maker = self._makers.get(path)
        if maker is not None:
            return maker()
        if path in self._texts:
            # lists too: a JSON 6902 patch file is one (fluxplane.core.tree.patches)
            return [doc for doc in load_documents(self._source[path]) if isinstance(doc, dict | list)]
        raise KeyError(path)

    def __contains__(self, path: object) -> bool:
        return path in self._makers or path in self._texts

    # Both run over every file of dist/ (a reader sorts the paths once): without a Python step per path
    def __iter__(self) -> Iterator[str]:
        return itertools.chain(self._makers, itertools.filterfalse(self._makers.__contains__, self._texts))

    def __len__(self) -> int:
        if not self._makers:
            return len(self._texts)
        return len(self._makers) + len(self._texts.keys() - self._makers.keys())
