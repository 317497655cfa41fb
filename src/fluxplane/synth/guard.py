"""The replacement guard: synth never replaces or moves live infrastructure unless asked to.

Before writing, synth compares what it would write with the tree it replaces (the committed dist/)
and refuses, one line each, these changes to an object that exists in both:

* **a replacement**: a field the API server, a CRD or the cloud API treats as immutable changes (a
  VPC or subnet CIDR, a cluster's region, a table's key schema; the table below). Flux's apply then
  fails, or the cloud resource is deleted and created anew. ``--replace PATTERN`` allows it.
* **a reinstallation**: a HelmRelease's release target changes (its release name, the namespace it installs
  into or the one Helm keeps its records in): helm-controller uninstalls the release, deleting what it
  installed (a spoke's Flux, with its CRDs and every object of theirs), then installs the new one.
  ``--replace PATTERN`` allows it.
* **a deletion** of a cloud resource that holds a cluster or data (an EKSCluster, an app's table, queue or
  bucket): Crossplane deletes it in AWS. Renaming a cluster or an app is such a deletion (and a new
  resource). ``--delete PATTERN`` allows it.
* **a move**: the Flux Kustomization that applies an object changes (the hub's objects whose deletion
  deletes something live carry it, fluxplane.config.hub.APPLIED_BY). When the old Kustomization stops
  applying the object it deletes it, before the new one adopts it, unless the old one is suspended
  first. ``--move PATTERN`` allows it, once the old Kustomization is suspended on the hub.
* **a Kubernetes version EKS refuses**: an EKSCluster's version going down, or up by more than one minor
  version, from the one in the old tree. The definition is checked against the versions recorded in
  environments/allocations.yaml; this check holds when that file says otherwise. No flag allows it.

A pattern is ``Kind/namespace/name`` (``Kind/name`` for cluster-scoped objects), with shell wildcards.

Only the files whose text changes are parsed, so a change to one cluster of a large fleet costs a
read of the old tree and a few parses. The old tree is state that arrives from elsewhere: it is read,
never trusted to be fluxplane's (an object without the annotation is placed by following the hub's
Flux paths), and symlinks in it are not followed.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Any

import yaml

from fluxplane.config.awsdata import upgrade_refusal
from fluxplane.config.hub import APPLIED_BY
from fluxplane.core.codec import parse_documents
from fluxplane.synth import writer

FieldPath = tuple[str, ...]

#: The annotation Crossplane keeps a managed resource's cloud name in.
EXTERNAL_NAME: FieldPath = ("metadata", "annotations", "crossplane.io/external-name")
PROVIDER_CONFIG_REF: FieldPath = ("spec", "providerConfigRef", "name")
PROVIDER_CONFIG_NAME: FieldPath = ("spec", "providerConfigName")
#: What an absent field means, for the fields whose absence is a value: the provider config ``default`` (the hub's
#: account), so that naming another account on an existing cluster is a change.
ABSENT: dict[FieldPath, str] = {PROVIDER_CONFIG_REF: "default", PROVIDER_CONFIG_NAME: "default"}

IMMUTABLE: dict[tuple[str, str], tuple[FieldPath, ...]] = {
    # Kubernetes: the API server refuses these updates, so Flux's apply fails until the object is recreated.
    ("apps", "Deployment"): (("spec", "selector"),),
    ("apps", "ReplicaSet"): (("spec", "selector"),),
    ("apps", "DaemonSet"): (("spec", "selector"),),
    ("apps", "StatefulSet"): (
        ("spec", "selector"),
        ("spec", "serviceName"),
        ("spec", "volumeClaimTemplates"),
        ("spec", "podManagementPolicy"),
    ),
    ("batch", "Job"): (("spec", "selector"), ("spec", "template"), ("spec", "completionMode")),
    ("", "Service"): (("spec", "clusterIP"), ("spec", "clusterIPs")),
    ("", "PersistentVolumeClaim"): (
        ("spec", "storageClassName"),
        ("spec", "accessModes"),
        ("spec", "volumeName"),
        ("spec", "selector"),
    ),
    ("storage.k8s.io", "StorageClass"): (
        ("provisioner",),
        ("parameters",),
        ("reclaimPolicy",),
        ("volumeBindingMode",),
    ),
    ("rbac.authorization.k8s.io", "RoleBinding"): (("roleRef",),),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): (("roleRef",),),
    # Crossplane: x-kubernetes-validations "self == oldSelf" in the upstream CRDs.
    ("apiextensions.crossplane.io", "CompositeResourceDefinition"): (
        ("spec", "group"),
        ("spec", "names"),
        ("spec", "scope"),
        ("spec", "claimNames"),
        ("spec", "enforcedCompositionRef"),
    ),
    ("apiextensions.crossplane.io", "Composition"): (("spec", "compositeTypeRef"),),
    # Karpenter: nodeClassRef's group and kind are immutable (CEL rules in karpenter.sh_nodepools).
    ("karpenter.sh", "NodePool"): (
        ("spec", "template", "spec", "nodeClassRef", "group"),
        ("spec", "template", "spec", "nodeClassRef", "kind"),
    ),
    # Upbound AWS managed resources. Their CRDs carry no immutability rules; these are the fields AWS
    # cannot update in place (Terraform's ForceNew): a change replaces the resource or fails.
    # The provider config names the AWS account: another one makes the resource anew there.
    ("*.aws.upbound.io", "*"): (("spec", "forProvider", "region"), EXTERNAL_NAME, PROVIDER_CONFIG_REF),
    ("*.aws.m.upbound.io", "*"): (("spec", "forProvider", "region"), EXTERNAL_NAME, PROVIDER_CONFIG_REF),
    ("ec2.aws*", "VPC"): (("spec", "forProvider", "cidrBlock"),),
    ("ec2.aws*", "Subnet"): (
        ("spec", "forProvider", "cidrBlock"),
        ("spec", "forProvider", "availabilityZone"),
        ("spec", "forProvider", "vpcId"),
    ),
    ("eks.aws*", "Cluster"): (("spec", "forProvider", "roleArn"),),
    ("eks.aws*", "NodeGroup"): (
        ("spec", "forProvider", "clusterName"),
        ("spec", "forProvider", "subnetIds"),
        ("spec", "forProvider", "instanceTypes"),
        ("spec", "forProvider", "capacityType"),
        ("spec", "forProvider", "diskSize"),
        ("spec", "forProvider", "amiType"),
        ("spec", "forProvider", "nodeRoleArn"),
    ),
    ("dynamodb.aws*", "Table"): (("spec", "forProvider", "hashKey"), ("spec", "forProvider", "rangeKey")),
    ("sqs.aws*", "Queue"): (("spec", "forProvider", "fifoQueue"),),
    ("rds.aws*", "Instance"): (
        ("spec", "forProvider", "engine"),
        ("spec", "forProvider", "dbName"),
        ("spec", "forProvider", "username"),
        ("spec", "forProvider", "storageEncrypted"),
    ),
    # fluxplane's composites: these fields feed the managed resources' immutable fields above.
    ("platform.fluxplane.io", "EKSCluster"): (
        ("spec", "region"),
        PROVIDER_CONFIG_NAME,
        ("spec", "network", "vpcCidr"),
        ("spec", "network", "zones"),
    ),
    ("platform.fluxplane.io", "AppTable"): (
        ("spec", "region"),
        PROVIDER_CONFIG_NAME,
        ("spec", "tableName"),
        ("spec", "hashKey"),
        ("spec", "rangeKey"),
    ),
    ("platform.fluxplane.io", "AppQueue"): (
        ("spec", "region"),
        PROVIDER_CONFIG_NAME,
        ("spec", "queueName"),
        ("spec", "fifo"),
    ),
    ("platform.fluxplane.io", "AppBucket"): (("spec", "region"), PROVIDER_CONFIG_NAME, ("spec", "bucketName")),
    ("platform.fluxplane.io", "AppDatabase"): (
        ("spec", "region"),
        PROVIDER_CONFIG_NAME,
        ("spec", "identifier"),
        ("spec", "clusterName"),
        ("spec", "engine"),
        ("spec", "databaseName"),
        ("spec", "username"),
    ),
    ("platform.fluxplane.io", "AppIdentity"): (("spec", "region"), PROVIDER_CONFIG_NAME, ("spec", "clusterName")),
    ("platform.fluxplane.io", "AddonIdentity"): (("spec", "region"), PROVIDER_CONFIG_NAME, ("spec", "clusterName")),
}
"""Fields the API server, a CRD's validation or the cloud API treat as immutable, by (API group, kind).

