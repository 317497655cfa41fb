"""Tests for fluxplane.sealing.kubeseal: offline sealing that the Sealed Secrets controller can unseal.

The ciphertext is checked against an independent implementation of the controller's decryption
(bitnami-labs/sealed-secrets pkg/crypto/crypto.go HybridDecrypt): a 2-byte big-endian length of the
RSA part, RSA-OAEP(SHA-256, MGF1-SHA-256, label) of a 32-byte session key, then AES-256-GCM of the
value under that key with a zero nonce and no associated data.
"""

from __future__ import annotations

import base64
import datetime
import errno
import os
import re
import stat
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

from fluxplane.errors import FluxplaneError
from fluxplane.sealing.kubeseal import (
    CLUSTER_WIDE,
    NAMESPACE_WIDE,
    Certificate,
    SealCache,
    SealError,
    check_key,
    check_names,
    check_previous,
    encryption_label,
    from_env_file,
    from_file,
    from_literal,
    load_certificate,
    seal,
)
from tests.support.sealing import (
    EXPIRED_ON,
    NOW,
    fingerprint_of,
    hybrid_decrypt,
    make_certificate,
    make_rsa_key,
    tiny_public_key,
    unseal,
)

KEY_HELP = "is not a valid Secret key (letters, digits, '-', '_' and '.')"


@dataclass(frozen=True)
class Keys:
    key: rsa.RSAPrivateKey
    cert: Path
    other_key: rsa.RSAPrivateKey
    other_cert: Path
    public_key_pem: Path
    expired: Path
    ec_cert: Path
    garbage: Path


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    folder = tmp_path_factory.mktemp("keys")
    key, other_key = make_rsa_key(), make_rsa_key()
    files = {
        "cert.pem": make_certificate(key),
        "other.pem": make_certificate(other_key),
        "public.pem": key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ),
        "expired.pem": make_certificate(key, not_before=EXPIRED_ON - datetime.timedelta(days=30), not_after=EXPIRED_ON),
        "ec.pem": make_certificate(ec.generate_private_key(ec.SECP256R1())),
        "garbage.pem": b"-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n",
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return Keys(
        key=key,
        cert=folder / "cert.pem",
        other_key=other_key,
        other_cert=folder / "other.pem",
        public_key_pem=folder / "public.pem",
        expired=folder / "expired.pem",
        ec_cert=folder / "ec.pem",
        garbage=folder / "garbage.pem",
    )


@pytest.fixture(scope="module")
def certificate(keys: Keys) -> Certificate:
    return load_certificate(keys.cert)


VALUES = {"password": b"hunter2-very-secret-value", "user": b"admin", "blob": bytes(range(256))}


# -- the ciphertext the controller unseals -----------------------------------------------------------


@pytest.mark.parametrize(
    ("scope", "label", "annotations"),
    [
        ("strict", b"apps/db", None),
        ("namespace-wide", b"apps", {NAMESPACE_WIDE: "true"}),
        ("cluster-wide", b"", {CLUSTER_WIDE: "true"}),
    ],
)
def test_each_scope_unseals_with_its_label_and_carries_its_annotations(
    keys: Keys, certificate: Certificate, scope: Any, label: bytes, annotations: dict[str, str] | None
) -> None:
    # GIVEN three values, one of them binary
    # WHEN sealed for apps/db with the scope
    document = seal(
        certificate=certificate,
        name="db",
        namespace="apps",
        scope=scope,
        values=VALUES,
        secret_type="kubernetes.io/tls",
    )

    # THEN every value decrypts, with the controller's algorithm and the scope's label, to the original bytes
    assert encryption_label(scope, "apps", "db") == label
    assert unseal(keys.key, document, label) == VALUES
    # AND the object is what the controller expects: the scope's annotation on both metadata (none for strict)
    metadata: dict[str, Any] = {"name": "db", "namespace": "apps"}
    if annotations is not None:
        metadata["annotations"] = annotations
    assert {**document, "spec": {**document["spec"], "encryptedData": None}} == {
        "apiVersion": "bitnami.com/v1alpha1",
        "kind": "SealedSecret",
        "metadata": metadata,
        "spec": {"encryptedData": None, "template": {"metadata": metadata, "type": "kubernetes.io/tls"}},
    }
    assert list(document["spec"]["encryptedData"]) == ["blob", "password", "user"]


