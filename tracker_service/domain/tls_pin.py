"""The data plane's TLS pin, as the tracker checks it (re-implemented, not imported).

A node serves ``wss://`` with a self-signed certificate and signs the SHA-256 (hex)
of its SubjectPublicKeyInfo with its Ed25519 identity key over
``b"meshnet.tls-pin.v1\\n" + pin + "\\n" + node_id``. The tracker admits the pin only
with that signature, then hands it to every client of the node (docs/wire.md#tls).
"""

from __future__ import annotations

import hashlib
import re

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from tracker_service.domain.keys import verify_ed25519

TLS_PIN_DOMAIN = b"meshnet.tls-pin.v1\n"
_PIN = re.compile(r"[0-9a-f]{64}")


def is_pin(text: str) -> bool:
    return _PIN.fullmatch(text) is not None


def pin_message(pin: str, node_id: str) -> bytes:
    return TLS_PIN_DOMAIN + f"{pin}\n{node_id}".encode()


def pin_signed_by(public_key: bytes, pin: str, node_id: str, signature_b64: str) -> bool:
    """True when ``pin`` is well formed and ``signature_b64`` binds it to ``node_id``."""
    return is_pin(pin) and verify_ed25519(public_key, signature_b64, pin_message(pin, node_id))


def spki_pin_of_der(cert_der: bytes) -> str:
    """SHA-256 (hex) of a DER certificate's SubjectPublicKeyInfo; "" if it does not parse."""
    try:
        cert = x509.load_der_x509_certificate(cert_der)
        spki = cert.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    except ValueError:
        return ""
    return hashlib.sha256(spki).hexdigest()