Group and kind may be glob patterns. Sources: Kubernetes API validation (workload selectors, Service
cluster IPs, PVC specs, StorageClass parameters, binding roleRefs); the CEL ``self == oldSelf`` rules
of the upstream Crossplane and Karpenter CRDs; for the Upbound AWS managed resources, whose
CRDs declare none, the fields AWS cannot change in place (region, external name,
VPC and subnet CIDR blocks, a subnet's availability zone, a node group's subnets and instance types);
and fluxplane's own composites, whose fields become those managed-resource fields.
"""

#: API groups whose objects stand for cloud resources: an immutable change replaces the resource.
CLOUD_GROUPS = ("platform.fluxplane.io", "*.aws.upbound.io", "*.aws.m.upbound.io")
#: What deleting an object of these kinds deletes in AWS (fluxplane's composites that hold a cluster or data).
DELETES = {
    ("platform.fluxplane.io", "EKSCluster"): "the EKS cluster, its node groups and its VPC",
    ("platform.fluxplane.io", "AppTable"): "the DynamoDB table and its data",
    ("platform.fluxplane.io", "AppQueue"): "the SQS queue and its messages",
    ("platform.fluxplane.io", "AppBucket"): "the S3 bucket and its objects",
    (
        "platform.fluxplane.io",
        "AppDatabase",
    ): "the RDS database, once its deletionProtection is off (RDS keeps a final snapshot)",
}

#: A HelmRelease: a change of its release target reinstalls the release (release_target).
HELM_RELEASE = ("helm.toolkit.fluxcd.io", "HelmRelease")
#: A workload cluster: EKS moves its Kubernetes version one minor version up at a time and never down.
EKS_CLUSTER = ("platform.fluxplane.io", "EKSCluster")

#: Kinds whose changes the guard looks at; a file holding none of them is not parsed.
_KINDS = frozenset({*(kind for _, kind in IMMUTABLE if kind != "*"), HELM_RELEASE[1]})
_TOP_KIND = re.compile(r"(?m)^kind: (\S+)$")
_AWS_API = re.compile(r"(?m)^apiVersion: \S+\.aws(\.m)?\.upbound\.io/")

Key = tuple[str, str, str, str]
"""An object's identity: (API group, kind, namespace, name)."""


