"""Every construct's output, fully populated, validates against the upstream schemas.

One call of ../shared/tools/validate-manifests over one directory (each call costs about half a
second). Flux kinds are checked against the CRDs in ../shared/crds, core kinds through the
kubernetes-validate package, kustomization.yaml against kustomize's own schema.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from fluxplane.constructs import (
    ClusterRole,
    ClusterRoleBinding,
    ConfigMap,
    GitRepository,
    HelmRelease,
    HelmRepository,
    Kustomization,
    KustomizationFile,
    Manifest,
    Namespace,
    OCIRepository,
    Patch,
    PatchSelector,
    Role,
    RoleBinding,
    Root,
    ServiceAccount,
    conditions_health,
)
from fluxplane.constructs.helm_release import DEFAULT_DRIFT_DETECTION, DEFAULT_INSTALL, DEFAULT_UPGRADE
from fluxplane.constructs.raw import RawObject
from fluxplane.core.codec import dump_documents
from tests.conftest import CRDS
from tests.conftest import VALIDATE_MANIFESTS as VALIDATE

RESULT = re.compile(r"^(?P<file>[^\s:]+):(?P<index>\d+) (?P<kind>[^/\s]+)/(?P<name>\S+): (?P<message>.*)$")


def build_every_kind(root: Root) -> tuple[Manifest, KustomizationFile]:
    """One of each construct, with as many fields set as the props allow."""
    manifest = Manifest(root, "all", path="all.yaml")
    Namespace(manifest, "ns", {"name": "apps", "labels": {"env": "prod"}, "annotations": {"a.io/b": "c"}})
    GitRepository(
        manifest,
        "git",
        {
            "name": "fleet",
            "url": "ssh://git@github.com/org/fleet.git",
            "ref": {"branch": "main", "commit": "0123abc"},
            "secretRef": {"name": "deploy-key"},
            "timeout": "60s",
            "provider": "github",
            "ignore": "/*\n!/clusters\n",
        },
    )
    OCIRepository(
        manifest,
        "oci",
        {
            "name": "podinfo",
            "url": "oci://ghcr.io/stefanprodan/charts/podinfo",
            "ref": {"semver": ">=6.0.0", "semverFilter": ".*"},
            "layerSelector": {
                "mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
                "operation": "copy",
            },
            "provider": "aws",
            "secretRef": {"name": "ghcr"},
            "timeout": "60s",
        },
    )
    HelmRepository(
        manifest,
        "helm-https",
        {
            "name": "podinfo",
            "url": "https://stefanprodan.github.io/podinfo",
            "type": "default",
            "provider": "generic",
            "secretRef": {"name": "auth"},
            "timeout": "60s",
        },
    )
    HelmRepository(
        manifest,
        "helm-oci",
        {"name": "bitnami", "url": "oci://registry-1.docker.io/bitnamicharts", "type": "oci"},
    )
    release = HelmRelease(
        manifest,
        "chart",
        {
            "name": "podinfo",
            "namespace": "apps",
            "labels": {"team": "web"},
            "chart": {
                "spec": {
                    "chart": "podinfo",
                    "version": "6.x",
                    "sourceRef": {"kind": "HelmRepository", "name": "podinfo", "namespace": "flux-system"},
                    "interval": "1h",
                    "reconcileStrategy": "ChartVersion",
                    "valuesFiles": ["values.yaml"],
                }
            },
            "releaseName": "podinfo",
            "targetNamespace": "apps",
            "storageNamespace": "apps",
            "kubeConfig": {"secretRef": {"name": "kubeconfig", "key": "value"}},
            "serviceAccountName": "helm",
            "timeout": "5m",
            "install": {
                "crds": "CreateReplace",
                "createNamespace": True,
                "remediation": {"retries": 3, "remediateLastFailure": True, "ignoreTestFailures": True},
                "strategy": {"name": "RemediateOnFailure"},
                "timeout": "10m",
            },
            "upgrade": {
                "crds": "Skip",
                "cleanupOnFail": True,
                "remediation": {"retries": 1, "strategy": "uninstall", "ignoreTestFailures": False},
                "strategy": {"name": "RetryOnFailure", "retryInterval": "2m"},
                "timeout": "10m",
            },
            "test": {
                "enable": True,
                "filters": [{"name": "smoke", "exclude": False}],
                "ignoreFailures": True,
                "timeout": "3m",
            },
            "driftDetection": {
                "mode": "warn",
                "ignore": [
                    {
                        "paths": ["/spec/replicas"],
                        "target": {
                            "group": "apps",
                            "version": "v1",
                            "kind": "Deployment",
                            "name": "podinfo",
                            "namespace": "apps",
                            "labelSelector": "app=podinfo",
                            "annotationSelector": "a.io/b=c",
                        },
                    }
                ],
            },
            "valuesFrom": [
                {
                    "kind": "ConfigMap",
                    "name": "values",
                    "valuesKey": "values.yaml",
                    "targetPath": "a.b",
                    "optional": True,
                }
            ],
            "values": {"replicaCount": 2, "ingress": {"enabled": True}},
        },
    )
    release.depends_on("cert-manager")
    release.add_values({"ingress": {"hosts": ["podinfo.example.com"]}})
    by_ref = HelmRelease(
        manifest,
        "chart-ref",
        {
            "name": "podinfo-oci",
            "chartRef": {"kind": "OCIRepository", "name": "podinfo", "namespace": "flux-system"},
            "install": DEFAULT_INSTALL,
            "upgrade": DEFAULT_UPGRADE,
            "driftDetection": DEFAULT_DRIFT_DETECTION,
        },
    )
    by_ref.depends_on(release)
    infra = Kustomization(
        manifest,
        "infra",
        {
            "name": "infra",
            "namespace": "platform",
            "path": "./infra",
            "sourceRef": {"kind": "GitRepository", "name": "fleet"},
        },
    )
    apps = Kustomization(
        manifest,
        "apps",
        {
            "name": "apps",
            "labels": {"tier": "apps"},
            "interval": "10m",
            "retryInterval": "1m",
            "timeout": "5m",
            "path": "./apps",
            "sourceRef": {"kind": "OCIRepository", "name": "fleet", "namespace": "flux-system"},
            "prune": True,
            "wait": False,
            "force": False,
            "postBuild": {
                "substitute": {"cluster": "hub"},
                "substituteFrom": [{"kind": "ConfigMap", "name": "vars", "optional": True}],
            },
            "patches": [{"patch": "- op: remove\n  path: /spec/replicas\n", "target": {"kind": "Deployment"}}],
            "components": ["../components/ha"],
            "kubeConfig": {"configMapRef": {"name": "hub"}},
            "serviceAccountName": "kustomize",
            "targetNamespace": "apps",
            "deletionPolicy": "MirrorPrune",
        },
    )
    apps.depends_on(infra)
    apps.depends_on("crds", ready_expr="dep.status.ready == true")
    apps.add_health_check(release)
    apps.add_health_check_expr(
        conditions_health("pkg.crossplane.io/v1", "Provider", ("Installed", "Healthy"), failed="Healthy")
    )
    ConfigMap(
        manifest,
        "cm",
        {"name": "vars", "namespace": "flux-system", "labels": {"a": "b"}, "data": {"cluster": "hub"}},
    )
    ServiceAccount(
        manifest,
        "sa",
        {
            "name": "podinfo",
            "namespace": "apps",
            "annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/podinfo"},
            "automountServiceAccountToken": False,
        },
    )
    rule = {"apiGroups": [""], "resources": ["pods"], "resourceNames": ["web"], "verbs": ["get"]}
    Role(manifest, "role", {"name": "reader", "namespace": "apps", "labels": {"a": "b"}, "rules": [rule]})
    ClusterRole(
        manifest,
        "cluster-role",
        {"name": "health", "rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]},
    )
    subjects = [
        {"kind": "ServiceAccount", "name": "podinfo", "namespace": "apps"},
        {"kind": "User", "name": "jane@example.com", "apiGroup": "rbac.authorization.k8s.io"},
    ]
    RoleBinding(
        manifest,
        "role-binding",
        {
            "name": "reader",
            "namespace": "apps",
            "roleRef": {"kind": "Role", "name": "reader"},
            "subjects": subjects,
        },
    )
    ClusterRoleBinding(
        manifest,
        "cluster-role-binding",
        {"name": "health", "roleRef": {"kind": "ClusterRole", "name": "health"}, "subjects": subjects},
    )
    kustomization = KustomizationFile(
        root, "kustomization", directory="", props={"namespace": "apps", "resources": ["all.yaml"]}
    )
    kustomization.config.add_patch(
        Patch(
            patch="- op: add\n  path: /metadata/labels/x\n  value: y\n",
            target=PatchSelector(kind="ConfigMap"),
        )
    )
    return manifest, kustomization


@pytest.mark.slow
def test_every_kind_validates_against_the_upstream_schemas(tmp_path: Path) -> None:
    if not CRDS.is_dir():
        pytest.skip(f"upstream CRDs not available at {CRDS}")
    if not VALIDATE.is_file():
        pytest.skip(f"validate-manifests not available at {VALIDATE}")

    # GIVEN one fully populated construct of every kind, plus a directory kustomization.yaml, written out,
    # and a control document the validator must reject (so a validator that checks nothing fails this test)
    root = Root()
    manifest, kustomization = build_every_kind(root)
    control = Manifest(root, "control", path="control.yaml")
    RawObject(
        control,
        "bad",
        {
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "metadata": {"name": "control", "namespace": "flux-system"},
            "spec": {"interval": "10m", "prune": "yes", "sourceRef": {"kind": "GitRepository", "name": "x"}},
        },
    )
    for written in (manifest, kustomization, control):
        (tmp_path / written.path).write_text(dump_documents(written.documents()))

    # WHEN the directory is validated once
    result = subprocess.run(
        [sys.executable, str(VALIDATE), "-v", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )

    # THEN every constructed document is valid (none skipped for lack of a schema) and the control is not
    verdicts: dict[tuple[str, str, str], list[str]] = {}
    for line in result.stdout.splitlines():
        match = RESULT.match(line)
        if match:
            key = (Path(match["file"]).name, match["kind"], match["name"])
            verdicts.setdefault(key, []).append(match["message"])
    expected = {("all.yaml", doc["kind"], doc["metadata"]["name"]) for doc in manifest.documents()}
    assert len(expected) == len(manifest.documents()) == 15
    problems = {key: messages for key, messages in verdicts.items() if key[0] == "all.yaml" and messages != ["valid"]}
    assert problems == {}, result.stdout + result.stderr
    assert expected <= set(verdicts), result.stdout + result.stderr
    assert verdicts[("kustomization.yaml", "Kustomization", "kustomization.yaml")] == ["valid"], result.stdout
    control_messages = verdicts[("control.yaml", "Kustomization", "control")]
    assert any("spec.prune" in message for message in control_messages), result.stdout
    assert "0 skipped" in result.stdout, result.stdout