def test_the_type_defaults_to_opaque(certificate: Certificate) -> None:
    document = seal(certificate=certificate, name="db", namespace="apps", scope="strict", values={"a": b"1"})
    assert document["spec"]["template"]["type"] == "Opaque"


def test_ciphertext_layout_is_length_rsa_part_and_aes_gcm(keys: Keys, certificate: Certificate) -> None:
    # GIVEN a value sealed strictly
    document = seal(certificate=certificate, name="db", namespace="apps", scope="strict", values={"a": b"12345"})
    raw = base64.b64decode(document["spec"]["encryptedData"]["a"])

    # THEN the RSA part is one 2048-bit block wrapping a 32-byte session key, and the rest is the value plus a GCM tag
    (rsa_length,) = struct.unpack(">H", raw[:2])
    assert rsa_length == 256
    oaep = padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA256()), algorithm=hashes.SHA256(), label=b"apps/db")
    session_key = keys.key.decrypt(raw[2:258], oaep)
    assert len(session_key) == 32
    assert len(raw) == 2 + 256 + 5 + 16


def test_a_public_key_pem_seals_like_its_certificate(keys: Keys, certificate: Certificate) -> None:
    # GIVEN the controller's public key as a bare PEM public key
    loaded = load_certificate(keys.public_key_pem)
    # THEN it has the certificate's fingerprint and seals values the private key unseals
    assert loaded.fingerprint == certificate.fingerprint
    document = seal(certificate=loaded, name="db", namespace="apps", scope="strict", values={"a": b"x"})
    assert unseal(keys.key, document, b"apps/db") == {"a": b"x"}


@pytest.mark.parametrize(
    ("scope", "wrong_label"),
    [
        ("strict", b"apps/other"),
        ("strict", b"other/db"),
        ("strict", b"apps"),
        ("namespace-wide", b"other"),
        ("namespace-wide", b"apps/db"),
        ("cluster-wide", b"apps"),
    ],
)
def test_a_wrong_label_does_not_unseal(keys: Keys, certificate: Certificate, scope: Any, wrong_label: bytes) -> None:
    # GIVEN a value sealed for apps/db in the scope
    document = seal(certificate=certificate, name="db", namespace="apps", scope=scope, values={"a": b"secret"})
    ciphertext = base64.b64decode(document["spec"]["encryptedData"]["a"])
    # WHEN the controller tries another name or namespace THEN decryption fails
    with pytest.raises(ValueError, match="Decryption failed"):
        hybrid_decrypt(keys.key, ciphertext, wrong_label)


def test_tampered_ciphertext_or_another_key_does_not_unseal(keys: Keys, certificate: Certificate) -> None:
    # GIVEN a sealed value that unseals as it is
    document = seal(certificate=certificate, name="db", namespace="apps", scope="strict", values={"a": b"secret"})
    ciphertext = base64.b64decode(document["spec"]["encryptedData"]["a"])
    assert hybrid_decrypt(keys.key, ciphertext, b"apps/db") == b"secret"

    # WHEN one byte of the AES-GCM part is flipped THEN the tag does not verify
    aes_flipped = bytearray(ciphertext)
    aes_flipped[-3] ^= 0x01
    with pytest.raises(InvalidTag):
        hybrid_decrypt(keys.key, bytes(aes_flipped), b"apps/db")
    # WHEN one byte of the RSA part is flipped THEN OAEP decryption fails
    rsa_flipped = bytearray(ciphertext)
    rsa_flipped[100] ^= 0x01
    with pytest.raises(ValueError, match="Decryption failed"):
        hybrid_decrypt(keys.key, bytes(rsa_flipped), b"apps/db")
    # WHEN another controller's private key is used THEN decryption fails
    with pytest.raises(ValueError, match="Decryption failed"):
        hybrid_decrypt(keys.other_key, ciphertext, b"apps/db")


