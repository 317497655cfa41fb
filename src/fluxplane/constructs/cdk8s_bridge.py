"""fluxplane constructs in any cdk8s app: what cdk8s synthesizes of them.

fluxplane's objects live in a Python tree below their scope (fluxplane.constructs.base), so cdk8s does not
see them by itself. When one is first created under a cdk8s Chart, or under a construct inside one, the
scope gets a validation, which cdk8s runs when it synthesizes the app (``app.synth()``, ``cdk8s synth``,
``chart.to_json()``): it writes the scope's fluxplane objects once, as fluxplane renders them, and includes
them (``cdk8s.Include``), so they join the chart's output in one crossing of the JavaScript bridge, however
many there are. Under a FleetApp's charts they are written by fluxplane itself instead (FleetChart's files).

A fluxplane object that no chart would write is refused when it is created: directly under an App (a
FleetApp too: its objects belong in a chart's file), or under a construct outside any Chart.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import Any

import cdk8s
import constructs
import jsii

from fluxplane.core.codec import dump_documents
from fluxplane.errors import ConstructError

#: The id of the construct that holds a scope's fluxplane objects in cdk8s's tree.
INCLUDE_ID = "fluxplane"


@jsii.implements(constructs.IValidation)
class _Include:
    """Hands the scope's fluxplane objects to cdk8s, once, when the app is validated before synthesis."""

    def __init__(self, scope: Any, documents: Callable[[], list[dict[str, Any]]]) -> None:
        self.scope = scope
        self.documents = documents
        self.done = False

    def validate(self) -> list[str]:
        if self.done:
            return []
        self.done = True
        documents = self.documents()
        if not documents:
            return []
        descriptor, path = tempfile.mkstemp(prefix="fluxplane-", suffix=".yaml")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as out:
                out.write(dump_documents(documents))
            cdk8s.Include(self.scope, INCLUDE_ID, url=path)
        finally:
            os.unlink(path)
        return []


def adopt(scope: Any, path: str, documents: Callable[[], list[dict[str, Any]]]) -> None:
    """Make cdk8s synthesize the fluxplane objects that ``scope`` (a jsii construct) is about to hold, or
    refuse a scope no chart would write them from. ``documents`` gives those objects, as rendered, when cdk8s
    synthesizes (fluxplane.constructs.base passes them in, so this module needs nothing of it). A scope that
    is not a constructs.Construct (a stand-in with a ``node``, in tests) is left alone."""
    if not isinstance(scope, constructs.Construct):
        return
    if isinstance(scope, cdk8s.App):
        raise ConstructError(
            f"{path}: a fluxplane construct directly under the app would be written nowhere: create it in a "
            "cdk8s Chart (or in a file of a FleetChart: chart.add_manifest(...))"
        )
    try:
        cdk8s.Chart.of(scope)
    except RuntimeError:
        raise ConstructError(
            f"{path}: not inside a cdk8s Chart, so a fluxplane construct here would be written nowhere"
        ) from None
    scope.node.add_validation(_Include(scope, documents))