def immutable_fields(group: str, kind: str) -> list[FieldPath]:
    """The immutable fields of objects of ``group`` and ``kind`` (the table's patterns matched)."""
    return [
        path
        for (group_pattern, kind_pattern), paths in IMMUTABLE.items()
        if fnmatch.fnmatchcase(group, group_pattern) and fnmatch.fnmatchcase(kind, kind_pattern)
        for path in paths
    ]


def field(document: Mapping[str, Any] | None, path: FieldPath) -> Any:
    """The value at ``path`` of ``document``, None when any part is missing."""
    node: Any = document
    for part in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


def applier(document: Mapping[str, Any]) -> str | None:
    """The Kustomization (``namespace/name``) the document says applies it."""
    value = field(document, ("metadata", "annotations", APPLIED_BY))
    return value if isinstance(value, str) else None


def key_of(document: Mapping[str, Any]) -> Key | None:
    api, kind = document.get("apiVersion"), document.get("kind")
    metadata = document.get("metadata")
    if not isinstance(api, str) or not isinstance(kind, str) or not isinstance(metadata, Mapping):
        return None
    group = api.rsplit("/", 1)[0] if "/" in api else ""
    return (group, kind, str(metadata.get("namespace") or ""), str(metadata.get("name") or ""))


def label(key: Key) -> str:
    """``Kind/namespace/name``, or ``Kind/name`` for a cluster-scoped object: what the patterns match."""
    _, kind, namespace, name = key
    return f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"


