"""Seal a Secret into the project: ``environments/secrets/<cluster>/<namespace>/<name>.yaml``, for each cluster
it is for; and make the fleet's sealing key, whose certificate ``seal`` reads.

:mod:`fluxplane.sealing.kubeseal` seals values with a certificate and knows nothing of a project; this module is
what ``fluxplane seal`` does with it in one: find the clusters the request names (clusters, every cluster of
an environment, every cluster an app runs on) in the fleet, read the certificate, gather the values from
their sources, re-seal each file that is there (its unchanged values keep their ciphertext), and write the
results as one transaction (:mod:`fluxplane.system.transaction`: every file, or none) or return them.

``fluxplane sealing-key`` makes the key pair (:func:`make_sealing_key`): the certificate goes where ``seal``
looks, the private key never into the project.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fluxplane.config.accounts import fleet_accounts, profile, sealing_key_region
from fluxplane.config.loader import LoadedFleet, load_fleet
from fluxplane.config.secrets import secret_path
from fluxplane.config.yamlfile import read_yaml
from fluxplane.core.codec import dump_documents
from fluxplane.sealing import DEFAULT_CERT, kubeseal
from fluxplane.system import transaction


@dataclass(frozen=True)
class SealRequest:
    """One Secret to seal: the clusters it goes to, where it may be unsealed, and its values' sources as given.

    The clusters are ``clusters``, every cluster of ``environments`` and every cluster each of ``apps`` runs on,
    each once, in that order. The namespace is ``namespace``; for an app's clusters, the app's when it is None.
    The sources keep the command line's syntax (``KEY=VALUE``, ``[KEY=]PATH``, an env file's path), since the
    problems they raise name them that way.
    """

    name: str
    namespace: str | None = None
    clusters: Sequence[str] = ()
    environments: Sequence[str] = ()
    apps: Sequence[str] = ()
    scope: kubeseal.Scope = "strict"
    #: The certificate (None: DEFAULT_CERT in the project).
    cert: Path | None = None
    secret_type: str = "Opaque"
    literals: Sequence[str] = ()
    files: Sequence[str] = ()
    env_files: Sequence[str] = ()


@dataclass(frozen=True)
class Sealed:
    """A sealed Secret: its file (POSIX, below the project), the document's text, and which keys changed."""

    path: str
    text: str
    #: Keys sealed anew, keys whose ciphertext was kept, keys the file had and no longer has.
    sealed: list[str]
    unchanged: list[str]
    removed: list[str]
    #: Whether the file was written (False: only returned).
    written: bool


def seal_secrets(
    root: Path, request: SealRequest, *, write: bool = True, warnings: list[str] | None = None
) -> list[Sealed]:
    """Seal ``request`` for the project under ``root``, one file per cluster, and with ``write`` write them all, or
    none. SealError (bad input) for an unknown cluster, environment or app, a bad certificate, name or value source,
    a key given twice, or a file that cannot be written; what the sealer should still know about the certificate
    (its expiry) is appended to ``warnings``, even when a later problem refuses the request."""
    targets = _targets(load_fleet(root), request)
    certificate = kubeseal.load_certificate(_certificate_path(root, request.cert))
    if warnings is not None:
        warnings.extend(certificate.warnings)
    values = _values(request)
    for _, namespace in targets:
        kubeseal.check_names(request.name, namespace, request.scope)
    cache = kubeseal.SealCache.default()
    results = []
    for cluster, namespace in targets:
        target = secret_path(root, cluster, namespace, request.name)
        display = target.relative_to(root).as_posix()
        previous = read_yaml(target, str(target.relative_to(root))) if target.exists() else None
        if previous is not None:
            kubeseal.check_previous(previous, display, request.scope)
        document = kubeseal.seal(
            certificate=certificate,
            name=request.name,
            namespace=namespace,
            scope=request.scope,
            values=values,
            secret_type=request.secret_type,
            previous=previous,
            cache=cache,
        )
        before = ((previous or {}).get("spec") or {}).get("encryptedData") or {}
        unchanged = sorted(key for key, value in document["spec"]["encryptedData"].items() if before.get(key) == value)
        results.append(
            Sealed(
                path=display,
                text=dump_documents([document]),
                sealed=sorted(set(values) - set(unchanged)),
                unchanged=unchanged,
                removed=sorted(set(before) - set(values)),
                written=write,
            )
        )
    cache.save()
    if write:
        try:
            transaction.commit(root, {sealed.path: sealed.text for sealed in results})
        except OSError as exc:
            shown = results[0].path if len(results) == 1 else f"{len(results)} files of environments/secrets/"
            raise kubeseal.SealError(f"{shown}: cannot write ({exc.strerror or exc}); nothing was written") from None
    return results


def _targets(loaded: LoadedFleet, request: SealRequest) -> list[tuple[str, str]]:
    """(cluster, namespace) of each file the request makes, each once; SealError naming every unknown name."""
    fleet = loaded.fleet
    clusters = [fleet.management.name, *(cluster.name for cluster in fleet.clusters)]
    environments = {env.name: [cluster.name for cluster in env.clusters] for env in fleet.environments}
    apps: dict[str, list[tuple[str, str]]] = {}
    for placement in loaded.apps:
        apps.setdefault(placement.app.name, []).append((placement.cluster, placement.app.target_namespace))
    problems = []
    for name in request.clusters:
        if name not in clusters:
            problems.append(f"--cluster: unknown cluster {name!r} (clusters: {', '.join(sorted(clusters))})")
    for name in request.environments:
        if name not in environments:
            problems.append(f"--env: unknown environment {name!r} (environments: {', '.join(sorted(environments))})")
        elif not environments[name]:
            problems.append(f"--env: environment {name!r} has no clusters")
    for name in request.apps:
        if name not in apps:
            known = ", ".join(sorted(apps)) or "none"
            problems.append(f"--app: unknown app {name!r}, or one that runs on no cluster (apps: {known})")
    if not (request.clusters or request.environments or request.apps):
        problems.append("give the clusters to seal for: --cluster (repeatable), --env or --app")
    elif request.namespace is None and (request.clusters or request.environments):
        problems.append("--namespace: required with --cluster and --env (with --app alone, the app's namespace)")
    if problems:
        raise kubeseal.SealError(problems)
    found: dict[tuple[str, str], None] = {}
    for name in [*request.clusters, *(cluster for env in request.environments for cluster in environments[env])]:
        assert request.namespace is not None
        found[(name, request.namespace)] = None
    for name in request.apps:
        for cluster, namespace in apps[name]:
            found[(cluster, request.namespace or namespace)] = None
    return list(found)


