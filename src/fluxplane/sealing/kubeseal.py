"""Offline sealing for the Sealed Secrets controller (``bitnami.com/v1alpha1`` SealedSecret).

A value is sealed the way kubeseal seals it, from the controller's public certificate only:
``len(rsa) as 2 bytes big-endian || RSA-OAEP(SHA-256, session key, label) || AES-256-GCM(session key,
zero nonce, value)``. The 32-byte session key is random and used once, which is what makes the zero
nonce safe. The OAEP label binds the ciphertext to where it may be unsealed: ``namespace/name``
(strict), ``namespace`` (namespace-wide) or empty (cluster-wide, with the matching annotations).

Re-sealing a value that has not changed keeps its ciphertext, so a pull request shows only the
values that did change. Whether a value changed is decided on the sealer's machine, never from the
repository: the seal cache (outside the repository, readable only by its owner) keeps, per
ciphertext, an HMAC of the certificate, label, key and value under a random key that never leaves
the cache. Nothing derived from the plaintext is written to Git, so the repository offers no way to
test a guessed value; a sealer without the cache entry (another machine) simply seals anew.

The fleet's key pair itself is made here too (:func:`make_key_pair`), as the controller makes its own.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import json
import os
import re
import secrets
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.x509.oid import NameOID

from fluxplane.errors import FluxplaneError
from fluxplane.system.files import write_atomic

Scope = Literal["strict", "namespace-wide", "cluster-wide"]
SCOPES: tuple[Scope, ...] = ("strict", "namespace-wide", "cluster-wide")
NAMESPACE_WIDE = "sealedsecrets.bitnami.com/namespace-wide"
CLUSTER_WIDE = "sealedsecrets.bitnami.com/cluster-wide"
API_VERSION = "bitnami.com/v1alpha1"
SESSION_KEY_BYTES = 32
#: The weakest sealing key accepted. RSA-OAEP SHA-256 cannot even wrap the session key under 784 bits, and
#: anything under 2048 is too weak to guard a secret for as long as Git keeps it.
MIN_KEY_BITS = 2048
#: The key pair fluxplane makes, as the controller makes its own (sealed-secrets, pkg/crypto/keys.go): RSA-4096, in a
#: self-signed CA certificate named sealed-secret, valid for ten years (the controller's default key TTL).
KEY_BITS = 4096
KEY_COMMON_NAME = "sealed-secret"
KEY_VALIDITY = datetime.timedelta(days=3650)
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SECRET_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")


class SealError(FluxplaneError):
    """Bad input to ``fluxplane seal``: a certificate, a scope, a value source."""


@dataclass(frozen=True)
class Certificate:
    """The sealing key's public half, and what a sealer should be told about it."""

    public_key: rsa.RSAPublicKey
    fingerprint: str
    warnings: tuple[str, ...] = ()


def load_certificate(path: Path, *, now: datetime.datetime | None = None) -> Certificate:
    """Read a PEM certificate (or PEM public key) holding an RSA public key of at least MIN_KEY_BITS.

    A certificate not valid yet is refused: it is not the sealing key's current certificate, or this
    machine's clock is wrong. An expired one only warns, since the controller keeps unsealing with its key.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SealError(f"{path}: cannot read the certificate ({exc.strerror})") from None
    warnings: list[str] = []
    key: Any
    try:
        cert = x509.load_pem_x509_certificate(data)
    except ValueError:
        try:
            key = serialization.load_pem_public_key(data)
        except ValueError:
            raise SealError(
                f"{path}: not a PEM certificate or public key; fetch it with 'kubeseal --fetch-cert' "
                "or from the fleet's sealing key"
            ) from None
    else:
        key = cert.public_key()
        moment = now or datetime.datetime.now(datetime.UTC)
        if cert.not_valid_before_utc > moment:
            raise SealError(
                f"{path}: the certificate is not valid before {cert.not_valid_before_utc:%Y-%m-%d %H:%M} UTC; "
                "check this machine's clock, or fetch the sealing key's current certificate"
            )
        if cert.not_valid_after_utc < moment:
            warnings.append(
                f"{path}: warning: the certificate expired on {cert.not_valid_after_utc:%Y-%m-%d}; the controller "
                "still unseals with its key, but rotate the sealing key"
            )
    if not isinstance(key, rsa.RSAPublicKey):
        kind = type(key).__name__.removeprefix("_").removesuffix("PublicKey") or "unknown"
        raise SealError(f"{path}: the certificate's key is {kind}, not RSA; Sealed Secrets needs RSA")
    if key.key_size < MIN_KEY_BITS:
        raise SealError(
            f"{path}: the certificate's key is RSA-{key.key_size}, too weak to seal with; expected "
            f"RSA-{MIN_KEY_BITS} or stronger (the controller makes RSA-4096)"
        )
    return Certificate(key, fingerprint(key), tuple(warnings))


def fingerprint(key: rsa.RSAPublicKey) -> str:
    """A public key's SHA-256 fingerprint (of its DER SubjectPublicKeyInfo), as hex."""
    der = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(der).hexdigest()


