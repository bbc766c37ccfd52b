"""Signed request headers and canonical JSON, pinned by committed vectors."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from core.identity.keypair import NodeIdentity, verify
from core.identity.signing import (
    HEADER_NODE,
    HEADER_NONCE,
    HEADER_SIGNATURE,
    HEADER_TIMESTAMP,
    HOP_RECEIPT_DOMAIN,
    canonical_json,
    sha256_hex,
    signed_headers,
    verify_signed_request,
)
from tests.core.build_vectors import SIGNED_REQUEST_VECTORS, build_signed_request_vectors, render
from tests.support.documents import sign_document, verify_document


def _vectors() -> list[dict[str, Any]]:
    data = json.loads(SIGNED_REQUEST_VECTORS.read_text(encoding="utf-8"))
    vectors: list[dict[str, Any]] = data["vectors"]
    return vectors


def test_committed_vectors_cover_empty_and_non_ascii_bodies() -> None:
    vectors = _vectors()
    bodies = [base64.b64decode(v["body_b64"]) for v in vectors]
    assert len(vectors) >= 3
    assert b"" in bodies
    assert any(any(byte > 0x7F for byte in body) for body in bodies)


@pytest.mark.parametrize("vector", _vectors(), ids=lambda v: v["name"])
def test_signed_headers_reproduce_each_committed_vector(vector: dict[str, Any]) -> None:
    identity = NodeIdentity.from_seed(bytes.fromhex(vector["private_key_seed_hex"]))
    body = base64.b64decode(vector["body_b64"])
    headers = signed_headers(
        vector["method"],
        vector["path"],
        body,
        identity,
        now=vector["timestamp"],
        nonce=vector["nonce"],
    )
    assert identity.public_key_b64 == vector["public_key_b64"]
    assert headers == {
        HEADER_NODE: vector["node_id"],
        HEADER_TIMESTAMP: str(vector["timestamp"]),
        HEADER_NONCE: vector["nonce"],
        HEADER_SIGNATURE: vector["signature_b64"],
    }
    assert sha256_hex(body) == vector["body_sha256"]
    # The canonical string, rebuilt by hand from docs/wire.md#signed-requests.
    canonical = "\n".join(
        [
            vector["method"],
            vector["path"],
            str(vector["timestamp"]),
            vector["nonce"],
            vector["body_sha256"],
        ]
    )
    assert canonical == vector["canonical"]
    assert verify(vector["public_key_b64"], canonical.encode("utf-8"), vector["signature_b64"])


def test_committed_vector_file_equals_a_fresh_build() -> None:
    assert SIGNED_REQUEST_VECTORS.read_text(encoding="utf-8") == render(
        build_signed_request_vectors()
    )


def test_fresh_headers_use_a_new_16_byte_nonce_and_the_clock() -> None:
    identity = NodeIdentity.generate()
    a = signed_headers("POST", "/v1/x", b"{}", identity, now=1000.9)
    b = signed_headers("POST", "/v1/x", b"{}", identity, now=1000.9)
    assert a[HEADER_TIMESTAMP] == "1000"
    assert len(a[HEADER_NONCE]) == 32 and a[HEADER_NONCE] == a[HEADER_NONCE].lower()
    assert a[HEADER_NONCE] != b[HEADER_NONCE]


def test_query_string_and_lowercase_method_do_not_change_the_signature() -> None:
    identity = NodeIdentity.from_seed(b"\x01" * 32)
    plain = signed_headers("POST", "/v1/x", b"{}", identity, now=5, nonce="ab" * 16)
    noisy = signed_headers("post", "/v1/x?debug=1", b"{}", identity, now=5, nonce="ab" * 16)
    assert plain == noisy


def test_verify_signed_request_rejects_changed_body_path_or_missing_header() -> None:
    identity = NodeIdentity.from_seed(b"\x02" * 32)
    headers = signed_headers("POST", "/v1/a", b'{"n":1}', identity, now=7, nonce="cd" * 16)
    key = identity.public_key_b64
    assert verify_signed_request("POST", "/v1/a", b'{"n":1}', headers, key)
    assert not verify_signed_request("POST", "/v1/a", b'{"n":2}', headers, key)
    assert not verify_signed_request("POST", "/v1/b", b'{"n":1}', headers, key)
    assert not verify_signed_request(
        "POST", "/v1/a", b'{"n":1}', {**headers, HEADER_TIMESTAMP: "8"}, key
    )
    missing = {k: v for k, v in headers.items() if k != HEADER_NONCE}
    assert not verify_signed_request("POST", "/v1/a", b'{"n":1}', missing, key)


def test_canonical_json_sorts_keys_drops_spaces_and_keeps_unicode() -> None:
    assert canonical_json({"b": 1, "a": [1, "é"]}) == '{"a":[1,"é"],"b":1}'.encode()


def test_signed_document_verifies_only_under_its_own_domain() -> None:
    identity = NodeIdentity.from_seed(b"\x03" * 32)
    receipt = {"route_session_id": "r1", "epoch": 1, "steps": 3}
    signature = sign_document(identity, HOP_RECEIPT_DOMAIN, receipt)
    assert verify_document(identity.public_key_b64, HOP_RECEIPT_DOMAIN, receipt, signature)
    assert not verify_document(identity.public_key_b64, b"other\n", receipt, signature)
    assert not verify_document(
        identity.public_key_b64, HOP_RECEIPT_DOMAIN, {**receipt, "steps": 4}, signature
    )
