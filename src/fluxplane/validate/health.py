"""Flux ``healthCheckExprs``: every gate of every Kustomization and HelmRelease, compiled and run against the
objects it gates, healthy, failing, progressing and new.

**How Flux runs a gate** (fluxcd/pkg ``runtime/cel``, used by kustomize-controller and helm-controller).
Each expression is parsed, not type-checked, in a CEL environment with optional types and the strings,
sets and encoders extensions (no ``cel.bind``, no math). The variables are the object's top-level fields
(``status``, ``metadata``, ``spec``...); there is no ``self``. An object whose ``status.observedGeneration``
differs from its ``metadata.generation`` is InProgress. Otherwise ``inProgress``, ``failed`` and ``current``
are evaluated in that order and the first that is true decides (InProgress, Failed, Current); none true
is InProgress. An expression that errors (``status`` before the controller has written one, a missing key
read without ``.?``) leaves the object Unknown and Flux keeps waiting, as it does for InProgress, until
the Kustomization's timeout.

**The fixtures.** An entry is run against objects of its kind: the tree's own objects of that group and
kind when it has any (so an XRD gate sees whether the XRD declares ``claimNames``), else a bare object;
each gets ``metadata.generation`` 1 and a status as its controller writes it, with ``observedGeneration``
1 and the conditions below when the kind's CRD declares them (a CRD without ``status.conditions`` gets
none: the API server would drop them). The conditions per kind:

- Crossplane composites (kinds of the tree's XRDs) and managed resources (CRDs with ``spec.forProvider``):
  healthy Synced and Ready True; failing Synced False (ReconcileError) with Ready False; progressing
  Synced True with Ready False (Creating), as while Crossplane composes or the provider creates.
- CompositeResourceDefinition: healthy Established True, plus Offered True only when the XRD declares
  ``spec.claimNames`` (Crossplane offers nothing else); failing Established False (TerminatingComposite).
- Provider, Function, Configuration: healthy Installed and Healthy True; failing Healthy False;
  progressing Installed False with Healthy Unknown (unpacking).
- HelmRelease: healthy Ready and Released True; failing both False (InstallFailed); progressing
  Reconciling True with Ready Unknown. Other Flux kinds: the same with Ready alone.
- SealedSecret: Synced True / False. Certificate: Ready True; failing Ready and Issuing False;
  progressing Ready False (DoesNotExist) while Issuing True. Gateway and GatewayClass: Accepted (and
  Programmed) True / False; progressing Unknown (Pending).
- External Secrets stores and secrets, cert-manager issuers, Karpenter kinds: Ready True / False.

**The findings.** A gate that a healthy object never passes (Flux would wait out the timeout on every
reconcile), that never fails a failing object (the failure surfaces only at the timeout), that passes or
fails an object with no status yet, or that fails or passes one still progressing; and an expression that
does not compile. Entries of other kinds are compiled and run on a new object only, and counted as
unchecked.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fluxplane.validate.cel import FLUX, Program, compile_expression, corpus_schema, defined_schemas, without_literals
from fluxplane.validate.findings import Finding, format_path, short
from fluxplane.validate.schemas import CrdCorpus
from fluxplane.validate.tree import Document

#: The kinds that carry ``spec.healthCheckExprs``.
GATED = {("kustomize.toolkit.fluxcd.io", "Kustomization"), ("helm.toolkit.fluxcd.io", "HelmRelease")}
EXPRESSIONS = ("current", "inProgress", "failed")
#: The status fields the fixtures model; a gate reading others is only run on a new object.
MODELLED = frozenset({"conditions", "observedGeneration"})
_STATUS_FIELD = re.compile(r"(?<![.\w])status\s*\.\??\s*([A-Za-z_]\w*)")
_STATUS_INDEX = re.compile(r"""(?<![.\w])status\s*\[\??\s*(?:'([^']*)'|"([^"]*)")\s*\]""")

Condition = tuple[str, str, str]


@dataclass(frozen=True)
class Profile:
    """The conditions a kind's controller writes when the object is healthy, failing and progressing."""

    healthy: tuple[Condition, ...]
    failing: tuple[Condition, ...]
    progressing: tuple[Condition, ...] = ()


