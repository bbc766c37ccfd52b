"""The data plane's TLS: a fresh self-signed certificate per start, pinned to the identity.

No CA vouches for a node. Instead the node signs the SHA-256 of its certificate's
SubjectPublicKeyInfo (the *pin*) with its Ed25519 identity key and registers pin and
signature; the tracker checks the signature and hands the pin to every client of the
node, which refuses a peer whose certificate hashes to anything else
(``tls-pin-mismatch``) before sending a byte. A restart makes a new key pair and a new
pin, re-registered under the same identity: rotation without a CA.

The signed message is ``b"meshnet.tls-pin.v1\\n" + pin_hex + "\\n" + node_id``; the
tracker re-implements it (tracker_service/domain/tls_pin.py), docs/wire.md#tls.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import os
import ssl
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from core.errors import PinMismatch

TLS_PIN_DOMAIN = b"meshnet.tls-pin.v1\n"
PIN_MISMATCH = PinMismatch.reason
# A node restarts far more often than this; the date is not what anyone checks.
VALIDITY_DAYS = 365


@dataclass(frozen=True)
class NodeCertificate:
    cert_pem: bytes
    key_pem: bytes
    pin: str  # sha256 hex of the certificate's SubjectPublicKeyInfo (DER)


def spki_pin_of_der(cert_der: bytes) -> str:
    """The pin of a DER certificate: SHA-256 (hex) of its SubjectPublicKeyInfo."""
    cert = x509.load_der_x509_certificate(cert_der)
    spki = cert.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return hashlib.sha256(spki).hexdigest()


def pin_message(pin: str, node_id: str) -> bytes:
    """What the identity key signs to bind this certificate to this node."""
    return TLS_PIN_DOMAIN + f"{pin}\n{node_id}".encode()


def sign_pin(pin: str, node_id: str, sign: Callable[[bytes], bytes]) -> bytes:
    return sign(pin_message(pin, node_id))


def generate_certificate(node_id: str) -> NodeCertificate:
    """An ECDSA P-256 key and a self-signed certificate naming the node (fast to make,
    cheap handshakes); fresh on every call, so a restart rotates it."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"meshnet-node-{node_id}")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=VALIDITY_DAYS))
        .sign(key, hashes.SHA256())
    )
    der = cert.public_bytes(serialization.Encoding.DER)
    return NodeCertificate(
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        key_pem=key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
        pin=spki_pin_of_der(der),
    )


def server_context(certificate: NodeCertificate) -> ssl.SSLContext:
    """The listening side. ``load_cert_chain`` reads files only, so the PEMs pass
    through a private temporary folder that is removed at once."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    with tempfile.TemporaryDirectory(prefix="meshnet-tls-") as folder:
        cert_path, key_path = Path(folder) / "cert.pem", Path(folder) / "key.pem"
        cert_path.write_bytes(certificate.cert_pem)
        fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(certificate.key_pem)
        context.load_cert_chain(cert_path, key_path)
    return context


def pinned_client_context() -> ssl.SSLContext:
    """No CA and no host name: the pin, checked by :func:`check_pin` once the handshake
    is done, is the whole of the server's authentication."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


def check_pin(ssl_object: ssl.SSLObject | ssl.SSLSocket | None, expected: str) -> None:
    """Raise :class:`PinMismatch` unless the peer's certificate carries the pinned key."""
    der = None if ssl_object is None else ssl_object.getpeercert(binary_form=True)
    if not der:
        raise PinMismatch("the peer sent no certificate; expected the node's pinned one")
    got = ""
    with contextlib.suppress(ValueError):
        got = spki_pin_of_der(der)
    if got != expected:
        raise PinMismatch(
            f"the peer's certificate key hashes to {got[:16] or '?'}…, not the pin "
            f"{expected[:16]}… its node registered; refusing to send anything"
        )
