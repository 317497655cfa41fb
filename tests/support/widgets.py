"""A custom kind of no real API, example.io's Widget, for the validate tests: its CRD, and a tree whose hub holds
one next to a ConfigMap."""

from __future__ import annotations

from pathlib import Path

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.io
spec:
  group: example.io
  names: {kind: Widget, plural: widgets}
"""

KUSTOMIZATION = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- a.yaml\n"
CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: default\ndata:\n  size: {size}\n"
WIDGET = "apiVersion: example.io/v1\nkind: Widget\nmetadata:\n  name: w\n"


def hub_tree(root: Path, size: str) -> Path:
    """A tree below ``root`` with the hub's entry point: a ConfigMap whose ``size`` is ``size`` (YAML), and a Widget
    no CRD describes."""
    hub = root / "platform" / "clusters" / "hub"
    hub.mkdir(parents=True)
    (hub / "kustomization.yaml").write_text(KUSTOMIZATION)
    (hub / "a.yaml").write_text(CONFIG_MAP.format(size=size) + "---\n" + WIDGET)
    return root