def _certificate_path(root: Path, cert: Path | None) -> Path:
    """The certificate to seal with: ``cert``, else the project's; a project without one is told how to make it."""
    if cert is not None:
        return cert
    path = root / DEFAULT_CERT
    if not path.exists() and not path.is_symlink():
        raise kubeseal.SealError(
            f"{path}: no sealing certificate here, where seal looks unless --cert names one; make the fleet's key "
            "pair with 'fluxplane sealing-key' (or fetch a running controller's with 'kubeseal --fetch-cert')"
        )
    return path


def _values(request: SealRequest) -> dict[str, bytes]:
    """The values of every source, in the order given; a key given twice is refused."""
    items = [kubeseal.from_literal(item, position) for position, item in enumerate(request.literals, start=1)]
    items += [kubeseal.from_file(item) for item in request.files]
    items += [pair for path in request.env_files for pair in kubeseal.from_env_file(path)]
    values: dict[str, bytes] = {}
    for key, value in items:
        if key in values:
            raise kubeseal.SealError(f"key {key!r} is given twice")
        values[key] = value
    return values


# -- the fleet's sealing key ------------------------------------------------------------------------


@dataclass(frozen=True)
class NewSealingKey:
    """A new sealing key pair made for the project, and where its secret goes in AWS."""

    key_pair: kubeseal.KeyPair
    #: The certificate's file (POSIX, below the project), where seal reads it.
    certificate: str
    #: The private key's file, outside the project; None: only returned (the caller shows it once).
    private_key: Path | None
    #: Whether a certificate was there before, which the new one replaced.
    replaced: bool
    #: The Secrets Manager secret the spokes read the key pair from, and its region.
    secret_name: str
    region: str
    #: The AWS CLI profile of each account whose clusters read it (the hub's own when no cluster does).
    profiles: tuple[str, ...]


def make_sealing_key(
    root: Path, *, private_key_out: Path | None = None, force: bool = False, bits: int | None = None
) -> NewSealingKey:
    """Make the fleet's key pair: its certificate into ``environments/sealing-cert.pem``, its private key into
    ``private_key_out`` (a new file, readable by its owner only, outside the project) or only into the result.
    ``bits`` is the key's size (default kubeseal.KEY_BITS, as the controller makes its own).

    SealError (bad input) when a certificate is there and ``force`` is not given (a new key means sealing every
    secret again), when ``private_key_out`` lies inside the project or exists, or when a file cannot be written.
    """
    fleet = load_fleet(root).fleet
    certificate = root / DEFAULT_CERT
    replaced = certificate.exists() or certificate.is_symlink()
    if replaced and not force:
        raise kubeseal.SealError(
            f"{DEFAULT_CERT}: exists; a new sealing key means sealing every secret of environments/secrets/ again "
            "and giving every spoke the new key: pass --force to replace it"
        )
    problems = transaction.check_targets(root, [DEFAULT_CERT])
    if problems:
        raise kubeseal.SealError(problems)
    if private_key_out is not None:
        _check_private_key_out(root, private_key_out)
    key_pair = kubeseal.make_key_pair(bits=bits)
    if private_key_out is not None:
        try:
            descriptor = os.open(
                private_key_out, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
            )
            with os.fdopen(descriptor, "wb") as out:
                out.write(key_pair.private_key)
        except OSError as exc:
            raise kubeseal.SealError(
                f"--private-key-out: cannot write {str(private_key_out)!r} ({exc.strerror or exc}); nothing was written"
            ) from None
    try:
        transaction.commit(root, {DEFAULT_CERT: key_pair.certificate.decode()})
    except OSError as exc:
        if private_key_out is not None:
            private_key_out.unlink(missing_ok=True)
        raise kubeseal.SealError(f"{DEFAULT_CERT}: cannot write ({exc.strerror or exc}); nothing was written") from None
    accounts = [account for account in fleet_accounts(fleet) if account.holds_sealing_key] or fleet_accounts(fleet)[:1]
    return NewSealingKey(
        key_pair=key_pair,
        certificate=DEFAULT_CERT,
        private_key=private_key_out,
        replaced=replaced,
        secret_name=fleet.sealing_key.secret_name,
        region=sealing_key_region(fleet),
        profiles=tuple(profile(fleet, account) for account in accounts),
    )


def _check_private_key_out(root: Path, path: Path) -> None:
    """The private key goes to a new file outside the project, where no commit can pick it up."""
    project = root.resolve()
    if path.resolve().is_relative_to(project):
        raise kubeseal.SealError(
            f"--private-key-out: {str(path)!r} is inside the project ({project}), where a commit could take the "
            "private key; give a path outside it"
        )
    if path.exists() or path.is_symlink():
        raise kubeseal.SealError(f"--private-key-out: {str(path)!r} exists; a key file is never overwritten")