def allowed(key: Key, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(label(key), pattern) for pattern in patterns)


def immutable_change(before: Mapping[str, Any], after: Mapping[str, Any], path: FieldPath) -> tuple[Any, Any] | None:
    """The old and new value of the immutable field ``path`` when it changes; None when it keeps its value or had
    none (a field set for the first time replaces nothing, save those whose absence is a value, ABSENT)."""
    old, new = field(before, path), field(after, path)
    if path in ABSENT:
        old = ABSENT[path] if old is None else old
        new = ABSENT[path] if new is None else new
    if old is None or old == new:
        return None
    return old, new


def release_target(document: Mapping[str, Any]) -> tuple[str, str, str]:
    """A HelmRelease's release as helm-controller names it: (storage namespace, release namespace, release name).

    A change of any of them uninstalls the release before the new one is installed (helm-controller's
    ``ReleaseTargetChanged``); unset fields take their defaults: the HelmRelease's namespace, and
    ``[targetNamespace-]name``.
    """
    namespace = str(field(document, ("metadata", "namespace")) or "")
    target = field(document, ("spec", "targetNamespace"))
    name = field(document, ("spec", "releaseName")) or (
        f"{target}-{field(document, ('metadata', 'name'))}" if target else field(document, ("metadata", "name"))
    )
    return str(field(document, ("spec", "storageNamespace")) or namespace), str(target or namespace), str(name)


def version_step(old: Any, new: Any) -> str | None:
    """Why EKS refuses moving a cluster from Kubernetes ``old`` to ``new``, or None when it does not.

    The old tree is the truth here: the recorded versions in environments/allocations.yaml are only a file of the
    repository, and a version EKS refuses leaves the cluster where it is with its composite failing."""
    if not (isinstance(old, str) and isinstance(new, str)):
        return None
    try:
        how = upgrade_refusal(old, new)
    except (IndexError, ValueError):
        return None
    return None if how is None else f"spec.kubernetesVersion changes from {old} to {new}, which {how}"


def _change(old: Any, new: Any) -> str:
    """`` from A to B`` for scalar values; nothing for structures, which the diff of dist/ shows."""
    scalars = (str, int, float, bool)
    if isinstance(old, scalars) and (new is None or isinstance(new, scalars)):
        return f" from {old} to {new if new is not None else 'nothing'}"
    return ""


def _release_text(target: tuple[str, str, str]) -> str:
    storage, namespace, name = target
    return f"{name} in {namespace}" + (f" (stored in {storage})" if storage != namespace else "")


def _worth_parsing(text: str) -> bool:
    if APPLIED_BY in text or _AWS_API.search(text):
        return True
    return any(kind in _KINDS for kind in _TOP_KIND.findall(text))


def read_tree(outdir: Path) -> dict[str, bytes]:
    """The files of the tree at ``outdir`` by their path below it; symlinks are not followed."""
    return OldTree(outdir).read_all()


