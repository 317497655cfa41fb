"""kyverno: admission policies, starting with the Kubernetes Pod Security Standards.

One policy applies a whole Pod Security Standards level (the "latest" version of the standard), with the
namespaces of the platform's own privileged components left out. By default it is a ClusterPolicy with
Kyverno's ``podSecurity`` validate rule, its failure action set per rule (``validate.failureAction``: the
policy-wide ``validationFailureAction`` is deprecated since Kyverno 1.13). ``policyKind: ValidatingPolicy``
writes it as Kyverno's CEL policy kind instead (fluxplane.packs.kyverno.pod_security), which Kyverno now
prefers to the deprecated ClusterPolicy. Kyverno's chart installs its CRDs, so the policy is applied in
``kyverno-configs``, once the release is Ready.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from fluxplane.config.models import repeated
from fluxplane.packs import versions
from fluxplane.packs.fluent_bit import NAMESPACE as LOGGING
from fluxplane.packs.kyverno.pod_security import validating_policy
from fluxplane.packs.prometheus import NAMESPACE as MONITORING
from fluxplane.sdk import (
    DnsLabel,
    Namespace,
    NamespaceProps,
    Pack,
    PackContext,
    RawObject,
    ReleaseConfig,
    chart_release,
)

NAMESPACE = "kyverno"
#: Namespaces whose pods Kyverno does not check by default: Kubernetes' own, Flux's and Kyverno's, and
#: those of the catalogue's node agents, which need the host (fluent-bit reads the nodes' log files,
#: node-exporter reads /proc and /sys on the host network).
EXCLUDED_NAMESPACES = tuple(
    sorted({"flux-system", "kube-node-lease", "kube-public", "kube-system", NAMESPACE, LOGGING, MONITORING})
)


class KyvernoConfig(ReleaseConfig):
    release_namespace: ClassVar[str] = NAMESPACE

    level: Literal["baseline", "restricted"] = Field(
        "baseline", description="Pod Security Standards level the policy applies."
    )
    failure_action: Literal["Audit", "Enforce"] = Field(
        "Audit",
        alias="failureAction",
        description="Audit reports violations in PolicyReports; Enforce also refuses the pods.",
    )
    excluded_namespaces: list[DnsLabel] = Field(
        default_factory=lambda: list(EXCLUDED_NAMESPACES),
        alias="excludedNamespaces",
        description="Namespaces the policy does not check (add those of node agents that need host access).",
    )
    policy_kind: Literal["ClusterPolicy", "ValidatingPolicy"] = Field(
        "ClusterPolicy",
        alias="policyKind",
        description="How the policy is written: a ClusterPolicy with Kyverno's podSecurity rule (kyverno.io/v1, "
        "deprecated by Kyverno), or a ValidatingPolicy with one CEL check per control (policies.kyverno.io/v1). "
        "Switch with failureAction Audit first, and compare the reports.",
    )
    replicas: int = Field(
        3,
        ge=1,
        le=10,
        description="Admission controller replicas: 1, or 3 or more for high availability (Kyverno supports no 2).",
    )
    version: str = Field(versions.KYVERNO.version, description="Chart version.")
    values: dict[str, Any] = Field(default_factory=dict, description="Extra Helm values, merged last.")

    @field_validator("replicas")
    @classmethod
    def _not_two(cls, replicas: int) -> int:
        if replicas == 2:
            raise ValueError("expected 1, or 3 or more (Kyverno's minimum for high availability), got 2")
        return replicas

    @field_validator("excluded_namespaces")
    @classmethod
    def _unique(cls, namespaces: list[str]) -> list[str]:
        twice = repeated(namespaces)
        if twice:
            raise ValueError(f"namespaces must not repeat, got {', '.join(repr(name) for name in twice)} twice")
        return namespaces


def pod_security_policy(config: KyvernoConfig) -> dict[str, Any]:
    """The ClusterPolicy: one podSecurity rule over every Pod (Kyverno also applies it to their controllers)."""
    rule: dict[str, Any] = {"name": config.level, "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}}
    if config.excluded_namespaces:
        rule["exclude"] = {"any": [{"resources": {"namespaces": list(config.excluded_namespaces)}}]}
    rule["validate"] = {
        "failureAction": config.failure_action,
        "podSecurity": {"level": config.level, "version": "latest"},
    }
    return {
        "apiVersion": "kyverno.io/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": f"pod-security-{config.level}"},
        "spec": {"background": True, "rules": [rule]},
    }


def bind(ctx: PackContext, config: KyvernoConfig) -> None:
    Namespace(ctx.scope, "namespace", NamespaceProps(name=NAMESPACE))
    release = chart_release(
        ctx.scope,
        name="kyverno",
        chart=versions.KYVERNO,
        version=config.version,
        target_namespace=NAMESPACE,
        identity=config,
    )
    release.add_values({"admissionController": {"replicas": config.replicas}})
    release.add_values(config.values)
    policy = (
        pod_security_policy(config)
        if config.policy_kind == "ClusterPolicy"
        else validating_policy(config.level, config.failure_action, config.excluded_namespaces)
    )
    RawObject(ctx.scope, "pod-security", policy)
    ctx.add_health_check(release)


PACK = Pack(
    name="kyverno",
    version="1.0.0",
    description="Kyverno policy engine with the Pod Security Standards as a ClusterPolicy or a ValidatingPolicy",
    config=KyvernoConfig,
    layer="controllers",
    bind=bind,
    crd_groups=("kyverno.io", "policies.kyverno.io"),
    # the chart's crds and kyverno-api subcharts: policies, exceptions, cleanup; the policies.kyverno.io
    # policies; the reports Kyverno writes
    crds=("kyverno.io", "policies.kyverno.io", "reports.kyverno.io", "wgpolicyk8s.io"),
    namespaces=(NAMESPACE,),
)
