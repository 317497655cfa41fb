"""The Pod Security Standards (the "latest" version) as a Kyverno ValidatingPolicy, one CEL check per control.

Kyverno deprecates ``kyverno.io/v1`` ClusterPolicy in favour of ``policies.kyverno.io/v1`` ValidatingPolicy,
whose checks are CEL expressions, as Kubernetes' own ValidatingAdmissionPolicy's are. Kyverno's ``podSecurity``
rule has no CEL counterpart, so each control of the standard is written here: the baseline level's
(host namespaces, HostProcess, privileged containers, capabilities, hostPath volumes, host ports, AppArmor,
SELinux, /proc mount, seccomp, sysctls) and, for restricted, also its own (volume types, privilege
escalation, running as non-root, a non-root user, a seccomp profile, dropped capabilities). Every check
reads the pod's containers, init containers and ephemeral containers (the variable ``containers``). Linux
pods are what they are written for: the Windows exemptions of the restricted level are not made.

Namespaces are left out with a namespace selector, so that Kyverno also applies the policy to the pods'
controllers (Deployments, Jobs, ...), which it does not when resources are excluded by rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

Level = Literal["baseline", "restricted"]

_BASELINE_CAPABILITIES = (
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
)
_SAFE_SYSCTLS = (
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
)
_SELINUX_TYPES = ("", "container_t", "container_init_t", "container_kvm_t", "container_engine_t")
_VOLUME_TYPES = (
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
)


def _list(items: Sequence[str]) -> str:
    return "[" + ", ".join(f"'{item}'" for item in items) + "]"


#: Every container of the pod: containers, init containers, ephemeral containers.
VARIABLES = (
    {
        "name": "containers",
        "expression": "object.spec.containers + object.spec.?initContainers.orValue([]) + "
        "object.spec.?ephemeralContainers.orValue([])",
    },
)

#: (control, CEL expression true for a pod that meets it, message) of the baseline level.
BASELINE: tuple[tuple[str, str, str], ...] = (
    (
        "host-namespaces",
        "!object.spec.?hostNetwork.orValue(false) && !object.spec.?hostPID.orValue(false) && "
        "!object.spec.?hostIPC.orValue(false)",
        "sharing the host's network, PID or IPC namespace is not allowed (hostNetwork, hostPID, hostIPC)",
    ),
    (
        "host-process",
        "!object.spec.?securityContext.?windowsOptions.?hostProcess.orValue(false) && "
        "variables.containers.all(c, !c.?securityContext.?windowsOptions.?hostProcess.orValue(false))",
        "Windows HostProcess containers are not allowed",
    ),
    (
        "privileged",
        "variables.containers.all(c, !c.?securityContext.?privileged.orValue(false))",
        "privileged containers are not allowed (securityContext.privileged)",
    ),
    (
        "capabilities",
        "variables.containers.all(c, c.?securityContext.?capabilities.?add.orValue([]).all(a, a in "
        f"{_list(_BASELINE_CAPABILITIES)}))",
        "adding capabilities beyond the baseline set is not allowed (securityContext.capabilities.add)",
    ),
    (
        "host-path-volumes",
        "object.spec.?volumes.orValue([]).all(v, !has(v.hostPath))",
        "hostPath volumes are not allowed",
    ),
    (
        "host-ports",
        "variables.containers.all(c, c.?ports.orValue([]).all(p, p.?hostPort.orValue(0) == 0))",
        "host ports are not allowed (ports[].hostPort)",
    ),
    (
        "apparmor",
        "object.spec.?securityContext.?appArmorProfile.?type.orValue('RuntimeDefault') in "
        "['RuntimeDefault', 'Localhost'] && variables.containers.all(c, "
        "c.?securityContext.?appArmorProfile.?type.orValue('RuntimeDefault') in ['RuntimeDefault', 'Localhost']) && "
        "object.metadata.?annotations.orValue({}).all(k, "
        "!k.startsWith('container.apparmor.security.beta.kubernetes.io/') || "
        "object.metadata.annotations[k] == 'runtime/default' || "
        "object.metadata.annotations[k].startsWith('localhost/'))",
        "an AppArmor profile other than RuntimeDefault or Localhost is not allowed",
    ),
    (
        "selinux",
        "([object.spec.?securityContext.?seLinuxOptions.orValue({})] + variables.containers.map(c, "
        "c.?securityContext.?seLinuxOptions.orValue({}))).all(o, o.?type.orValue('') in "
        f"{_list(_SELINUX_TYPES)} && !has(o.user) && !has(o.role))",
        "SELinux options other than a container type are not allowed (seLinuxOptions user, role, type)",
    ),
    (
        "proc-mount",
        "variables.containers.all(c, c.?securityContext.?procMount.orValue('Default') == 'Default')",
        "a procMount other than Default is not allowed",
    ),
    (
        "seccomp",
        "object.spec.?securityContext.?seccompProfile.?type.orValue('') != 'Unconfined' && "
        "variables.containers.all(c, c.?securityContext.?seccompProfile.?type.orValue('') != 'Unconfined')",
        "the Unconfined seccomp profile is not allowed",
    ),
    (
        "sysctls",
        f"object.spec.?securityContext.?sysctls.orValue([]).all(s, s.name in {_list(_SAFE_SYSCTLS)})",
        "sysctls outside the safe set are not allowed (securityContext.sysctls)",
    ),
)

#: What the restricted level adds.
RESTRICTED: tuple[tuple[str, str, str], ...] = (
    (
        "volume-types",
        "object.spec.?volumes.orValue([]).all(v, " + " || ".join(f"has(v.{kind})" for kind in _VOLUME_TYPES) + ")",
        "only configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected and secret "
        "volumes are allowed",
    ),
    (
        "privilege-escalation",
        "variables.containers.all(c, c.?securityContext.?allowPrivilegeEscalation.orValue(true) == false)",
        "securityContext.allowPrivilegeEscalation must be false in every container",
    ),
    (
        "run-as-non-root",
        "variables.containers.all(c, c.?securityContext.?runAsNonRoot.orValue("
        "object.spec.?securityContext.?runAsNonRoot.orValue(false)) == true)",
        "runAsNonRoot must be true, for the pod or every container",
    ),
    (
        "run-as-user",
        "object.spec.?securityContext.?runAsUser.orValue(1) != 0 && "
        "variables.containers.all(c, c.?securityContext.?runAsUser.orValue(1) != 0)",
        "running as user 0 (root) is not allowed (runAsUser)",
    ),
    (
        "seccomp-profile",
        "variables.containers.all(c, c.?securityContext.?seccompProfile.?type.orValue("
        "object.spec.?securityContext.?seccompProfile.?type.orValue('')) in ['RuntimeDefault', 'Localhost'])",
        "a seccomp profile of RuntimeDefault or Localhost must be set, for the pod or every container",
    ),
    (
        "drop-capabilities",
        "variables.containers.all(c, 'ALL' in c.?securityContext.?capabilities.?drop.orValue([]) && "
        "c.?securityContext.?capabilities.?add.orValue([]).all(a, a == 'NET_BIND_SERVICE'))",
        "every container must drop ALL capabilities, and may add only NET_BIND_SERVICE",
    ),
)


def controls(level: Level) -> tuple[tuple[str, str, str], ...]:
    """The controls of ``level``: baseline's, and for restricted also its own."""
    return BASELINE + (RESTRICTED if level == "restricted" else ())


def validating_policy(level: Level, failure_action: str, excluded_namespaces: Sequence[str]) -> dict[str, Any]:
    """The ValidatingPolicy ``pod-security-<level>``: every control of ``level`` over every Pod outside
    ``excluded_namespaces``; ``Audit`` records violations in reports, ``Enforce`` refuses the pods."""
    match: dict[str, Any] = {
        "resourceRules": [
            {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["pods"]}
        ]
    }
    if excluded_namespaces:
        match["namespaceSelector"] = {
            "matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": list(excluded_namespaces)}
            ]
        }
    return {
        "apiVersion": "policies.kyverno.io/v1",
        "kind": "ValidatingPolicy",
        "metadata": {"name": f"pod-security-{level}"},
        "spec": {
            "validationActions": ["Deny"] if failure_action == "Enforce" else ["Audit"],
            "evaluation": {"background": {"enabled": True}},
            "matchConstraints": match,
            "variables": [dict(variable) for variable in VARIABLES],
            "validations": [
                {"expression": expression, "message": message} for _, expression, message in controls(level)
            ],
        },
    }
