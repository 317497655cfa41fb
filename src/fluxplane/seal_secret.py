"""Seal a Secret into the project: ``environments/secrets/<cluster>/<namespace>/<name>.yaml``, for one cluster.

:mod:`fluxplane.sealing` seals values with a certificate and knows nothing of a project; this module is
what ``fluxplane seal`` does with it in one: check the cluster against the fleet, read the certificate,
gather the values from their sources, re-seal the file that is there (its unchanged values keep their
ciphertext), and write the result as one transaction (:mod:`fluxplane.transaction`) or return it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fluxplane import sealing, transaction
from fluxplane.config.loader import load_fleet
from fluxplane.config.secrets import secret_path
from fluxplane.config.yamlfile import read_yaml
from fluxplane.core.codec import dump_documents

#: Where the sealing key's certificate is looked for, relative to the project.
DEFAULT_CERT = "environments/sealing-cert.pem"


@dataclass(frozen=True)
class SealRequest:
    """One Secret to seal: where it goes, where it may be unsealed, and its values' sources as given.

    The sources keep the command line's syntax (``KEY=VALUE``, ``[KEY=]PATH``, an env file's path), since the
    problems they raise name them that way.
    """

    cluster: str
    name: str
    namespace: str
    scope: sealing.Scope = "strict"
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


def seal_secret(root: Path, request: SealRequest, *, write: bool = True, warnings: list[str] | None = None) -> Sealed:
    """Seal ``request`` for the project under ``root`` and, with ``write``, write its file. SealError (bad input)
    for an unknown cluster, a bad certificate, name or value source, a key given twice, or a file that cannot be
    written; what the sealer should still know about the certificate (its expiry) is appended to ``warnings``,
    even when a later problem refuses the request."""
    fleet = load_fleet(root).fleet
    clusters = {fleet.management.name, *(cluster.name for cluster in fleet.clusters)}
    if request.cluster not in clusters:
        raise sealing.SealError(
            f"--cluster: unknown cluster {request.cluster!r} (clusters: {', '.join(sorted(clusters))})"
        )
    certificate = sealing.load_certificate(request.cert or root / DEFAULT_CERT)
    if warnings is not None:
        warnings.extend(certificate.warnings)
    values = _values(request)
    sealing.check_names(request.name, request.namespace, request.scope)
    target = secret_path(root, request.cluster, request.namespace, request.name)
    display = target.relative_to(root).as_posix()
    previous = read_yaml(target, str(target.relative_to(root))) if target.exists() else None
    if previous is not None:
        sealing.check_previous(previous, display, request.scope)
    cache = sealing.SealCache.default()
    document = sealing.seal(
        certificate=certificate,
        name=request.name,
        namespace=request.namespace,
        scope=request.scope,
        values=values,
        secret_type=request.secret_type,
        previous=previous,
        cache=cache,
    )
    text = dump_documents([document])
    cache.save()
    before = ((previous or {}).get("spec") or {}).get("encryptedData") or {}
    unchanged = sorted(key for key, value in document["spec"]["encryptedData"].items() if before.get(key) == value)
    if write:
        try:
            transaction.commit(root, {display: text})
        except OSError as exc:
            raise sealing.SealError(f"{display}: cannot write ({exc.strerror or exc}); nothing was written") from None
    return Sealed(
        path=display,
        text=text,
        sealed=sorted(set(values) - set(unchanged)),
        unchanged=unchanged,
        removed=sorted(set(before) - set(values)),
        written=write,
    )


def _values(request: SealRequest) -> dict[str, bytes]:
    """The values of every source, in the order given; a key given twice is refused."""
    items = [sealing.from_literal(item, position) for position, item in enumerate(request.literals, start=1)]
    items += [sealing.from_file(item) for item in request.files]
    items += [pair for path in request.env_files for pair in sealing.from_env_file(path)]
    values: dict[str, bytes] = {}
    for key, value in items:
        if key in values:
            raise sealing.SealError(f"key {key!r} is given twice")
        values[key] = value
    return values
