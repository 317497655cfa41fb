"""Tests for fluxplane.validate.health: Flux healthCheckExprs run against healthy, failing and new objects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fluxplane.validate.cel import FLUX, Program, compile_expression
from fluxplane.validate.health import HealthVerdict, check_health, evaluate, status_fields_read, unchecked_lines
from fluxplane.validate.schemas import CrdCorpus
from fluxplane.validate.tree import Document, load_tree

ROOT = Path(__file__).resolve().parents[3]
CRDS = ROOT.parent / "shared" / "crds"
DIST = ROOT / "dist"

CONDITIONS = "status.?conditions.orValue([])"


def _true(condition: str) -> str:
    return f"{CONDITIONS}.exists(c, c.type == '{condition}' && c.status == 'True')"


def _false(condition: str) -> str:
    return f"{CONDITIONS}.exists(c, c.type == '{condition}' && c.status == 'False')"


def _kustomization(*entries: dict[str, Any]) -> Document:
    body = {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "gate", "namespace": "flux-system"},
        "spec": {"interval": "10m", "path": "./x", "healthCheckExprs": list(entries)},
    }
    return Document("clusters/hub/gate.yaml", 1, body)


def _xrd(name: str, claims: bool = False) -> Document:
    spec: dict[str, Any] = {
        "group": "platform.example.io",
        "names": {"kind": name.capitalize(), "plural": f"{name}s"},
        "versions": [{"name": "v1alpha1", "served": True, "referenceable": True}],
    }
    if claims:
        spec["claimNames"] = {"kind": f"{name.capitalize()}Claim", "plural": f"{name}claims"}
    body = {
        "apiVersion": "apiextensions.crossplane.io/v1",
        "kind": "CompositeResourceDefinition",
        "metadata": {"name": f"{name}s.platform.example.io"},
        "spec": spec,
    }
    return Document("xrds.yaml", 1, body)


def _lines(documents: list[Document]) -> list[str]:
    return [finding.line() for finding in check_health(documents).findings]


XRD_ESTABLISHED = {
    "apiVersion": "apiextensions.crossplane.io/v1",
    "kind": "CompositeResourceDefinition",
    "current": _true("Established"),
    "failed": _false("Established"),
}
XRD_OFFERED = {**XRD_ESTABLISHED, "current": f"{_true('Established')} && {_true('Offered')}"}


def _programs(**expressions: str) -> dict[str, Program]:
    out = {}
    for name, text in expressions.items():
        program = compile_expression(text, FLUX).program
        assert program is not None
        out[name] = program
    return out


def test_flux_order_in_progress_then_failed_then_current() -> None:
    # GIVEN three expressions that are all true
    programs = _programs(inProgress="true", failed="true", current="true")
    # THEN inProgress decides; without it failed; without both current; none true is InProgress
    assert evaluate(programs, {"status": {}}) == HealthVerdict("InProgress", "inProgress")
    assert evaluate({k: programs[k] for k in ("failed", "current")}, {}) == HealthVerdict("Failed", "failed")
    assert evaluate({"current": programs["current"]}, {}) == HealthVerdict("Current", "current")
    assert evaluate(_programs(current="false"), {}) == HealthVerdict("InProgress")


def test_flux_variables_are_top_level_fields_and_errors_are_unknown() -> None:
    programs = _programs(current="status.phase == 'Ready' && metadata.name == 'x'")
    assert evaluate(programs, {"metadata": {"name": "x"}, "status": {"phase": "Ready"}}).status == "Current"
    # WHEN status does not exist yet THEN the expression errors and Flux keeps waiting (Unknown)
    verdict = evaluate(programs, {"metadata": {"name": "x"}})
    assert (verdict.status, verdict.decided_by) == ("Unknown", "current")
    assert "status" in verdict.error


def test_observed_generation_behind_generation_is_in_progress() -> None:
    programs = _programs(current="true")
    body = {"metadata": {"generation": 2}, "status": {"observedGeneration": 1}}
    assert evaluate(programs, body) == HealthVerdict("InProgress", "observedGeneration")


@pytest.mark.skipif(not DIST.is_dir(), reason="no example dist/ to check")
def test_the_example_dist_has_no_health_findings() -> None:
    # GIVEN every healthCheckExprs entry of the example dist/ (with the CRD corpus when it is there)
    tree = load_tree(DIST)
    corpus = CrdCorpus.from_dirs([CRDS]) if CRDS.is_dir() else None
    report = check_health(tree.documents, corpus)
    # THEN none is wrong, every entry's kind is known and each was run against its fixtures
    assert [finding.line() for finding in report.findings] == []
    assert report.checked > 0
    assert report.unchecked == {}


def test_an_xrd_gate_requiring_offered_never_passes_without_claims() -> None:
    # GIVEN XRDs without claimNames (Crossplane sets Offered only for claims) gated on Established and Offered
    documents = [_xrd("network"), _kustomization(XRD_OFFERED)]
    # THEN the gate never passes on a healthy XRD
    assert _lines(documents) == [
        "clusters/hub/gate.yaml:1 Kustomization/gate: spec.healthCheckExprs[0].current: never passes on a healthy "
        'CompositeResourceDefinition like "networks.platform.example.io" (Established=True; no spec.claimNames, '
        "so never Offered): no expression is true for it, so Flux waits out the timeout"
    ]


def test_xrd_gates_that_match_the_claims_the_xrds_declare() -> None:
    # GIVEN Established-only gates, and an Offered gate over XRDs that all declare claims
    assert _lines([_xrd("network"), _xrd("database", claims=True), _kustomization(XRD_ESTABLISHED)]) == []
    assert _lines([_xrd("database", claims=True), _kustomization(XRD_OFFERED)]) == []


def test_an_expression_that_does_not_compile_is_a_finding() -> None:
    entry = {**XRD_ESTABLISHED, "failed": "status.conditions.exists(c, c.type == 'Established' &&"}
    lines = _lines([_xrd("network"), _kustomization(entry)])
    assert len(lines) == 1
    assert lines[0].startswith(
        "clusters/hub/gate.yaml:1 Kustomization/gate: spec.healthCheckExprs[0].failed: does not compile: Syntax error"
    )


def test_an_expression_outside_the_flux_environment_never_passes() -> None:
    # GIVEN cel.bind, which Flux's CEL environment does not have
    entry = {**XRD_ESTABLISHED, "current": f"cel.bind(conditions, {CONDITIONS}, conditions.size() > 0)"}
    lines = _lines([_xrd("network"), _kustomization(entry)])
    assert lines[0].startswith(
        "clusters/hub/gate.yaml:1 Kustomization/gate: spec.healthCheckExprs[0].current: never passes on a healthy "
    )
    assert "current errors: " in lines[0]


def test_a_composite_gate_failing_on_ready_false_fails_while_it_is_created() -> None:
    # GIVEN a composite of the tree's XRD that fails on Ready False (Crossplane's Creating state)
    composite = Document(
        "app.yaml",
        1,
        {"apiVersion": "platform.example.io/v1alpha1", "kind": "Network", "metadata": {"name": "net"}, "spec": {}},
    )
    entry = {
        "apiVersion": "platform.example.io/v1alpha1",
        "kind": "Network",
        "current": _true("Ready"),
        "failed": _false("Ready"),
    }
    # THEN the gate fails a composite that is still progressing; failing on Synced instead is right
    assert _lines([_xrd("network"), composite, _kustomization(entry)]) == [
        "clusters/hub/gate.yaml:1 Kustomization/gate: spec.healthCheckExprs[0].failed: fails a Network like "
        '"net" (Synced=True, Ready=False Creating) while it is still progressing: failed is true for it'
    ]
    assert _lines([_xrd("network"), composite, _kustomization({**entry, "failed": _false("Synced")})]) == []


def test_a_gate_passing_with_no_conditions_and_a_gate_without_failed() -> None:
    # GIVEN `all` over the conditions (true on an empty list) and no failed expression
    entry = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "current": f"{CONDITIONS}.all(c, c.status == 'True')",
    }
    lines = _lines([_kustomization(entry)])
    # THEN it passes a release the controller has not reported on, and a failing release waits out the timeout
    assert lines == [
        "clusters/hub/gate.yaml:1 Kustomization/gate: spec.healthCheckExprs[0].current: passes a HelmRelease whose "
        "status has no conditions yet: current is true for it",
        "clusters/hub/gate.yaml:1 Kustomization/gate: spec.healthCheckExprs[0]: no failed expression: a failing "
        "HelmRelease (Ready=False InstallFailed, Released=False InstallFailed) stays in progress until the timeout",
    ]


def test_helm_release_gates_are_checked_too() -> None:
    release = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "app", "namespace": "apps"},
        "spec": {"healthCheckExprs": [{**XRD_OFFERED}]},
    }
    lines = _lines([_xrd("network"), Document("release.yaml", 1, release)])
    assert [line.split(": ")[1] for line in lines] == ["spec.healthCheckExprs[0].current"]


def test_unknown_kinds_and_unmodelled_status_fields_are_counted_not_judged() -> None:
    # GIVEN a gate on a kind whose conditions are not known, and one reading status.atProvider
    thing = {"apiVersion": "example.io/v1", "kind": "Thing", "current": _true("Available")}
    vpc = {**XRD_ESTABLISHED, "current": "status.?atProvider.?id.hasValue()"}
    report = check_health([_xrd("network"), _kustomization(thing, vpc)])
    # THEN no finding; both are counted with the reason
    assert report.findings == []
    assert report.checked == 0
    assert unchecked_lines(report.unchecked) == [
        "healthCheckExprs for apiextensions.crossplane.io/v1 CompositeResourceDefinition (1 entry) not run on "
        "healthy or failing objects: it reads status.atProvider, which the fixtures do not model",
        "healthCheckExprs for example.io/v1 Thing (1 entry) not run on healthy or failing objects: the conditions "
        "its controller writes are not known",
    ]


def test_status_fields_read() -> None:
    # GIVEN field and index access on status, a condition's own status, and status inside a string
    text = f"{_true('Ready')} && status['phase'] == 'x.status.y' && has(status.ready) && c.status.x == 1"
    # THEN the top-level status fields read, nothing else
    assert status_fields_read(text) == {"conditions", "phase", "ready"}


@pytest.mark.skipif(not CRDS.is_dir(), reason=f"no CRD corpus at {CRDS} (../shared/crds)")
def test_managed_resources_are_recognised_from_their_crd() -> None:
    # GIVEN an Upbound VPC (its CRD has spec.forProvider) gated on Ready alone, failing on Ready False
    entry = {
        "apiVersion": "ec2.aws.m.upbound.io/v1beta1",
        "kind": "VPC",
        "current": _true("Ready"),
        "failed": _false("Ready"),
    }
    report = check_health([_kustomization(entry)], CrdCorpus.from_dirs([CRDS]))
    # THEN it is judged as a Crossplane managed resource: Ready False while creating is not a failure
    assert [finding.message for finding in report.findings] == [
        "fails a VPC (Synced=True, Ready=False Creating) while it is still progressing: failed is true for it"
    ]
