"""The add-ons' IAM policies, as the JSON documents AWS and the add-ons' projects publish them.

Each policy a pack gives its Pod Identity role is a file of the pack's own package, ``<name>.json``, shipped
as package data (a built-in pack's in its folder: ``fluxplane/packs/karpenter/controller.json``): an upgrade
of an add-on whose project changed its policy is a paste of the new file, reviewed as a plain diff of JSON,
and the pack's code keeps only what it decides. ``${cluster_name}`` and ``${cluster_region}`` in a document
are the cluster's (see fluxplane.packs.api.PodIdentity); a pack whose policy depends on its config reads its
document as the template and fills the parts in code.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

__all__ = ["load_policy"]


def load_policy(name: str, package: str) -> dict[str, Any]:
    """The IAM policy document ``<name>.json`` of ``package`` (a pack passes its own, ``__name__`` in its
    package's ``__init__.py``), a fresh copy each call, so a pack may fill it in."""
    document: dict[str, Any] = json.loads(files(package).joinpath(f"{name}.json").read_text(encoding="utf-8"))
    return document
