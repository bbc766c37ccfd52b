"""The committed data-plane vectors are what this code produces, and each one
re-derives from its own inputs (the checks the tracker's side repeats)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core.dataplane import chain, frames, wire
from core.dataplane.challenge import verify_challenge
from core.dataplane.receipts import frame_digest, verify_receipt
from core.dataplane.tickets import RouteTicket
from tests.core.dataplane.build_vectors import VECTORS_PATH, render


@pytest.fixture(scope="module")
def vectors() -> dict[str, Any]:
    return json.loads(VECTORS_PATH.read_text(encoding="utf-8"))


def _public(seed_hex: str) -> bytes:
    return (
        Ed25519PrivateKey.from_private_bytes(bytes.fromhex(seed_hex))
        .public_key()
        .public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    )


def test_committed_vectors_equal_a_fresh_build() -> None:
    assert VECTORS_PATH.read_text(encoding="utf-8") == render()


def test_ticket_canonical_bytes_and_signature_rederive(vectors: dict[str, Any]) -> None:
    for vector in vectors["ticket_vectors"]:
        canonical = wire.ROUTE_TICKET_DOMAIN + wire.canonical_json(vector["ticket"])
        assert canonical.decode("utf-8") == vector["canonical"], vector["name"]
        public = _public(vector["tracker_private_key_seed_hex"])
        assert wire.b64encode(public) == vector["tracker_public_key_b64"]
        assert wire.verify_signature(public, canonical, vector["signature_b64"])


def test_ticket_vectors_pin_float_and_unicode_forms(vectors: dict[str, Any]) -> None:
    canonicals = [v["canonical"] for v in vectors["ticket_vectors"]]
    assert any('"expires_at":1893456000.0,' in c for c in canonicals)
    assert any('"rs-é-0002"' in c for c in canonicals)


def test_receipt_vector_verifies_with_the_node_key(vectors: dict[str, Any]) -> None:
    for vector in vectors["receipt_vectors"]:
        public = _public(vector["node_private_key_seed_hex"])
        signed = {"receipt": vector["receipt"], "signature": vector["signature_b64"]}
        receipt = verify_receipt(signed, public)
        assert receipt.node_id == vector["node_id"] == wire.node_id_for(public)
        canonical = wire.HOP_RECEIPT_DOMAIN + wire.canonical_json(vector["receipt"])
        assert canonical.decode("utf-8") == vector["canonical"]


def test_reachability_vector_verifies_for_its_nonce(vectors: dict[str, Any]) -> None:
    for vector in vectors["reachability_vectors"]:
        expected = f"meshnet.reachability.v1\n{vector['nonce']}\n{vector['node_id']}"
        assert vector["message"] == expected
        public = verify_challenge(vector["answer"], vector["nonce"], vector["node_id"])
        assert public == _public(vector["node_private_key_seed_hex"])


def test_frame_vectors_decode_to_their_listed_tensors(vectors: dict[str, Any]) -> None:
    for vector in vectors["frame_vectors"]:
        decoded = frames.decode_frame(base64.b64decode(vector["frame_b64"]), 1 << 20)
        assert decoded.metadata == vector["metadata"]
        assert set(decoded.tensors) == set(vector["tensors"])
        for name, spec in vector["tensors"].items():
            tensor = decoded.tensors[name]
            assert frames.NAME_OF_DTYPE[tensor.dtype] == spec["dtype"]
            assert list(tensor.shape) == spec["shape"]
            assert tensor.tolist() == spec["values"]


def test_receipt_output_digest_is_the_named_outputs(vectors: dict[str, Any]) -> None:
    frames_by_name = {f["name"]: f for f in vectors["frame_vectors"]}
    for vector in vectors["receipt_vectors"]:
        frame = frames_by_name[vector["output_frame"]]
        data = base64.b64decode(frame["frame_b64"])
        assert vector["receipt"]["output_sha256"] == frame_digest(data), vector["name"]


def test_chain_step_vector_rederives_and_verifies(vectors: dict[str, Any]) -> None:
    frames_by_name = {f["name"]: f for f in vectors["frame_vectors"]}
    ticket = RouteTicket.from_json(vectors["ticket_vectors"][0]["ticket"])
    for vector in vectors["chain_step_vectors"]:
        data = base64.b64decode(frames_by_name[vector["passed_frame"]]["frame_b64"])
        tensors = frames.tensor_bytes_digest(data, frames.read_header(data, len(data)))
        assert tensors == vector["tensors_sha256"]
        assert frames.step_input_digest(vector["step"], tensors) == vector["input_sha256"]
        public = _public(vector["node_private_key_seed_hex"])
        to_node = ticket.hops[1].node_id
        statement = chain.step_statement(
            ticket, wire.node_id_for(public), to_node, 4, vector["input_sha256"]
        )
        assert statement.decode("utf-8") == vector["canonical"]
        assert wire.verify_signature(public, statement, vector["signature_b64"])
