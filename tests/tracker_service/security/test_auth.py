"""The signed-request contract: vectors shared with the node, and every 401 reason."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from fastapi.testclient import TestClient

from tests.tracker_service.conftest import beat, register
from tests.tracker_service.helpers import FakeNode, heartbeat_body, identity_block
from tracker_service.domain.keys import verify_ed25519
from tracker_service.domain.wire import b64decode_exact, node_id_for, signed_request_message

VECTORS = Path(__file__).resolve().parents[2] / "data" / "signed_request_vectors.json"


def _vectors() -> list[dict[str, Any]]:
    if not VECTORS.exists():
        pytest.fail(f"{VECTORS} is missing; rebuild it: python -m tests.core.build_vectors")
    vectors: list[dict[str, Any]] = json.loads(VECTORS.read_text(encoding="utf-8"))["vectors"]
    assert vectors, "the vector file holds no vectors"
    return vectors


def test_signed_request_vectors_verify_with_the_trackers_own_code() -> None:
    for v in _vectors():
        public_key = b64decode_exact(v["public_key_b64"], 32, "public key")
        body = base64.b64decode(v["body_b64"])
        assert node_id_for(public_key) == v["node_id"], v["name"]
        assert hashlib.sha256(body).hexdigest() == v["body_sha256"], v["name"]
        message = signed_request_message(v["method"], v["path"], v["timestamp"], v["nonce"], body)
        assert message == v["canonical"].encode("utf-8"), v["name"]
        assert verify_ed25519(public_key, v["signature_b64"], message), v["name"]


def test_signed_request_vectors_fail_when_any_signed_part_changes() -> None:
    for v in _vectors():
        public_key = b64decode_exact(v["public_key_b64"], 32, "public key")
        body = base64.b64decode(v["body_b64"])
        tampered = signed_request_message(
            v["method"], v["path"], v["timestamp"] + 1, v["nonce"], body
        )
        assert not verify_ed25519(public_key, v["signature_b64"], tampered), v["name"]
        other_body = signed_request_message(
            v["method"], v["path"], v["timestamp"], v["nonce"], body + b" "
        )
        assert not verify_ed25519(public_key, v["signature_b64"], other_body), v["name"]


def test_signed_request_vector_keys_derive_from_their_seeds() -> None:
    for v in _vectors():
        key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(v["private_key_seed_hex"]))
        signature = key.sign(v["canonical"].encode("utf-8"))
        assert base64.b64encode(signature).decode() == v["signature_b64"], v["name"]


def _reason(response: Any) -> str:
    reason: str = response.json()["reason"]
    return reason


def test_unsigned_request_is_refused_with_missing_headers(client: TestClient) -> None:
    node = FakeNode()
    response = client.post("/api/v1/nodes/register", content=node.register_body())
    assert response.status_code == 401
    assert _reason(response) == "missing-headers"
    assert "X-Meshnet-Signature" in response.json()["detail"]


def test_forged_signature_is_refused(client: TestClient) -> None:
    node, forger = FakeNode(), FakeNode()
    body = node.register_body()
    headers = node.headers("POST", "/api/v1/nodes/register", body)
    headers["X-Meshnet-Signature"] = forger.headers("POST", "/api/v1/nodes/register", body)[
        "X-Meshnet-Signature"
    ]
    response = client.post("/api/v1/nodes/register", content=body, headers=headers)
    assert (response.status_code, _reason(response)) == (401, "bad-signature")


def test_signature_over_another_path_is_refused(client: TestClient) -> None:
    node = FakeNode()
    body = node.register_body()
    headers = node.headers("POST", "/api/v1/nodes/other", body)
    response = client.post("/api/v1/nodes/register", content=body, headers=headers)
    assert _reason(response) == "bad-signature"


def test_stale_timestamp_is_refused(client: TestClient) -> None:
    node = FakeNode()
    body = node.register_body()
    headers = node.headers(
        "POST", "/api/v1/nodes/register", body, timestamp=int(time.time()) - 3600
    )
    response = client.post("/api/v1/nodes/register", content=body, headers=headers)
    assert (response.status_code, _reason(response)) == (401, "stale-timestamp")


def test_key_that_does_not_hash_to_the_node_id_is_refused(client: TestClient) -> None:
    node, other = FakeNode(), FakeNode()
    body = node.register_body()
    headers = node.headers("POST", "/api/v1/nodes/register", body)
    headers["X-Meshnet-Node"] = other.node_id
    response = client.post("/api/v1/nodes/register", content=body, headers=headers)
    assert (response.status_code, _reason(response)) == (401, "node-id-mismatch")


def test_replayed_request_is_refused_with_nonce_reused(client: TestClient) -> None:
    node = FakeNode()
    body = node.register_body()
    headers = node.headers("POST", "/api/v1/nodes/register", body)
    first = client.post("/api/v1/nodes/register", content=body, headers=headers)
    again = client.post("/api/v1/nodes/register", content=body, headers=headers)
    assert first.status_code == 200
    assert (again.status_code, _reason(again)) == (401, "nonce-reused")


def test_replayed_heartbeat_is_refused_with_nonce_reused(client: TestClient) -> None:
    node = FakeNode()
    register(client, node)
    body = heartbeat_body()
    path = f"/api/v1/nodes/{node.node_id}/heartbeat"
    headers = node.headers("POST", path, body)
    assert client.post(path, content=body, headers=headers).status_code == 200
    again = client.post(path, content=body, headers=headers)
    assert (again.status_code, _reason(again)) == (401, "nonce-reused")


def test_nonce_is_spent_even_when_the_body_is_invalid(client: TestClient) -> None:
    node = FakeNode()
    body = json.dumps({"public_key": node.public_b64, "identity": {}, "endpoint": "x"}).encode()
    headers = node.headers("POST", "/api/v1/nodes/register", body)
    first = client.post("/api/v1/nodes/register", content=body, headers=headers)
    again = client.post("/api/v1/nodes/register", content=body, headers=headers)
    assert (first.status_code, _reason(first)) == (422, "invalid-request")
    assert (again.status_code, _reason(again)) == (401, "nonce-reused")


def test_authentication_is_checked_before_the_body_is_validated(client: TestClient) -> None:
    node = FakeNode()
    register(client, node)
    path = f"/api/v1/nodes/{node.node_id}/heartbeat"
    body = b'{"load": "not a number"}'
    headers = node.headers("POST", path, body)
    headers["X-Meshnet-Signature"] = base64.b64encode(b"\0" * 64).decode()
    response = client.post(path, content=body, headers=headers)
    assert (response.status_code, _reason(response)) == (401, "bad-signature")


def test_heartbeat_for_another_nodes_path_is_refused(client: TestClient) -> None:
    node, other = FakeNode(), FakeNode()
    register(client, node)
    register(client, other)
    path = f"/api/v1/nodes/{other.node_id}/heartbeat"
    body = heartbeat_body()
    response = client.post(path, content=body, headers=node.headers("POST", path, body))
    assert (response.status_code, _reason(response)) == (401, "node-id-mismatch")


def test_deregister_from_an_unknown_node_is_refused_with_unknown_node(client: TestClient) -> None:
    node = FakeNode()
    path = f"/api/v1/nodes/{node.node_id}/deregister"
    response = client.post(path, content=b"", headers=node.headers("POST", path, b""))
    assert (response.status_code, _reason(response)) == (401, "unknown-node")


def test_malformed_nonce_is_refused_as_missing_headers(client: TestClient) -> None:
    node = FakeNode()
    body = node.register_body()
    headers = node.headers("POST", "/api/v1/nodes/register", body, nonce="ABC")
    response = client.post("/api/v1/nodes/register", content=body, headers=headers)
    assert (response.status_code, _reason(response)) == (401, "missing-headers")


def test_registration_body_without_public_key_is_refused_as_unverifiable(
    client: TestClient,
) -> None:
    node = FakeNode()
    body = json.dumps({"identity": identity_block()}).encode()
    response = client.post(
        "/api/v1/nodes/register",
        content=body,
        headers=node.headers("POST", "/api/v1/nodes/register", body),
    )
    assert (response.status_code, _reason(response)) == (401, "bad-signature")


def test_refusals_are_counted_in_metrics(client: TestClient) -> None:
    node = FakeNode()
    client.post("/api/v1/nodes/register", content=node.register_body())
    beat(client, node)  # unknown node: told to re-register
    text = client.get("/metrics").text
    assert 'meshnet_tracker_auth_refusals_total{reason="missing-headers"} 1.0' in text
    assert 'meshnet_tracker_heartbeats_total{outcome="unknown"} 1.0' in text