class OldTree:
    """The tree a write replaces: its files, read only where they may differ from what synth writes."""

    def __init__(self, outdir: Path) -> None:
        self.outdir = outdir
        self._stats: dict[str, tuple[int, int]] | None = None
        self._linked: dict[str, bool] = {}

    @property
    def exists(self) -> bool:
        return self.outdir.is_dir() and not self.outdir.is_symlink()

    @property
    def stats(self) -> dict[str, tuple[int, int]]:
        """Every regular file of the tree, by its path below it: (size, mtime_ns). Symlinks are left out."""
        if self._stats is None:
            self._stats = {}
            if self.exists:
                pending = [("", str(self.outdir))]
                while pending:
                    prefix, folder = pending.pop()
                    try:
                        entries = list(os.scandir(folder))
                    except OSError:
                        continue
                    for entry in entries:
                        path = prefix + entry.name
                        if entry.is_dir(follow_symlinks=False):
                            pending.append((path + "/", entry.path))
                        elif entry.is_file(follow_symlinks=False):
                            stat = entry.stat(follow_symlinks=False)
                            self._stats[path] = (stat.st_size, stat.st_mtime_ns)
        return self._stats

    def _stat(self, paths: Iterable[str]) -> dict[str, tuple[int, int]]:
        """(size, mtime_ns) of the regular files among ``paths``: a file is read only after ``_own`` says so."""
        found: dict[str, tuple[int, int]] = {}
        root = os.fspath(self.outdir) + "/"
        for path in paths:
            try:
                stat = os.stat(root + path)
            except OSError:
                continue
            if S_ISREG(stat.st_mode):
                found[path] = (stat.st_size, stat.st_mtime_ns)
        return found

    def _own(self, path: str) -> bool:
        """Whether ``path`` lies in the tree itself: no symlink on the way to it, the file included."""
        known = self._linked
        root = os.fspath(self.outdir)
        parts = path.split("/")
        for depth in range(1, len(parts) + 1):
            prefix = "/".join(parts[:depth])
            linked = known.get(prefix)
            if linked is None:
                linked = known[prefix] = os.path.islink(os.path.join(root, prefix))
            if linked:
                return False
        return True

    def read(self, path: str) -> bytes | None:
        if not self._own(path):
            return None
        try:
            with open(os.path.join(self.outdir, path), "rb") as handle:
                return handle.read()
        except OSError:
            return None

    def read_all(self) -> dict[str, bytes]:
        found = {path: self.read(path) for path in self.stats}
        return {path: data for path, data in found.items() if data is not None}

    def changed(self, files: Mapping[str, str]) -> dict[str, bytes | None]:
        """The paths whose content differs from ``files`` (new ones, changed ones, gone ones), with their old bytes.

        A file whose size and time match what the last write recorded for the same content (the
        writer's manifest, fluxplane.synth.writer.recorded) is not read; with such a record, only the
        files it lists and the new ones are looked at (a file added to dist/ by hand is not dist/'s).
        """
        if not self.exists:
            return {}
        recorded = writer.recorded(self.outdir)
        stats = self._stat(files.keys() | recorded.keys()) if recorded else self.stats
        found: dict[str, bytes | None] = {}
        writer.forget_text_digests()
        for path, text in files.items():
            stat = stats.get(path)
            entry = recorded.get(path)
            if stat is not None and entry is not None and entry[1:] == stat and entry[0] == writer.text_digest(text):
                continue
            data = text.encode("utf-8")
            old = self.read(path) if stat is not None else None
            if old != data:
                found[path] = old
        for path in stats.keys() - files.keys():
            found[path] = self.read(path)
        return found


@dataclass(frozen=True)
class _Found:
    path: str
    document: dict[str, Any]


def _objects(texts: Iterable[tuple[str, str]]) -> dict[Key, _Found]:
    found: dict[Key, _Found] = {}
    for path, text in texts:
        if not path.endswith(".yaml") or not _worth_parsing(text):
            continue
        try:
            documents = parse_documents(text)
        except yaml.YAMLError:  # a file the old tree holds that is not YAML guards nothing
            continue
        for document in documents:
            key = key_of(document)
            if key is not None:
                found.setdefault(key, _Found(path, document))
    return found


def _legacy_appliers(old: Mapping[str, bytes], hub: str) -> dict[Key, str]:
    """For a tree written before objects said who applies them: each hub object's Kustomization, found by
    following the hub's Flux paths the way kustomize builds them."""
    from fluxplane.core.tree import Fleet, LazyDocuments

    texts = {path: data.decode("utf-8", "replace") for path, data in old.items() if path.endswith(".yaml")}
    appliers: dict[Key, str] = {}
    try:
        for applier, placed in Fleet(LazyDocuments({}, texts)).applied(hub):
            key = key_of(placed.doc)
            if key is not None:
                appliers.setdefault(key, f"{applier.namespace}/{applier.key.name}")
    except (yaml.YAMLError, AttributeError, KeyError, TypeError, ValueError):  # an old tree that cannot be followed
        return {}
    return appliers


