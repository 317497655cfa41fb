"""The Pod Security Standards as CEL: each control, run by a CEL engine on pods that meet it and pods that do not."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fluxplane.cli import main
from fluxplane.packs.kyverno.pod_security import BASELINE, RESTRICTED, VARIABLES, controls, validating_policy
from fluxplane.validate.cel import FLUX, compile_expression
from tests.conftest import MINIMAL_BASE, FleetWriter, load_documents
from tests.support.manifests import assert_valid_and_built

#: A pod that meets the restricted level (and so the baseline level).
GOOD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "app", "namespace": "shop", "annotations": {"team": "shop"}},
    "spec": {
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [
            {
                "name": "app",
                "image": "example/app:1",
                "ports": [{"containerPort": 8080}],
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]},
                },
            }
        ],
        "initContainers": [
            {
                "name": "init",
                "image": "example/init:1",
                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
            }
        ],
        "volumes": [{"name": "data", "emptyDir": {}}, {"name": "config", "configMap": {"name": "app"}}],
    },
}


def _run(expression: str, pod: dict[str, Any]) -> Any:
    """``expression`` evaluated on ``pod`` as Kyverno evaluates a validation: each ``variables.<name>`` is the
    variable's expression, over ``object``."""
    for variable in VARIABLES:
        expression = expression.replace(f"variables.{variable['name']}", f"({variable['expression']})")
    compiled = compile_expression(expression, FLUX)
    assert compiled.program is not None, compiled.error
    outcome = compiled.program.run({"object": pod})
    assert not outcome.error, (expression, outcome.error)
    return outcome.value


def _failing(pod: dict[str, Any], level: str = "restricted") -> list[str]:
    return [name for name, expression, _ in controls(level) if _run(expression, pod) is not True]  # type: ignore[arg-type]


def _with(path: str, value: Any) -> dict[str, Any]:
    """GOOD with ``value`` set at the dotted ``path`` (``spec.containers.0.securityContext.privileged``)."""
    pod = copy.deepcopy(GOOD)
    node: Any = pod
    parts = path.split(".")
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return pod


def test_a_pod_that_meets_the_standard_passes_every_control() -> None:
    assert _failing(GOOD) == []
    # a pod with no security settings at all meets the baseline level, and fails the restricted level's own
    bare = {"metadata": {"name": "x"}, "spec": {"containers": [{"name": "a", "image": "a"}]}}
    assert _failing(bare, "baseline") == []
    assert _failing(bare) == ["privilege-escalation", "run-as-non-root", "seccomp-profile", "drop-capabilities"]


@pytest.mark.parametrize(
    ("path", "value", "control"),
    [
        ("spec.hostNetwork", True, "host-namespaces"),
        ("spec.hostPID", True, "host-namespaces"),
        ("spec.securityContext.windowsOptions", {"hostProcess": True}, "host-process"),
        ("spec.initContainers.0.securityContext.privileged", True, "privileged"),
        ("spec.containers.0.securityContext.capabilities.add", ["NET_BIND_SERVICE", "SYS_ADMIN"], "capabilities"),
        ("spec.volumes.1", {"name": "host", "hostPath": {"path": "/var/log"}}, "host-path-volumes"),
        ("spec.containers.0.ports.0.hostPort", 8080, "host-ports"),
        ("spec.containers.0.securityContext.appArmorProfile", {"type": "Unconfined"}, "apparmor"),
        ("metadata.annotations", {"container.apparmor.security.beta.kubernetes.io/app": "unconfined"}, "apparmor"),
        ("spec.securityContext.seLinuxOptions", {"type": "spc_t"}, "selinux"),
        ("spec.containers.0.securityContext.seLinuxOptions", {"user": "system_u"}, "selinux"),
        ("spec.containers.0.securityContext.procMount", "Unmasked", "proc-mount"),
        ("spec.containers.0.securityContext.seccompProfile", {"type": "Unconfined"}, "seccomp"),
        ("spec.securityContext.sysctls", [{"name": "kernel.msgmax", "value": "65536"}], "sysctls"),
    ],
)
def test_each_baseline_control_refuses_what_it_forbids(path: str, value: Any, control: str) -> None:
    assert control in _failing(_with(path, value), "baseline")