@dataclass(frozen=True)
class KeyPair:
    """A sealing key pair: the certificate (PEM) that seals, the private key (PEM, PKCS #1 as the controller writes
    ``tls.key``) that unseals, and what a person should be told about them."""

    certificate: bytes
    private_key: bytes = field(repr=False)
    fingerprint: str
    not_after: datetime.datetime

    def secret_value(self) -> str:
        """The key pair as the fleet keeps it in Secrets Manager: JSON properties ``tls.crt`` and ``tls.key``, which
        each spoke's ExternalSecret turns into the controller's kubernetes.io/tls Secret."""
        return json.dumps({"tls.crt": self.certificate.decode(), "tls.key": self.private_key.decode()})


def make_key_pair(*, now: datetime.datetime | None = None, bits: int | None = None) -> KeyPair:
    """A new RSA key pair of ``bits`` (default KEY_BITS) and its self-signed certificate, valid from ``now``
    (default: this moment)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits or KEY_BITS)
    moment = now or datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, KEY_COMMON_NAME)])
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(moment)
        .not_valid_after(moment + KEY_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return KeyPair(
        certificate=certificate.public_bytes(serialization.Encoding.PEM),
        private_key=key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
        ),
        fingerprint=fingerprint(key.public_key()),
        not_after=certificate.not_valid_after_utc,
    )


def encryption_label(scope: Scope, namespace: str, name: str) -> bytes:
    """The RSA-OAEP label the controller expects for ``scope``."""
    if scope == "cluster-wide":
        return b""
    if scope == "namespace-wide":
        return namespace.encode()
    return f"{namespace}/{name}".encode()


def hybrid_encrypt(public_key: rsa.RSAPublicKey, plaintext: bytes, label: bytes) -> bytes:
    session_key = secrets.token_bytes(SESSION_KEY_BYTES)
    oaep = padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA256()), algorithm=hashes.SHA256(), label=label or None)
    wrapped = public_key.encrypt(session_key, oaep)
    sealed = AESGCM(session_key).encrypt(bytes(12), plaintext, None)
    return struct.pack(">H", len(wrapped)) + wrapped + sealed


class SealCache:
    """Remembers, on this machine only, which value each ciphertext seals (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._key: bytes | None = None
        self._digests: dict[str, str] | None = None

    @classmethod
    def default(cls) -> SealCache:
        configured = os.environ.get("FLUXPLANE_SEAL_CACHE")
        if configured:
            return cls(Path(configured))
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return cls(Path(base) / "fluxplane" / "seal")

    def _unusable(self, exc: OSError) -> SealError:
        return SealError(
            f"{self.directory}: cannot use the seal cache ({exc.strerror or exc}); set FLUXPLANE_SEAL_CACHE "
            "to a folder this user can write"
        )

    def _load(self) -> tuple[bytes, dict[str, str]]:
        if self._key is None or self._digests is None:
            key_file = self.directory / "key"
            digests_file = self.directory / "digests.json"
            try:
                if key_file.exists():
                    key = key_file.read_bytes()
                else:
                    self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
                    key = secrets.token_bytes(32)
                    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                    with os.fdopen(fd, "wb") as out:
                        out.write(key)
                raw = digests_file.read_bytes() if digests_file.exists() else b"{}"
            except OSError as exc:
                raise self._unusable(exc) from None
            try:
                digests = json.loads(raw)
            except ValueError:  # json.JSONDecodeError, or bytes that are not text
                digests = None
            if not isinstance(digests, dict) or not all(isinstance(value, str) for value in digests.values()):
                raise SealError(f"{digests_file}: not a seal cache; delete it (values are then sealed anew)")
            self._key, self._digests = key, digests
        return self._key, self._digests

    @staticmethod
    def _id(ciphertext: str) -> str:
        return hashlib.sha256(ciphertext.encode()).hexdigest()

    def _mac(self, certificate: Certificate, label: bytes, key: str, value: bytes) -> str:
        secret, _ = self._load()
        message = b"\0".join([certificate.fingerprint.encode(), label, key.encode(), value])
        return hmac.new(secret, message, hashlib.sha256).hexdigest()

    def seals(self, ciphertext: str, certificate: Certificate, label: bytes, key: str, value: bytes) -> bool:
        """True if ``ciphertext`` was made here from exactly this certificate, label, key and value."""
        _, digests = self._load()
        known = digests.get(self._id(ciphertext))
        return known is not None and hmac.compare_digest(known, self._mac(certificate, label, key, value))

    def remember(self, ciphertext: str, certificate: Certificate, label: bytes, key: str, value: bytes) -> None:
        _, digests = self._load()
        digests[self._id(ciphertext)] = self._mac(certificate, label, key, value)

    def save(self) -> None:
        if self._digests is None:
            return
        try:
            write_atomic(
                self.directory / "digests.json", json.dumps(self._digests, sort_keys=True).encode("utf-8"), mode=0o600
            )
        except OSError as exc:
            raise self._unusable(exc) from None


def check_names(name: str, namespace: str, scope: Scope) -> None:
    problems = []
    if not _DNS_SUBDOMAIN.fullmatch(name) or len(name) > 253:
        problems.append(f"--name: expected a DNS-1123 subdomain, got {name!r}")
    if not _DNS_LABEL.fullmatch(namespace) or len(namespace) > 63:
        problems.append(f"--namespace: expected a DNS-1123 label, got {namespace!r}")
    if scope not in SCOPES:
        problems.append(f"--scope: expected one of {', '.join(SCOPES)}, got {scope!r}")
    if problems:
        raise SealError(problems)


def check_key(key: str, where: str) -> None:
    if not _SECRET_KEY.fullmatch(key) or len(key) > 253:
        raise SealError(f"{where}: {key!r} is not a valid Secret key (letters, digits, '-', '_' and '.')")


def check_previous(previous: Any, where: str, scope: Scope) -> None:
    """An existing file is re-sealed only as what it is: a SealedSecret of the same scope."""
    if not isinstance(previous, dict) or previous.get("kind") != "SealedSecret":
        raise SealError(f"{where}: exists and is not a SealedSecret; move it away first")
    found = _scope_of((previous.get("metadata") or {}).get("annotations") or {})
    if found != scope:
        raise SealError(
            f"{where}: is sealed with scope {found!r}, not {scope!r}; a scope change re-seals every key, "
            "so delete the file first if that is what you want"
        )


def seal(
    *,
    certificate: Certificate,
    name: str,
    namespace: str,
    scope: Scope,
    values: Mapping[str, bytes],
    secret_type: str = "Opaque",
    previous: Mapping[str, Any] | None = None,
    cache: SealCache | None = None,
) -> dict[str, Any]:
    """A SealedSecret document holding ``values``; unchanged values keep ``previous``'s ciphertext."""
    check_names(name, namespace, scope)
    if not values:
        raise SealError("nothing to seal; give --from-literal, --from-file or --from-env-file")
    for key in values:
        check_key(key, "key")
    label = encryption_label(scope, namespace, name)
    previous_data: Mapping[str, str] = {}
    if previous is not None:
        meta = previous.get("metadata") or {}
        if (meta.get("namespace"), meta.get("name")) != (namespace, name):
            raise SealError(
                f"the existing SealedSecret is {meta.get('namespace')}/{meta.get('name')}, not {namespace}/{name}"
            )
        check_previous(previous, f"{namespace}/{name}", scope)
        previous_data = (previous.get("spec") or {}).get("encryptedData") or {}
    encrypted: dict[str, str] = {}
    for key in sorted(values):
        value = values[key]
        old = previous_data.get(key)
        if old is not None and cache is not None and cache.seals(old, certificate, label, key, value):
            encrypted[key] = old
            continue
        encrypted[key] = base64.b64encode(hybrid_encrypt(certificate.public_key, value, label)).decode()
        if cache is not None:
            cache.remember(encrypted[key], certificate, label, key, value)
    annotations = _annotations(scope)
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    template_metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations:
        metadata["annotations"] = dict(annotations)
        template_metadata["annotations"] = dict(annotations)
    return {
        "apiVersion": API_VERSION,
        "kind": "SealedSecret",
        "metadata": metadata,
        "spec": {"encryptedData": encrypted, "template": {"metadata": template_metadata, "type": secret_type}},
    }


def _annotations(scope: Scope) -> dict[str, str]:
    if scope == "cluster-wide":
        return {CLUSTER_WIDE: "true"}
    if scope == "namespace-wide":
        return {NAMESPACE_WIDE: "true"}
    return {}


def _scope_of(annotations: Mapping[str, str]) -> Scope:
    if annotations.get(CLUSTER_WIDE) == "true":
        return "cluster-wide"
    if annotations.get(NAMESPACE_WIDE) == "true":
        return "namespace-wide"
    return "strict"


# -- value sources, as kubectl create secret reads them ---------------------------------------------


def _malformed(where: str, sep: str, what: str) -> SealError:
    """A KEY=VALUE that is not one. It is not shown: a value without its key is still a value."""
    found = "an empty KEY" if sep else f"{what} without '='"
    return SealError(f"{where}: expected KEY=VALUE, got {found}")


def from_literal(item: str, position: int) -> tuple[str, bytes]:
    """The ``position``-th ``--from-literal`` (from 1), which problems name instead of showing the text."""
    where = f"--from-literal #{position}"
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise _malformed(where, sep, "an argument")
    check_key(key, where)
    return key, value.encode()


def from_file(item: str) -> tuple[str, bytes]:
    key, sep, path = item.partition("=")
    if not sep:
        key, path = Path(item).name, item
    check_key(key, "--from-file")
    try:
        return key, Path(path).read_bytes()
    except OSError as exc:
        raise SealError(f"--from-file: cannot read {path!r} ({exc.strerror})") from None


def from_env_file(path: str) -> list[tuple[str, bytes]]:
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise SealError(f"--from-env-file: cannot read {path!r} ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise SealError(f"--from-env-file: cannot read {path!r} (not UTF-8 text)") from None
    found = []
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not key:
            raise _malformed(f"{path}:{number}", sep, "a line")
        check_key(key, f"{path}:{number}")
        found.append((key, value.encode()))
    return found
