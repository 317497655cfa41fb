"""Tests for fluxplane.validate.cel: CRD x-kubernetes-validations rules run as the API server runs them."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from fluxplane.validate.cel import CelCounts, CelRules, escape
from fluxplane.validate.findings import Finding
from fluxplane.validate.schemas import CrdCorpus
from fluxplane.validate.tree import Document, load_tree

ROOT = Path(__file__).resolve().parents[3]
CRDS = ROOT.parent / "shared" / "crds"
DIST = ROOT / "dist"
needs_crds = pytest.mark.skipif(not CRDS.is_dir(), reason=f"no CRD corpus at {CRDS} (../shared/crds)")


def _rule(rule: str, **extra: Any) -> dict[str, Any]:
    return {"rule": rule, **extra}


def _rules(spec_schema: dict[str, Any]) -> CelRules:
    """Rules of an example.io/v1 Widget whose spec has ``spec_schema``."""
    schema = {"type": "object", "properties": {"spec": spec_schema}}
    return CelRules(
        lambda group, version, kind: schema if (group, version, kind) == ("example.io", "v1", "Widget") else None
    )


def _widget(spec: Any, api: str = "example.io/v1") -> Document:
    return Document("f.yaml", 1, {"apiVersion": api, "kind": "Widget", "metadata": {"name": "w"}, "spec": spec})


def _finding(path: str, message: str) -> Finding:
    return Finding("f.yaml", 1, "Widget", "w", path, message)


SIZES = {
    "type": "object",
    "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}},
    "x-kubernetes-validations": [_rule("self.min <= self.max", message="min must not exceed max", fieldPath=".min")],
}


def test_a_rule_that_holds_gives_nothing_and_is_counted() -> None:
    # GIVEN a rule min <= max WHEN the spec keeps it
    rules = _rules(SIZES)
    # THEN no finding, one evaluation
    assert rules.check(_widget({"min": 1, "max": 3})) == []
    assert rules.counts == CelCounts(evaluated=1)


def test_a_failing_rule_names_its_message_and_field_path() -> None:
    # GIVEN min above max THEN the finding sits at spec.min (the rule's fieldPath) with the rule's message
    rules = _rules(SIZES)
    assert rules.check(_widget({"min": 5, "max": 3})) == [_finding("spec.min", "min must not exceed max")]
    assert rules.counts == CelCounts(evaluated=1, failed=1)


def test_a_rule_without_message_says_which_rule_failed() -> None:
    rules = _rules({"type": "object", "x-kubernetes-validations": [_rule("has(self.name)")]})
    assert rules.check(_widget({})) == [_finding("spec", "failed rule: has(self.name)")]


def test_message_expression_shapes_the_message_and_reason_prefixes_it() -> None:
    # GIVEN a rule with a messageExpression and reason FieldValueRequired
    schema = {
        "type": "object",
        "properties": {"replicas": {"type": "integer"}},
        "x-kubernetes-validations": [
            _rule(
                "self.replicas >= 2",
                message="static message",
                messageExpression="'replicas must be at least 2, got ' + string(self.replicas)",
                reason="FieldValueRequired",
            )
        ],
    }
    # THEN the evaluated message, prefixed as the API server's Required error
    assert _rules(schema).check(_widget({"replicas": 1})) == [
        _finding("spec", "required value: replicas must be at least 2, got 1")
    ]


def test_a_message_expression_that_errors_falls_back_to_the_message() -> None:
    schema = {
        "type": "object",
        "x-kubernetes-validations": [_rule("has(self.a)", message="a is required", messageExpression="self.nope")],
    }
    assert _rules(schema).check(_widget({})) == [_finding("spec", "a is required")]


def test_optional_field_selection_and_or_value() -> None:
    # GIVEN a rule reading an optional field through a.?b.orValue()
    schema = {
        "type": "object",
        "properties": {"mode": {"type": "string"}, "tier": {"type": "string"}},
        "x-kubernetes-validations": [
            _rule("self.?mode.orValue('fast') != 'slow' || self.?tier.orValue('') == 'gold'", message="slow needs gold")
        ],
    }
    rules = _rules(schema)
    # THEN absent, allowed and refused values are told apart
    assert rules.check(_widget({})) == []
    assert rules.check(_widget({"mode": "slow", "tier": "gold"})) == []
    assert rules.check(_widget({"mode": "slow"})) == [_finding("spec", "slow needs gold")]


def test_string_extensions_and_kubernetes_library_functions() -> None:
    # GIVEN rules using the string extension, regex find, isIP, isCIDR, list and sets functions
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "address": {"type": "string"},
            "cidr": {"type": "string"},
            "ports": {"type": "array", "items": {"type": "integer"}},
        },
        "x-kubernetes-validations": [
            _rule("self.name.lowerAscii().split('-')[0] == 'web'"),
            _rule("self.name.find('[0-9]+') == '42' && self.name.indexOf('-') == 3"),
            _rule("'%s/%d'.format([self.name, 1]) == 'Web-42/1'"),
            _rule("isIP(self.address) && !isIP('10.0.0.01') && isCIDR(self.cidr) && !isCIDR(self.address)"),
            _rule("self.ports.isSorted() && self.ports.sum() == 8523 && self.ports.indexOf(443) == 1"),
            _rule("sets.contains(self.ports, [80]) && self.ports.max() == 8000"),
        ],
    }
    rules = _rules(schema)
    spec = {"name": "Web-42", "address": "10.0.0.1", "cidr": "10.0.0.0/16", "ports": [80, 443, 8000]}
    # THEN every rule holds and none is left unevaluated
    assert rules.check(_widget(spec)) == []
    assert rules.counts == CelCounts(evaluated=6)


def test_transition_rules_are_skipped_and_counted() -> None:
    # GIVEN an immutability rule and one whose 'oldSelf' is only in a string
    schema = {
        "type": "object",
        "x-kubernetes-validations": [
            _rule("self == oldSelf", message="spec is immutable"),
            _rule("!has(self.note) || self.note != 'oldSelf'"),
        ],
    }
    rules = _rules(schema)
    # THEN the transition rule is skipped and counted, the other one runs
    assert rules.check(_widget({"note": "x"})) == []
    assert rules.counts == CelCounts(evaluated=1, transition_skipped=1)


def test_optional_old_self_rules_run_on_create() -> None:
    schema = {
        "type": "object",
        "properties": {"size": {"type": "integer"}},
        "x-kubernetes-validations": [
            _rule("!oldSelf.hasValue() ? self.size < 10 : true", message="start small", optionalOldSelf=True)
        ],
    }
    rules = _rules(schema)
    assert rules.check(_widget({"size": 20})) == [_finding("spec", "start small")]
    assert rules.counts == CelCounts(evaluated=1, failed=1)


def test_a_rule_the_engine_cannot_compile_is_not_evaluated_never_passed() -> None:
    # GIVEN a rule using the Kubernetes quantity library, which the engine lacks
    schema = {
        "type": "object",
        "properties": {"memory": {"type": "string"}},
        "x-kubernetes-validations": [_rule("quantity(self.memory).isLessThan(quantity('1Gi'))")],
    }
    rules = _rules(schema)
    # THEN no finding, but counted as not evaluated and listed with the reason
    assert rules.check(_widget({"memory": "2Gi"})) == []
    assert rules.counts == CelCounts(not_evaluated=1)
    assert rules.not_evaluated_lines() == [
        "example.io/v1 Widget spec: rule not evaluated (undeclared reference to 'quantity' (in container ''); "
        "1 value): quantity(self.memory).isLessThan(quantity('1Gi'))"
    ]


def test_a_post_build_variable_makes_a_false_rule_not_evaluated() -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "x-kubernetes-validations": [_rule("self.name.startsWith('prod-')")],
    }
    rules = _rules(schema)
    assert rules.check(_widget({"name": "${cluster_name}"})) == []
    assert rules.counts == CelCounts(not_evaluated=1)
    assert "Flux post-build variable" in rules.not_evaluated_lines()[0]


def test_an_evaluation_error_is_a_finding_as_the_api_server_rejects_it() -> None:
    # GIVEN a rule reading a field that is absent (no has() guard)
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "x-kubernetes-validations": [_rule("self.a == 'x'", message="a must be x")],
    }
    assert _rules(schema).check(_widget({})) == [_finding("spec", "no such key: a evaluating rule: a must be x")]


def test_defaults_are_applied_before_rules_run() -> None:
    # GIVEN managementPolicies defaulting to ['*'] and an Upbound-style required-parameter rule
    schema = {
        "type": "object",
        "properties": {
            "managementPolicies": {"type": "array", "items": {"type": "string"}, "default": ["*"]},
            "forProvider": {"type": "object", "properties": {"region": {"type": "string"}}},
        },
        "x-kubernetes-validations": [
            _rule(
                "!('*' in self.managementPolicies) || has(self.forProvider.region)",
                message="spec.forProvider.region is a required parameter",
            )
        ],
    }
    rules = _rules(schema)
    # THEN the default applies (the rule fails without region), and an explicit Observe policy lifts it
    assert rules.check(_widget({"forProvider": {}})) == [
        _finding("spec", "spec.forProvider.region is a required parameter")
    ]
    assert rules.check(_widget({"forProvider": {}, "managementPolicies": ["Observe"]})) == []


def test_reserved_and_dashed_property_names_are_escaped() -> None:
    schema = {
        "type": "object",
        "properties": {"namespace": {"type": "string"}, "max-size": {"type": "integer"}},
        "x-kubernetes-validations": [_rule("has(self.__namespace__) && self.max__dash__size > 0", message="bad")],
    }
    assert _rules(schema).check(_widget({"namespace": "a", "max-size": 1})) == []
    assert escape("namespace") == "__namespace__"
    assert escape("a.b/c-d__e") == "a__dot__b__slash__c__dash__d__underscores__e"
    assert escape("9lives") is None


def test_rules_on_array_items_and_map_values_locate_the_entry() -> None:
    # GIVEN rules on the items of a list and on the values of a map
    schema = {
        "type": "object",
        "properties": {
            "zones": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "x-kubernetes-validations": [_rule("self.name.endsWith('a')", message="zone must end in a")],
                },
            },
            "limits": {
                "type": "object",
                "additionalProperties": {
                    "type": "number",
                    "x-kubernetes-validations": [_rule("self / 2.0 > 0.25", message="limit too small")],
                },
            },
        },
    }
    rules = _rules(schema)
    findings = rules.check(_widget({"zones": [{"name": "1a"}, {"name": "1b"}], "limits": {"cpu": 2, "mem": 0}}))
    # THEN each finding names the item or key; integers in a number field are doubles, as arithmetic shows
    assert sorted(findings) == [
        _finding("spec.limits.mem", "limit too small"),
        _finding("spec.zones[1]", "zone must end in a"),
    ]
    assert rules.counts == CelCounts(evaluated=4, failed=2)


def test_absent_and_null_values_run_no_rules() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "object", "x-kubernetes-validations": [_rule("false", message="never")]}},
    }
    rules = _rules(schema)
    assert rules.check(_widget({})) == []
    assert rules.check(_widget({"a": None})) == []
    assert rules.counts == CelCounts()


def test_root_rules_see_api_version_kind_and_name() -> None:
    schema = {
        "type": "object",
        "properties": {"metadata": {"type": "object"}, "spec": {"type": "object"}},
        "x-kubernetes-validations": [_rule("self.kind == 'Widget' && size(self.metadata.name) < 2", message="short")],
    }
    rules = CelRules(lambda group, version, kind: schema)
    assert rules.check(_widget({})) == []
    assert rules.counts == CelCounts(evaluated=1)


def test_the_trees_own_composite_definitions_bring_their_rules(tmp_path: Path) -> None:
    # GIVEN an XRD in the tree (group not in the corpus) with a rule, and a composite breaking it
    xrd = {
        "apiVersion": "apiextensions.crossplane.io/v2",
        "kind": "CompositeResourceDefinition",
        "metadata": {"name": "clusters.platform.example.io"},
        "spec": {
            "group": "platform.example.io",
            "names": {"kind": "Cluster", "plural": "clusters"},
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {"minSize": {"type": "integer"}, "maxSize": {"type": "integer"}},
                                    "x-kubernetes-validations": [
                                        _rule("self.minSize <= self.maxSize", message="minSize must not exceed maxSize")
                                    ],
                                }
                            },
                        }
                    },
                }
            ],
        },
    }
    composite = {
        "apiVersion": "platform.example.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": "c"},
        "spec": {"minSize": 4, "maxSize": 2},
    }
    (tmp_path / "crds").mkdir()
    rules = CelRules.from_corpus(CrdCorpus.from_dirs([tmp_path / "crds"]), [Document("x.yaml", 1, xrd)])
    assert rules.check(Document("c.yaml", 1, composite)) == [
        Finding("c.yaml", 1, "Cluster", "c", "spec", "minSize must not exceed maxSize")
    ]


@needs_crds
def test_upbound_managed_resource_missing_a_required_parameter() -> None:
    # GIVEN the real ec2.aws.m.upbound.io SecurityGroupIngressRule CRD, whose spec rule demands ipProtocol
    # while managementPolicies (default ['*']) lets the provider create the resource
    rules = CelRules.from_corpus(CrdCorpus.from_dirs([CRDS]))
    rule: dict[str, Any] = {
        "apiVersion": "ec2.aws.m.upbound.io/v1beta1",
        "kind": "SecurityGroupIngressRule",
        "metadata": {"name": "https", "namespace": "hub"},
        "spec": {"forProvider": {"region": "us-east-1", "cidrIpv4": "0.0.0.0/0", "fromPort": 443, "toPort": 443}},
    }
    # WHEN ipProtocol is missing THEN the Upbound message; WHEN present THEN nothing
    assert [finding.line() for finding in rules.check(Document("sg.yaml", 1, rule))] == [
        "sg.yaml:1 SecurityGroupIngressRule/https: spec: spec.forProvider.ipProtocol is a required parameter"
    ]
    rule["spec"]["forProvider"]["ipProtocol"] = "tcp"
    assert rules.check(Document("sg.yaml", 1, rule)) == []
    # AND observe-only resources need no parameters
    observed = {**rule, "spec": {"managementPolicies": ["Observe"], "forProvider": {}}}
    assert rules.check(Document("sg.yaml", 1, observed)) == []


@needs_crds
@pytest.mark.skipif(not DIST.is_dir(), reason="no example dist/ to check")
def test_the_example_dist_passes_every_rule() -> None:
    # GIVEN every document of the example dist/ and the real CRD corpus
    tree = load_tree(DIST)
    rules = CelRules.from_corpus(CrdCorpus.from_dirs([CRDS]), tree.documents)
    started = time.perf_counter()
    findings = rules.check_all(tree.documents)
    # THEN no rule fails, rules did run, and nothing was left unevaluated
    assert [finding.line() for finding in findings] == []
    assert rules.counts.failed == 0
    assert rules.counts.evaluated > 100
    assert rules.not_evaluated_lines() == []
    assert time.perf_counter() - started < 30