@pytest.mark.parametrize(
    ("path", "value", "control"),
    [
        ("spec.volumes.0", {"name": "nfs", "nfs": {"server": "x", "path": "/"}}, "volume-types"),
        ("spec.initContainers.0.securityContext.allowPrivilegeEscalation", True, "privilege-escalation"),
        ("spec.containers.0.securityContext.runAsNonRoot", False, "run-as-non-root"),
        ("spec.containers.0.securityContext.runAsUser", 0, "run-as-user"),
        ("spec.securityContext.seccompProfile", {"type": "Unconfined"}, "seccomp-profile"),
        ("spec.initContainers.0.securityContext.capabilities", {"drop": ["NET_RAW"]}, "drop-capabilities"),
        ("spec.containers.0.securityContext.capabilities.add", ["CHOWN"], "drop-capabilities"),
    ],
)
def test_each_restricted_control_refuses_what_it_forbids(path: str, value: Any, control: str) -> None:
    pod = _with(path, value)
    assert control in _failing(pod)
    # what the restricted level forbids alone, the baseline level allows
    if control in {name for name, _, _ in RESTRICTED} and control not in ("seccomp-profile",):
        assert control not in _failing(pod, "baseline")


def test_values_the_baseline_level_allows_pass_it() -> None:
    allowed = [
        ("spec.containers.0.securityContext.capabilities.add", ["CHOWN", "KILL", "SYS_CHROOT"]),
        ("spec.securityContext.seLinuxOptions", {"type": "container_init_t", "level": "s0:c123,c456"}),
        ("spec.securityContext.sysctls", [{"name": "net.ipv4.tcp_keepalive_time", "value": "300"}]),
        ("metadata.annotations", {"container.apparmor.security.beta.kubernetes.io/app": "localhost/profile"}),
        ("spec.containers.0.securityContext.seccompProfile", {"type": "Localhost", "localhostProfile": "p.json"}),
        ("spec.containers.0.ports.0.hostPort", 0),
    ]
    for path, value in allowed:
        assert _failing(_with(path, value), "baseline") == [], path


def test_the_policy_is_one_validation_per_control_over_pods_outside_the_excluded_namespaces() -> None:
    policy = validating_policy("restricted", "Enforce", ["kube-system", "kyverno"])
    spec = policy["spec"]
    assert policy["apiVersion"] == "policies.kyverno.io/v1" and policy["metadata"]["name"] == "pod-security-restricted"
    assert spec["validationActions"] == ["Deny"]
    assert len(spec["validations"]) == len(BASELINE) + len(RESTRICTED)
    assert spec["matchConstraints"]["namespaceSelector"]["matchExpressions"] == [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", "kyverno"]}
    ]
    audit = validating_policy("baseline", "Audit", [])
    assert audit["spec"]["validationActions"] == ["Audit"]
    assert "namespaceSelector" not in audit["spec"]["matchConstraints"]
    assert len(audit["spec"]["validations"]) == len(BASELINE)


def test_the_kyverno_pack_writes_it_in_its_configs_and_it_validates(
    write_fleet: FleetWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the kyverno pack with the policy written as a ValidatingPolicy, enforced
    base = {
        **MINIMAL_BASE,
        "packs": {"kyverno": {"policyKind": "ValidatingPolicy", "level": "restricted", "failureAction": "Enforce"}},
    }
    root = write_fleet(base=base)
    assert main(["--root", str(root), "synth"]) == 0
    configs = root / "dist/platform/infrastructure/configs/kyverno-configs/base"
    (policy,) = [doc for doc in load_documents(configs / "kyverno-configs.yaml") if doc["kind"] == "ValidatingPolicy"]
    # THEN it is applied after Kyverno is Ready, with every control of the level, and no ClusterPolicy is written
    assert policy["spec"]["validationActions"] == ["Deny"]
    assert len(policy["spec"]["validations"]) == len(BASELINE) + len(RESTRICTED)
    assert "kind: ClusterPolicy\n" not in "".join(path.read_text() for path in (root / "dist").rglob("*.yaml"))
    # AND it passes the upstream CRD (policies.kyverno.io/v1) and builds
    assert_valid_and_built(root / "dist", [configs])