# -- randomness and the seal cache -------------------------------------------------------------------


def _sealed(document: dict[str, Any]) -> dict[str, str]:
    return dict(document["spec"]["encryptedData"])


def test_sealing_twice_without_a_cache_gives_new_ciphertext(keys: Keys, certificate: Certificate) -> None:
    # GIVEN one value sealed twice, the second time with the first document as previous but no cache
    first = seal(certificate=certificate, name="db", namespace="apps", scope="strict", values={"a": b"same"})
    second = seal(certificate=certificate, name="db", namespace="apps", scope="strict", values={"a": b"same"})
    third = seal(
        certificate=certificate, name="db", namespace="apps", scope="strict", values={"a": b"same"}, previous=first
    )
    # THEN every ciphertext differs (a fresh session key each time) and each unseals to the value
    assert len({_sealed(first)["a"], _sealed(second)["a"], _sealed(third)["a"]}) == 3
    for document in (first, second, third):
        assert unseal(keys.key, document, b"apps/db") == {"a": b"same"}


def test_the_cache_keeps_unchanged_ciphertext_and_reseals_changed_values(
    keys: Keys, certificate: Certificate, tmp_path: Path
) -> None:
    # GIVEN a document sealed with a cache
    cache = SealCache(tmp_path / "cache")
    first = seal(
        certificate=certificate,
        name="db",
        namespace="apps",
        scope="strict",
        values={"user": b"admin", "password": b"old"},
        cache=cache,
    )

    # WHEN re-sealed with one value changed and one added
    second = seal(
        certificate=certificate,
        name="db",
        namespace="apps",
        scope="strict",
        values={"user": b"admin", "password": b"new", "extra": b"x"},
        previous=first,
        cache=cache,
    )

    # THEN the unchanged value keeps its ciphertext byte for byte, the others are sealed anew
    assert _sealed(second)["user"] == _sealed(first)["user"]
    assert _sealed(second)["password"] != _sealed(first)["password"]
    assert unseal(keys.key, second, b"apps/db") == {"extra": b"x", "password": b"new", "user": b"admin"}


def test_the_cache_survives_a_new_run_through_its_files(certificate: Certificate, tmp_path: Path) -> None:
    # GIVEN a document sealed with a cache that was saved
    cache = SealCache(tmp_path / "cache")
    first = seal(certificate=certificate, name="db", namespace="apps", scope="strict", values={"a": b"1"}, cache=cache)
    cache.save()
    # WHEN a later run reads the same cache folder
    again = seal(
        certificate=certificate,
        name="db",
        namespace="apps",
        scope="strict",
        values={"a": b"1"},
        previous=first,
        cache=SealCache(tmp_path / "cache"),
    )
    # THEN the ciphertext is kept
    assert _sealed(again) == _sealed(first)


def test_an_unsaved_cache_is_forgotten_by_the_next_run(certificate: Certificate, tmp_path: Path) -> None:
    # GIVEN a cache whose digests were never saved
    cache = SealCache(tmp_path / "cache")
    first = seal(certificate=certificate, name="db", namespace="apps", scope="strict", values={"a": b"1"}, cache=cache)
    # WHEN the next run reads the folder THEN it cannot vouch for the ciphertext and seals anew
    again = seal(
        certificate=certificate,
        name="db",
        namespace="apps",
        scope="strict",
        values={"a": b"1"},
        previous=first,
        cache=SealCache(tmp_path / "cache"),
    )
    assert _sealed(again)["a"] != _sealed(first)["a"]