CROSSPLANE_RESOURCE = Profile(
    healthy=(("Synced", "True", "ReconcileSuccess"), ("Ready", "True", "Available")),
    failing=(("Synced", "False", "ReconcileError"), ("Ready", "False", "Creating")),
    progressing=(("Synced", "True", "ReconcileSuccess"), ("Ready", "False", "Creating")),
)
DEFINITION = Profile(
    healthy=(("Established", "True", "WatchingCompositeResource"),),
    failing=(("Established", "False", "TerminatingCompositeResource"),),
)
OFFERED: Condition = ("Offered", "True", "WatchingCompositeResourceClaim")
PACKAGE = Profile(
    healthy=(("Installed", "True", "ActivePackageRevision"), ("Healthy", "True", "HealthyPackageRevision")),
    failing=(("Installed", "True", "ActivePackageRevision"), ("Healthy", "False", "UnhealthyPackageRevision")),
    progressing=(("Installed", "False", "UnpackingPackage"), ("Healthy", "Unknown", "UnknownPackageRevisionHealth")),
)
HELM_RELEASE = Profile(
    healthy=(("Ready", "True", "UpgradeSucceeded"), ("Released", "True", "UpgradeSucceeded")),
    failing=(("Ready", "False", "InstallFailed"), ("Released", "False", "InstallFailed")),
    progressing=(("Reconciling", "True", "Progressing"), ("Ready", "Unknown", "Progressing")),
)
FLUX_OBJECT = Profile(
    healthy=(("Ready", "True", "Succeeded"),),
    failing=(("Ready", "False", "ReconciliationFailed"),),
    progressing=(("Reconciling", "True", "Progressing"), ("Ready", "Unknown", "Progressing")),
)
READY = Profile(healthy=(("Ready", "True", "Ready"),), failing=(("Ready", "False", "Failed"),))
SEALED_SECRET = Profile(healthy=(("Synced", "True", ""),), failing=(("Synced", "False", "ErrUnsealFailed"),))
CERTIFICATE = Profile(
    healthy=(("Ready", "True", "Ready"),),
    failing=(("Ready", "False", "Failed"), ("Issuing", "False", "Failed")),
    progressing=(("Ready", "False", "DoesNotExist"), ("Issuing", "True", "DoesNotExist")),
)
GATEWAY = Profile(
    healthy=(("Accepted", "True", "Accepted"), ("Programmed", "True", "Programmed")),
    failing=(("Accepted", "False", "Invalid"), ("Programmed", "False", "Invalid")),
    progressing=(("Accepted", "Unknown", "Pending"), ("Programmed", "Unknown", "Pending")),
)
GATEWAY_CLASS = Profile(
    healthy=(("Accepted", "True", "Accepted"),),
    failing=(("Accepted", "False", "InvalidParameters"),),
    progressing=(("Accepted", "Unknown", "Pending"),),
)
#: (group, kind) -> profile, for kinds whose group does not say it all.
KNOWN: dict[tuple[str, str], Profile] = {
    ("apiextensions.crossplane.io", "CompositeResourceDefinition"): DEFINITION,
    ("pkg.crossplane.io", "Provider"): PACKAGE,
    ("pkg.crossplane.io", "Function"): PACKAGE,
    ("pkg.crossplane.io", "Configuration"): PACKAGE,
    ("helm.toolkit.fluxcd.io", "HelmRelease"): HELM_RELEASE,
    ("bitnami.com", "SealedSecret"): SEALED_SECRET,
    ("cert-manager.io", "Certificate"): CERTIFICATE,
    ("cert-manager.io", "Issuer"): READY,
    ("cert-manager.io", "ClusterIssuer"): READY,
    ("gateway.networking.k8s.io", "Gateway"): GATEWAY,
    ("gateway.networking.k8s.io", "GatewayClass"): GATEWAY_CLASS,
    ("karpenter.sh", "NodePool"): READY,
    ("karpenter.sh", "NodeClaim"): READY,
    ("karpenter.k8s.aws", "EC2NodeClass"): READY,
    **{
        ("external-secrets.io", kind): READY
        for kind in ("ExternalSecret", "ClusterExternalSecret", "SecretStore", "ClusterSecretStore", "PushSecret")
    },
}