def guard(
    files: Mapping[str, str],
    outdir: Path,
    *,
    hub: str,
    replace: Sequence[str] = (),
    delete: Sequence[str] = (),
    move: Sequence[str] = (),
) -> list[str]:
    """The replacements, deletions and moves writing ``files`` over the tree at ``outdir`` would make, not allowed."""
    tree = OldTree(outdir)
    changed = tree.changed(files)
    if not changed:
        return []
    before = _objects(
        (path, data.decode("utf-8", "replace")) for path, data in sorted(changed.items()) if data is not None
    )
    after = _objects((path, files[path]) for path in sorted(changed) if path in files)
    problems: list[str] = []
    for key in sorted(before.keys() - after.keys()):
        deleted = DELETES.get(key[:2])
        if deleted is not None and not allowed(key, delete):
            problems.append(
                f"{before[key].path}: {key[1]} {key[2] + '/' if key[2] else ''}{key[3]}: removed, so Crossplane "
                f"deletes {deleted} in AWS (renaming is removing and adding); to do it on purpose, run synth with "
                f"--delete '{label(key)}'"
            )
    moves: dict[str, None] = {}
    legacy: dict[Key, str] | None = None
    for key in sorted(after.keys() & before.keys()):
        was, now = before[key], after[key]
        where = f"{now.path}: {key[1]} {key[2] + '/' if key[2] else ''}{key[3]}"
        if not allowed(key, replace):
            for path in immutable_fields(key[0], key[1]):
                values = immutable_change(was.document, now.document, path)
                if values is None:
                    continue
                old_value, new_value = values
                cloud = any(fnmatch.fnmatchcase(key[0], group) for group in CLOUD_GROUPS)
                if path in ABSENT:
                    effect = "makes the cloud resources anew in the other AWS account, leaving the old ones unmanaged"
                elif cloud:
                    effect = "replaces the cloud resource (deleted and made anew)"
                else:
                    effect = "is refused by the API server: the object has to be made anew"
                problems.append(
                    f"{where}: {'.'.join(path)} changes{_change(old_value, new_value)}, which "
                    f"{effect}; to do it on purpose, run synth with --replace '{label(key)}'"
                )
        if key[:2] == HELM_RELEASE and not allowed(key, replace):
            old_target, new_target = release_target(was.document), release_target(now.document)
            if old_target != new_target:
                problems.append(
                    f"{where}: the release changes from {_release_text(old_target)} to {_release_text(new_target)}, "
                    "so helm-controller uninstalls it, deleting what it installed, before it installs the new one; to "
                    f"do it on purpose, run synth with --replace '{label(key)}'"
                )
        if key[:2] == EKS_CLUSTER:
            refused = version_step(
                field(was.document, ("spec", "kubernetesVersion")), field(now.document, ("spec", "kubernetesVersion"))
            )
            if refused is not None:
                problems.append(
                    f"{where}: {refused}; set kubernetesVersion to the next minor version of the one in dist/ (the "
                    "versions recorded in environments/allocations.yaml disagree with it)"
                )
        new_applier = applier(now.document)
        if new_applier is None or allowed(key, move):
            continue
        old_applier = applier(was.document)
        if old_applier is None:
            if legacy is None:
                legacy = _legacy_appliers(tree.read_all(), hub)
            old_applier = legacy.get(key)
        if old_applier is None or old_applier == new_applier:
            continue
        namespace, name = old_applier.split("/", 1)
        moves[f"flux suspend kustomization {name} -n {namespace}"] = None
        problems.append(
            f"{where}: now applied by Kustomization {new_applier} instead of {old_applier}, which deletes it when it "
            f"stops applying it, before {new_applier} takes it over; suspend {old_applier} on the hub first, then run "
            f"synth with --move '{label(key)}'"
        )
    if moves:
        problems.append(
            f"to move them all: on the hub, {'; '.join(moves)}; then run synth with --move '*', merge, and resume "
            "those that remain once the objects are adopted"
        )
    return problems