def test_another_machine_or_another_certificate_reseals(keys: Keys, certificate: Certificate, tmp_path: Path) -> None:
    # GIVEN a document sealed with this machine's cache
    cache = SealCache(tmp_path / "here")
    values = {"a": b"1", "b": b"2"}
    first = seal(certificate=certificate, name="db", namespace="apps", scope="strict", values=values, cache=cache)

    # WHEN another machine (a fresh cache folder) seals the same values over it
    elsewhere = seal(
        certificate=certificate,
        name="db",
        namespace="apps",
        scope="strict",
        values=values,
        previous=first,
        cache=SealCache(tmp_path / "there"),
    )
    # THEN every value is sealed anew
    assert set(_sealed(elsewhere).values()).isdisjoint(_sealed(first).values())

    # WHEN this machine seals for another certificate (a rotated sealing key)
    rotated = seal(
        certificate=load_certificate(keys.other_cert),
        name="db",
        namespace="apps",
        scope="strict",
        values=values,
        previous=first,
        cache=cache,
    )
    # THEN every value is sealed anew, for the new key only
    assert set(_sealed(rotated).values()).isdisjoint(_sealed(first).values())
    assert unseal(keys.other_key, rotated, b"apps/db") == values
    with pytest.raises(ValueError, match="Decryption failed"):
        unseal(keys.key, rotated, b"apps/db")


def test_a_ciphertext_moved_to_another_key_is_not_reused(certificate: Certificate, tmp_path: Path) -> None:
    # GIVEN key a sealed with a cache, and a previous document where b carries a's ciphertext
    cache = SealCache(tmp_path / "cache")
    first = seal(certificate=certificate, name="db", namespace="apps", scope="strict", values={"a": b"1"}, cache=cache)
    moved = {**first, "spec": {**first["spec"], "encryptedData": {"b": _sealed(first)["a"]}}}
    # WHEN b is sealed with the same value THEN it gets its own ciphertext
    again = seal(
        certificate=certificate,
        name="db",
        namespace="apps",
        scope="strict",
        values={"b": b"1"},
        previous=moved,
        cache=cache,
    )
    assert _sealed(again)["b"] != _sealed(first)["a"]


def test_the_cache_files_are_private_and_hold_nothing_of_the_plaintext(
    certificate: Certificate, tmp_path: Path
) -> None:
    # GIVEN a value sealed with a new cache folder, saved
    plaintext = b"hunter2-very-secret-value"
    cache = SealCache(tmp_path / "cache")
    seal(certificate=certificate, name="db", namespace="apps", scope="strict", values={"pw": plaintext}, cache=cache)
    cache.save()

    # THEN the folder holds the key and the digests, readable by the owner only
    folder = tmp_path / "cache"
    assert sorted(path.name for path in folder.iterdir()) == ["digests.json", "key"]
    assert stat.S_IMODE(os.stat(folder / "key").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(folder / "digests.json").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(folder).st_mode) & 0o077 == 0
    assert len((folder / "key").read_bytes()) == 32
    # AND no cache file contains the value, in clear or base64
    for path in folder.iterdir():
        content = path.read_bytes()
        assert plaintext not in content
        assert base64.b64encode(plaintext) not in content
        assert plaintext.hex().encode() not in content


