"""Keys and certificates for the sealing tests, the controller's decryption written independently of
fluxplane.sealing.kubeseal, so that a test can check what fluxplane sealed, and sealed secrets written into a
definition."""

from __future__ import annotations

import base64
import datetime
import hashlib
import struct
from pathlib import Path
from typing import Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.x509.oid import NameOID

NOW = datetime.datetime.now(datetime.UTC)
EXPIRED_ON = datetime.datetime(2020, 1, 2, 12, 0, tzinfo=datetime.UTC)
#: Where ``fluxplane seal`` looks for the certificate by default, relative to the project.
DEFAULT_CERT = "environments/sealing-cert.pem"


def make_rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def make_certificate(
    key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey,
    *,
    not_before: datetime.datetime | None = None,
    not_after: datetime.datetime | None = None,
    subject_key: rsa.RSAPublicKey | None = None,
) -> bytes:
    """A PEM certificate signed by ``key`` for ``subject_key`` (default: ``key``'s own, self-signed), valid
    from yesterday for a year unless told otherwise."""
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sealed-secret")])
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(subject_key or key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before or NOW - datetime.timedelta(days=1))
        .not_valid_after(not_after or NOW + datetime.timedelta(days=365))
        .sign(key, hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM)


def tiny_public_key() -> rsa.RSAPublicKey:
    """A 512-bit RSA public key: too small for RSA-OAEP SHA-256 to wrap a 32-byte session key.

    cryptography no longer generates keys under 1024 bits; a public key needs only a modulus of the size.
    """
    return rsa.RSAPublicNumbers(65537, (1 << 511) | 0xF00D | 1).public_key()


def fingerprint_of(key: rsa.RSAPrivateKey) -> str:
    der = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(der).hexdigest()


def hybrid_decrypt(private_key: rsa.RSAPrivateKey, ciphertext: bytes, label: bytes) -> bytes:
    """The controller's HybridDecrypt, written independently of fluxplane.sealing.kubeseal."""
    (rsa_length,) = struct.unpack(">H", ciphertext[:2])
    wrapped, sealed = ciphertext[2 : 2 + rsa_length], ciphertext[2 + rsa_length :]
    oaep = padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA256()), algorithm=hashes.SHA256(), label=label)
    session_key = private_key.decrypt(wrapped, oaep)
    return AESGCM(session_key).decrypt(bytes(12), sealed, None)


def unseal(private_key: rsa.RSAPrivateKey, document: dict[str, Any], label: bytes) -> dict[str, bytes]:
    """Every encryptedData value of ``document``, decrypted."""
    return {
        key: hybrid_decrypt(private_key, base64.b64decode(value), label)
        for key, value in document["spec"]["encryptedData"].items()
    }


def project_with_certificate(project: Path, key: rsa.RSAPrivateKey) -> Path:
    """``project`` with a certificate of ``key`` where ``fluxplane seal`` looks by default."""
    (project / DEFAULT_CERT).write_bytes(make_certificate(key))
    return project


#: A ciphertext of the shape the controller writes: a 2-byte length of the encrypted session key (256), the key, the
#: sealed value.
CIPHERTEXT = base64.b64encode(b"\x01\x00" + bytes(256) + bytes(24)).decode()


def sealed(name: str = "db", namespace: str = "apps", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "bitnami.com/v1alpha1",
        "kind": "SealedSecret",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "encryptedData": {"password": CIPHERTEXT},
            "template": {"metadata": {"name": name, "namespace": namespace}, "type": "Opaque"},
            **spec,
        },
    }


def put(root: Path, relative: str, data: Any) -> Path:
    """Write ``data`` (a string as-is, else as YAML) at environments/secrets/<relative>."""
    path = root / "environments" / "secrets" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return path
