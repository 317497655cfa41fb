"""Composite resources and their Compositions, rendered offline and checked against the upstream schemas.

``render_compositions(documents, corpus)`` checks every XR of a tree against the schema Crossplane
generates from its XRD, renders the Compositions Crossplane would select for it with a Python port of
function-patch-and-transform, and checks the composed resources against their CRDs and the references
their selectors make. The parts: :mod:`.fieldpath` (crossplane-runtime field paths and merges),
:mod:`.gofmt` (Go's fmt for Format transforms), :mod:`.transforms`, :mod:`.ptinput` (the function's
input), :mod:`.engine` (a render to Crossplane's fixed point), :mod:`.xr` (XRDs, defaults, selection),
:mod:`.composition` (a Composition's pipeline and the checks that need no XR), :mod:`.paths` (paths
against schemas, selector targets), :mod:`.selectors`, :mod:`.fastcheck` (a fast yes/no pre-check of
the strict schemas) and :mod:`.checks` (the checks over a tree and the report).
"""

from fluxplane.validate.compose.checks import ComposeReport, NotRendered, render_compositions
from fluxplane.validate.compose.engine import DesiredResource, Failure, FunctionPipeline, Render, Withheld, render
from fluxplane.validate.compose.fieldpath import Unknown
from fluxplane.validate.compose.ptinput import Resources, read_resources

__all__ = [
    "ComposeReport",
    "DesiredResource",
    "Failure",
    "FunctionPipeline",
    "NotRendered",
    "Render",
    "Resources",
    "Unknown",
    "Withheld",
    "read_resources",
    "render",
    "render_compositions",
]