def test_a_cache_folder_that_cannot_be_made_is_one_line(certificate: Certificate, tmp_path: Path) -> None:
    # GIVEN a cache folder configured below a file
    (tmp_path / "file").write_text("x")
    cache = SealCache(tmp_path / "file" / "cache")
    # WHEN a value is sealed with it THEN the cache folder is named, with what to do
    with pytest.raises(SealError) as caught:
        seal(certificate=certificate, name="db", namespace="apps", scope="strict", values={"a": b"1"}, cache=cache)
    assert caught.value.problems == (
        f"{tmp_path / 'file' / 'cache'}: cannot use the seal cache (Not a directory); set FLUXPLANE_SEAL_CACHE "
        "to a folder this user can write",
    )


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"a": 1}'], ids=["invalid", "list", "not-text"])
def test_a_damaged_cache_is_one_line(certificate: Certificate, tmp_path: Path, content: str) -> None:
    # GIVEN a cache whose digests file is damaged
    cache = SealCache(tmp_path / "cache")
    seal(certificate=certificate, name="db", namespace="apps", scope="strict", values={"a": b"1"}, cache=cache)
    cache.save()
    (tmp_path / "cache" / "digests.json").write_text(content)
    # WHEN the next run reads it THEN the file is named, with what to do
    with pytest.raises(SealError) as caught:
        seal(
            certificate=certificate,
            name="db",
            namespace="apps",
            scope="strict",
            values={"a": b"1"},
            cache=SealCache(tmp_path / "cache"),
        )
    assert caught.value.problems == (
        f"{tmp_path / 'cache' / 'digests.json'}: not a seal cache; delete it (values are then sealed anew)",
    )


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS], ids=["full", "read-only"])
def test_a_cache_that_cannot_be_saved_is_one_line_and_leaves_no_temporary_file(
    certificate: Certificate, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    # GIVEN a cache with a new entry, on a file system that is full or read-only by the time it is saved
    cache = SealCache(tmp_path / "cache")
    seal(certificate=certificate, name="db", namespace="apps", scope="strict", values={"a": b"1"}, cache=cache)

    def refuse(source: Any, target: Any) -> None:
        raise OSError(code, os.strerror(code), str(target))

    monkeypatch.setattr(os, "replace", refuse)
    # WHEN saved THEN one line names the cache folder, and the folder holds only what it held
    with pytest.raises(SealError) as caught:
        cache.save()
    assert caught.value.problems == (
        f"{tmp_path / 'cache'}: cannot use the seal cache ({os.strerror(code)}); set FLUXPLANE_SEAL_CACHE "
        "to a folder this user can write",
    )
    assert sorted(path.name for path in (tmp_path / "cache").iterdir()) == ["key"]


def test_default_cache_folder_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FLUXPLANE_SEAL_CACHE", str(tmp_path / "explicit"))
    assert SealCache.default().directory == tmp_path / "explicit"
    monkeypatch.delenv("FLUXPLANE_SEAL_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert SealCache.default().directory == tmp_path / "xdg" / "fluxplane" / "seal"


# -- the certificate ---------------------------------------------------------------------------------


def test_an_rsa_certificate_loads_with_its_fingerprint(keys: Keys) -> None:
    loaded = load_certificate(keys.cert)
    assert loaded.fingerprint == fingerprint_of(keys.key)
    assert loaded.fingerprint != fingerprint_of(keys.other_key)
    assert loaded.warnings == ()
    assert loaded.public_key.public_numbers() == keys.key.public_key().public_numbers()


def test_an_expired_certificate_loads_with_a_warning(keys: Keys) -> None:
    # GIVEN a certificate that expired on 2020-01-02 WHEN loaded
    loaded = load_certificate(keys.expired)
    # THEN it still seals, with one warning line saying so
    assert loaded.fingerprint == fingerprint_of(keys.key)
    assert loaded.warnings == (
        f"{keys.expired}: warning: the certificate expired on 2020-01-02; the controller still unseals with its "
        "key, but rotate the sealing key",
    )


def test_expiry_is_judged_at_the_given_moment(keys: Keys) -> None:
    assert load_certificate(keys.expired, now=EXPIRED_ON - datetime.timedelta(days=1)).warnings == ()
    later = load_certificate(keys.cert, now=NOW + datetime.timedelta(days=400))
    assert len(later.warnings) == 1
    assert "expired" in later.warnings[0]


def test_a_certificate_not_valid_yet_is_refused(keys: Keys, tmp_path: Path) -> None:
    # GIVEN a certificate whose validity starts in 2099
    path = tmp_path / "future.pem"
    start = datetime.datetime(2099, 1, 2, 12, 30, tzinfo=datetime.UTC)
    path.write_bytes(make_certificate(keys.key, not_before=start, not_after=start.replace(year=2100)))
    # WHEN loaded now THEN it is refused, saying from when it is valid
    with pytest.raises(SealError) as caught:
        load_certificate(path)
    assert caught.value.problems == (
        f"{path}: the certificate is not valid before 2099-01-02 12:30 UTC; check this machine's clock, or fetch "
        "the sealing key's current certificate",
    )
    # AND from that moment on it loads
    assert load_certificate(path, now=start).fingerprint == fingerprint_of(keys.key)


@pytest.mark.parametrize("bits", [1024, 2047, 512], ids=["1024", "2047", "512-too-small-for-oaep"])
def test_an_rsa_key_weaker_than_2048_bits_is_refused(keys: Keys, tmp_path: Path, bits: int) -> None:
    # GIVEN a certificate, and the bare public key, of an RSA key under 2048 bits
    weak = tiny_public_key() if bits == 512 else rsa.generate_private_key(65537, bits).public_key()
    cert = tmp_path / "weak.pem"
    cert.write_bytes(make_certificate(keys.key, subject_key=weak))
    bare = tmp_path / "weak-public.pem"
    bare.write_bytes(weak.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    # WHEN loaded THEN each is refused, saying what is allowed
    for path in (cert, bare):
        with pytest.raises(SealError) as caught:
            load_certificate(path)
        assert caught.value.problems == (
            f"{path}: the certificate's key is RSA-{bits}, too weak to seal with; expected RSA-2048 or stronger "
            "(the controller makes RSA-4096)",
        )


def test_an_ec_certificate_is_refused(keys: Keys) -> None:
    with pytest.raises(SealError, match="needs RSA") as caught:
        load_certificate(keys.ec_cert)
    assert caught.value.problems == (f"{keys.ec_cert}: the certificate's key is EC, not RSA; Sealed Secrets needs RSA",)


def test_a_file_that_is_no_certificate_is_refused(keys: Keys) -> None:
    with pytest.raises(SealError, match="not a PEM certificate") as caught:
        load_certificate(keys.garbage)
    assert caught.value.problems == (
        f"{keys.garbage}: not a PEM certificate or public key; fetch it with 'kubeseal --fetch-cert' or from the "
        "fleet's sealing key",
    )


def test_a_missing_certificate_is_refused(tmp_path: Path) -> None:
    missing = tmp_path / "nope.pem"
    with pytest.raises(SealError, match="cannot read the certificate") as caught:
        load_certificate(missing)
    assert caught.value.problems == (f"{missing}: cannot read the certificate (No such file or directory)",)
    assert isinstance(caught.value, FluxplaneError)


# -- names, scopes and the previous document ---------------------------------------------------------


def test_previous_of_another_scope_is_refused(certificate: Certificate) -> None:
    # GIVEN a namespace-wide document
    previous = seal(certificate=certificate, name="db", namespace="apps", scope="namespace-wide", values={"a": b"1"})
    # WHEN re-sealed strictly THEN the scope change is refused
    with pytest.raises(SealError, match="scope") as caught:
        seal(
            certificate=certificate, name="db", namespace="apps", scope="strict", values={"a": b"1"}, previous=previous
        )
    assert caught.value.problems == (
        "apps/db: is sealed with scope 'namespace-wide', not 'strict'; a scope change re-seals every key, "
        "so delete the file first if that is what you want",
    )


@pytest.mark.parametrize(
    ("annotations", "scope"),
    [
        ({}, "strict"),
        ({NAMESPACE_WIDE: "true"}, "namespace-wide"),
        ({CLUSTER_WIDE: "true"}, "cluster-wide"),
        ({CLUSTER_WIDE: "true", NAMESPACE_WIDE: "true"}, "cluster-wide"),
        ({NAMESPACE_WIDE: "false"}, "strict"),
    ],
)
def test_check_previous_reads_the_scope_from_the_annotations(annotations: dict[str, str], scope: Any) -> None:
    previous = {"kind": "SealedSecret", "metadata": {"name": "db", "namespace": "apps", "annotations": annotations}}
    check_previous(previous, "here.yaml", scope)
    other = "namespace-wide" if scope != "namespace-wide" else "strict"
    with pytest.raises(SealError, match=rf"^here\.yaml: is sealed with scope '{scope}', not '{other}'; "):
        check_previous(previous, "here.yaml", other)


@pytest.mark.parametrize("previous", [{"kind": "Secret"}, ["a"], None, "text"], ids=["secret", "list", "null", "str"])
def test_check_previous_refuses_what_is_not_a_sealed_secret(previous: Any) -> None:
    with pytest.raises(SealError, match=r"^x\.yaml: exists and is not a SealedSecret; move it away first$"):
        check_previous(previous, "x.yaml", "strict")


@pytest.mark.parametrize(("name", "namespace", "found"), [("other", "apps", "apps/other"), ("db", "other", "other/db")])
def test_previous_of_another_object_is_refused(certificate: Certificate, name: str, namespace: str, found: str) -> None:
    previous = seal(certificate=certificate, name=name, namespace=namespace, scope="strict", values={"a": b"1"})
    with pytest.raises(SealError, match=rf"^the existing SealedSecret is {found}, not apps/db$"):
        seal(
            certificate=certificate, name="db", namespace="apps", scope="strict", values={"a": b"1"}, previous=previous
        )


def test_check_names_reports_every_bad_name_at_once() -> None:
    with pytest.raises(SealError) as caught:
        check_names("Bad_Name", "apps.team", "global")  # type: ignore[arg-type]
    assert caught.value.problems == (
        "--name: expected a DNS-1123 subdomain, got 'Bad_Name'",
        "--namespace: expected a DNS-1123 label, got 'apps.team'",
        "--scope: expected one of strict, namespace-wide, cluster-wide, got 'global'",
    )


@pytest.mark.parametrize(
    ("name", "namespace", "problem"),
    [
        ("a" * 254, "apps", "--name: expected a DNS-1123 subdomain"),
        ("-db", "apps", "--name: expected a DNS-1123 subdomain"),
        ("db", "a" * 64, "--namespace: expected a DNS-1123 label"),
        ("db", "", "--namespace: expected a DNS-1123 label"),
    ],
)
def test_check_names_limits(name: str, namespace: str, problem: str) -> None:
    with pytest.raises(SealError, match=f"^{problem}"):
        check_names(name, namespace, "strict")


def test_check_names_accepts_names_at_their_limits() -> None:
    check_names("a" * 63 + ".b" * 95, "a" * 63, "cluster-wide")


def test_seal_checks_names_values_and_keys(certificate: Certificate) -> None:
    with pytest.raises(SealError, match=r"^--name: expected a DNS-1123 subdomain, got 'DB'$"):
        seal(certificate=certificate, name="DB", namespace="apps", scope="strict", values={"a": b"1"})
    with pytest.raises(SealError, match=r"^nothing to seal; give --from-literal, --from-file or --from-env-file$"):
        seal(certificate=certificate, name="db", namespace="apps", scope="strict", values={})
    with pytest.raises(SealError, match=r"^key: 'a/b' is not a valid Secret key"):
        seal(certificate=certificate, name="db", namespace="apps", scope="strict", values={"a/b": b"1"})


# -- value sources -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("user=admin", ("user", b"admin")),
        ("token=a=b==", ("token", b"a=b==")),
        ("empty=", ("empty", b"")),
        ("tls.crt=x", ("tls.crt", b"x")),
        ("name=gr\u00fc\u00dfe", ("name", "gr\u00fc\u00dfe".encode())),
    ],
)
def test_from_literal(item: str, expected: tuple[str, bytes]) -> None:
    assert from_literal(item, 1) == expected


@pytest.mark.parametrize(
    ("item", "got"),
    [("hunter2-secret", "an argument without '='"), ("=hunter2-secret", "an empty KEY")],
    ids=["no-equals", "no-key"],
)
def test_from_literal_needs_key_and_value_and_never_shows_the_argument(item: str, got: str) -> None:
    # GIVEN the third --from-literal, malformed WHEN read THEN its position is named, not its text
    with pytest.raises(SealError) as caught:
        from_literal(item, 3)
    assert caught.value.problems == (f"--from-literal #3: expected KEY=VALUE, got {got}",)
    assert "hunter2" not in str(caught.value)


def test_from_literal_refuses_an_invalid_key() -> None:
    expected = f"--from-literal #1: 'my key' {KEY_HELP}"
    with pytest.raises(SealError, match=f"^{re.escape(expected)}$"):
        from_literal("my key=1", 1)


def test_from_file_with_and_without_a_key(tmp_path: Path) -> None:
    # GIVEN a binary file
    path = tmp_path / "id_ed25519"
    path.write_bytes(b"\x00\xffkey\n")
    # THEN without key= the file name is the key, with key= the given key; the bytes are kept as they are
    assert from_file(str(path)) == ("id_ed25519", b"\x00\xffkey\n")
    assert from_file(f"identity={path}") == ("identity", b"\x00\xffkey\n")


def test_from_file_problems(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(SealError, match=r"cannot read") as caught:
        from_file(f"k={missing}")
    assert caught.value.problems == (f"--from-file: cannot read '{missing}' (No such file or directory)",)
    with pytest.raises(SealError, match=r"^--from-file: 'bad key' is not a valid Secret key"):
        from_file(f"bad key={missing}")
    spaced = tmp_path / "my file"
    spaced.write_text("x")
    with pytest.raises(SealError, match=r"^--from-file: 'my file' is not a valid Secret key"):
        from_file(str(spaced))


def test_from_env_file_skips_comments_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "app.env"
    path.write_text("# database\n\nUSER=admin\n   \n  # indented comment\n  PASSWORD=a=b\nEMPTY=\nSPACED= x \n")
    assert from_env_file(str(path)) == [
        ("USER", b"admin"),
        ("PASSWORD", b"a=b"),
        ("EMPTY", b""),
        ("SPACED", b" x "),
    ]


def test_from_env_file_names_the_bad_line_and_never_shows_it(tmp_path: Path) -> None:
    # GIVEN an env file whose fourth line is a value without its key
    path = tmp_path / "app.env"
    path.write_text("# c\nA=1\n\nhunter2-secret\n")
    # WHEN read THEN the file and line are named, and what a line must be, not the line
    with pytest.raises(SealError) as caught:
        from_env_file(str(path))
    assert caught.value.problems == (f"{path}:4: expected KEY=VALUE, got a line without '='",)

    path.write_text("A=1\nbad key=2\n")
    with pytest.raises(SealError) as caught:
        from_env_file(str(path))
    assert caught.value.problems == (f"{path}:2: 'bad key' {KEY_HELP}",)

    path.write_text("=hunter2-secret\n")
    with pytest.raises(SealError) as caught:
        from_env_file(str(path))
    assert caught.value.problems == (f"{path}:1: expected KEY=VALUE, got an empty KEY",)


def test_from_env_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "app.env"
    path.write_bytes(b"A=1\nB=\xff\xfe\n")
    with pytest.raises(SealError) as caught:
        from_env_file(str(path))
    assert caught.value.problems == (f"--from-env-file: cannot read {str(path)!r} (not UTF-8 text)",)


def test_from_env_file_missing(tmp_path: Path) -> None:
    missing = tmp_path / "missing.env"
    with pytest.raises(SealError) as caught:
        from_env_file(str(missing))
    assert caught.value.problems == (f"--from-env-file: cannot read '{missing}' (No such file or directory)",)


@pytest.mark.parametrize("key", ["a b", "a/b", "", "k\u00e9y", "a" * 254, "a:b"])
def test_invalid_secret_keys(key: str) -> None:
    with pytest.raises(SealError) as caught:
        check_key(key, "where")
    assert caught.value.problems == (f"where: {key!r} {KEY_HELP}",)


@pytest.mark.parametrize("key", ["a", "A-b_c.d", ".dockerconfigjson", "a" * 253, "0"])
def test_valid_secret_keys(key: str) -> None:
    check_key(key, "where")