@dataclass(frozen=True)
class Fixture:
    """One object to run a gate on, what Flux should make of it, and how a message names it."""

    role: str
    body: dict[str, Any]
    describe: str


@dataclass(frozen=True)
class HealthVerdict:
    """Flux's status for an object: Current, Failed, InProgress or Unknown, which expression decided, and why."""

    status: str
    decided_by: str = ""
    error: str = ""


@dataclass
class HealthReport:
    findings: list[Finding]
    #: Entries run against healthy, failing and progressing objects of their kind.
    checked: int = 0
    #: (apiVersion, kind, why) -> entries only compiled and run on objects with no status or no conditions.
    unchecked: dict[tuple[str, str, str], int] = field(default_factory=dict)


def evaluate(programs: Mapping[str, Program], body: Mapping[str, Any]) -> HealthVerdict:
    """Flux's verdict on ``body`` for compiled ``current``/``inProgress``/``failed`` programs (absent ones skipped)."""
    status = body.get("status")
    metadata = body.get("metadata")
    if isinstance(status, dict) and "observedGeneration" in status and isinstance(metadata, dict):
        generation = metadata.get("generation")
        if generation is not None and status["observedGeneration"] != generation:
            return HealthVerdict("InProgress", "observedGeneration")
    for name, result in (("inProgress", "InProgress"), ("failed", "Failed"), ("current", "Current")):
        program = programs.get(name)
        if program is None:
            continue
        outcome = program.run(body)
        if outcome.error:
            return HealthVerdict("Unknown", name, outcome.error)
        if not isinstance(outcome.value, bool):
            return HealthVerdict("Unknown", name, f"evaluates to {short(outcome.value)}, not a bool")
        if outcome.value:
            return HealthVerdict(result, name)
    return HealthVerdict("InProgress")


class _Kinds:
    """What the tree and the CRD corpus say about a kind: its profile and the status fields its CRD has."""

    def __init__(self, documents: Sequence[Document], corpus: CrdCorpus | None) -> None:
        self._corpus = corpus
        self._own = defined_schemas(documents)
        self.composites: set[tuple[str, str]] = set()
        self.objects: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for document in documents:
            body = document.body
            if not isinstance(body, dict) or not isinstance(body.get("kind"), str):
                continue
            group = _group(body.get("apiVersion"))
            if group is not None:
                self.objects.setdefault((group, body["kind"]), []).append(body)
            if body["kind"] == "CompositeResourceDefinition" and isinstance(body.get("spec"), dict):
                spec = body["spec"]
                for names in (spec.get("names"), spec.get("claimNames")):
                    if isinstance(names, dict) and isinstance(names.get("kind"), str):
                        self.composites.add((str(spec.get("group")), names["kind"]))

    def schema(self, api_version: str, kind: str) -> Any:
        group, _, version = api_version.rpartition("/")
        if self._corpus is not None and self._corpus.covers(group):
            return corpus_schema(self._corpus, group, version, kind)
        return self._own.get((group, version, kind))

    def profile(self, api_version: str, kind: str) -> Profile | None:
        group = _group(api_version) or ""
        if (group, kind) in self.composites:
            return CROSSPLANE_RESOURCE
        if (group, kind) in KNOWN:
            return KNOWN[(group, kind)]
        if group.endswith(".toolkit.fluxcd.io"):
            return FLUX_OBJECT
        spec = (_properties(self.schema(api_version, kind)).get("spec")) or {}
        return CROSSPLANE_RESOURCE if "forProvider" in _properties(spec) else None


def _group(api_version: Any) -> str | None:
    if not isinstance(api_version, str) or not api_version:
        return None
    return api_version.rpartition("/")[0]


def _properties(schema: Any) -> dict[str, Any]:
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return properties if isinstance(properties, dict) else {}


def _status_fields(schema: Any, composite: bool) -> tuple[bool, bool]:
    """Whether the kind's status keeps ``conditions`` and ``observedGeneration`` (unknown CRD: both)."""
    if composite or not isinstance(schema, dict) or schema.get("x-kubernetes-preserve-unknown-fields") is True:
        return True, not composite
    status = _properties(schema).get("status")
    if not isinstance(status, dict):
        return False, False
    if status.get("x-kubernetes-preserve-unknown-fields") is True:
        return True, True
    fields = _properties(status)
    return "conditions" in fields, "observedGeneration" in fields


def _describe(conditions: Sequence[Condition]) -> str:
    return ", ".join(
        f"{kind}={status}" + (f" {reason}" if reason and status != "True" else "")
        for kind, status, reason in conditions
    )


def _bare(sample: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``sample`` at generation 1, without status: the object as Flux has just applied it."""
    body = copy.deepcopy(dict(sample))
    body.pop("status", None)
    metadata = body.get("metadata")
    body["metadata"] = {**(metadata if isinstance(metadata, dict) else {}), "generation": 1}
    return body


def _with_status(
    sample: Mapping[str, Any], conditions: Sequence[Condition], fields: tuple[bool, bool]
) -> dict[str, Any]:
    body = _bare(sample)
    status: dict[str, Any] = {}
    if fields[1]:
        status["observedGeneration"] = 1
    if fields[0] and conditions:
        status["conditions"] = [
            {
                "type": kind,
                "status": value,
                **({"reason": reason} if reason else {}),
                "message": "",
                "lastTransitionTime": "2025-01-01T00:00:00Z",
                "observedGeneration": 1,
            }
            for kind, value, reason in conditions
        ]
    body["status"] = status
    return body


def _fixtures(api_version: str, kind: str, kinds: _Kinds, profile: Profile | None) -> list[Fixture]:
    """The objects an entry for ``api_version``/``kind`` is run on (see the module docstring)."""
    group = _group(api_version) or ""
    own = kinds.objects.get((group, kind), [])
    samples = own or [{"apiVersion": api_version, "kind": kind, "metadata": {"name": "example"}, "spec": {}}]
    if profile is DEFINITION:
        # XRDs with and without claims get different healthy conditions: one sample of each the tree has.
        by_claims = {bool((sample.get("spec") or {}).get("claimNames")): sample for sample in reversed(samples)}
        samples = [by_claims[key] for key in sorted(by_claims)]
    else:
        samples = samples[:1]
    composite = (group, kind) in kinds.composites
    fields = _status_fields(kinds.schema(api_version, kind), composite)
    out: list[Fixture] = []
    for sample in samples:
        name = (sample.get("metadata") or {}).get("name")
        like = f' like "{name}"' if own and isinstance(name, str) else ""
        out.append(Fixture("new", _bare(sample), f"{kind}{like} with no status yet"))
        out.append(Fixture("new", _with_status(sample, (), fields), f"{kind}{like} whose status has no conditions yet"))
        if profile is None:
            continue
        healthy = profile.healthy
        note = ""
        if profile is DEFINITION:
            if (sample.get("spec") or {}).get("claimNames"):
                healthy = (*healthy, OFFERED)
            else:
                note = "; no spec.claimNames, so never Offered"
        if not fields[0]:
            note += "; its CRD declares no status.conditions"
        roles = [("healthy", healthy), ("failing", profile.failing)]
        if profile.progressing:
            roles.append(("progressing", profile.progressing))
        for role, conditions in roles:
            body = _with_status(sample, conditions, fields)
            out.append(Fixture(role, body, f"{kind}{like} ({_describe(conditions)}{note})"))
    return out


def _why(verdict: HealthVerdict) -> str:
    if verdict.status == "Unknown":
        return f"{verdict.decided_by} errors: {verdict.error}"
    if verdict.decided_by == "observedGeneration":
        return "its observedGeneration lags"
    if verdict.decided_by:
        return f"{verdict.decided_by} is true for it"
    return "no expression is true for it"


def _judge(fixture: Fixture, verdict: HealthVerdict, present: set[str]) -> tuple[str, str] | None:
    """(expression, message) when Flux's verdict on ``fixture`` is wrong for its role, else None."""
    status, role, what = verdict.status, fixture.role, fixture.describe
    if role == "healthy" and status != "Current":
        return "current", f"never passes on a healthy {what}: {_why(verdict)}, so Flux waits out the timeout"
    if role == "failing" and status != "Failed":
        if "failed" not in present:
            return "", f"no failed expression: a failing {what} stays in progress until the timeout"
        where = "failed" if status != "Current" else "current"
        return where, f"never fails a failing {what}: {_why(verdict)}, so the failure shows only at the timeout"
    if role in ("new", "progressing") and status in ("Current", "Failed"):
        where, verb = ("current", "passes") if status == "Current" else ("failed", "fails")
        article = "an" if what[:1].upper() in "AEIOU" else "a"
        still = " while it is still progressing" if role == "progressing" else ""
        return where, f"{verb} {article} {what}{still}: {_why(verdict)}"
    return None


def status_fields_read(expression: str) -> set[str]:
    """The fields of ``status`` an expression reads by name (``status.?conditions`` -> ``conditions``)."""
    indexed = {single or double for single, double in _STATUS_INDEX.findall(expression)}
    return indexed | set(_STATUS_FIELD.findall(without_literals(expression)))


def _check_entry(entry: Mapping[str, Any], kinds: _Kinds) -> tuple[list[tuple[str, str]], str | None]:
    """(expression, message) problems of one ``healthCheckExprs`` entry, and why it was only partly checked:
    "" when it was run against every fixture of its kind, None when it could not run at all."""
    api_version, kind = entry.get("apiVersion"), entry.get("kind")
    problems: list[tuple[str, str]] = []
    programs: dict[str, Program] = {}
    for name in EXPRESSIONS:
        text = entry.get(name)
        if not isinstance(text, str) or not text.strip():
            continue
        compiled = compile_expression(text, FLUX)
        if compiled.program is None:
            problems.append((name, f"does not compile: {compiled.error}"))
        else:
            programs[name] = compiled.program
    if problems or "current" not in programs or not isinstance(api_version, str) or not isinstance(kind, str):
        return problems, None
    profile = kinds.profile(api_version, kind)
    unmodelled = sorted(set().union(*(status_fields_read(entry[name]) for name in programs)) - MODELLED)
    why = ""
    if profile is None:
        why = "the conditions its controller writes are not known"
    elif unmodelled:
        why = f"it reads status.{', status.'.join(unmodelled)}, which the fixtures do not model"
        profile = None
    for fixture in _fixtures(api_version, kind, kinds, profile):
        problem = _judge(fixture, evaluate(programs, fixture.body), set(programs))
        if problem is not None and problem not in problems:
            problems.append(problem)
    return problems, why


def check_health(documents: Sequence[Document], corpus: CrdCorpus | None = None) -> HealthReport:
    """Every ``spec.healthCheckExprs`` entry of the Kustomizations and HelmReleases in ``documents``.

    ``corpus`` (the CRD schemas validate reads) tells which status fields a kind keeps and which kinds are
    Crossplane managed resources; the tree's own CRDs and XRDs are read from ``documents``.
    """
    kinds = _Kinds(documents, corpus)
    report = HealthReport([])
    done: dict[tuple[Any, ...], tuple[list[tuple[str, str]], str | None]] = {}
    for document in documents:
        body = document.body
        if not isinstance(body, dict) or (_group(body.get("apiVersion")), body.get("kind")) not in GATED:
            continue
        entries = (body.get("spec") or {}).get("healthCheckExprs") if isinstance(body.get("spec"), dict) else None
        for index, entry in enumerate(entries if isinstance(entries, list) else []):
            if not isinstance(entry, dict):
                continue
            key = tuple(str(entry.get(name)) for name in ("apiVersion", "kind", *EXPRESSIONS))
            if key not in done:
                done[key] = _check_entry(entry, kinds)
            problems, why = done[key]
            if why == "":
                report.checked += 1
            elif why is not None:
                unchecked = (str(entry["apiVersion"]), str(entry["kind"]), why)
                report.unchecked[unchecked] = report.unchecked.get(unchecked, 0) + 1
            for name, message in problems:
                parts: list[str | int] = ["spec", "healthCheckExprs", index, *([name] if name else [])]
                report.findings.append(document.finding(format_path(parts), message))
    return report


def unchecked_lines(unchecked: Mapping[tuple[str, str, str], int]) -> list[str]:
    """One line per kind whose gates were only compiled and run on objects with no status or conditions yet."""
    lines = []
    for (api_version, kind, why), count in sorted(unchecked.items()):
        noun = "entry" if count == 1 else "entries"
        lines.append(
            f"healthCheckExprs for {api_version} {kind} ({count} {noun}) not run on healthy or failing objects: {why}"
        )
    return lines
