"""The tracker's ticket, receipt, challenge and frame code reproduces the node's
committed data-plane vectors (tests/data/dataplane_vectors.json)."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import safetensors.numpy

from tracker_service.domain import wire_frames
from tracker_service.domain.keys import TrackerKey
from tracker_service.domain.tickets import (
    TicketHop,
    build_ticket,
    chain_step_message,
    chain_step_statement,
    check_receipt_matches,
    frame_output_digest,
    receipt_message,
    sign_ticket,
    ticket_message,
    verify_chain_step,
    verify_receipt,
)
from tracker_service.errors import ChallengeFailed, ReceiptError
from tracker_service.services.reachability import challenge_message, verify_answer

VECTORS = json.loads(
    (Path(__file__).resolve().parents[2] / "data" / "dataplane_vectors.json").read_text("utf-8")
)


def _b64(text: str) -> bytes:
    return base64.b64decode(text)


@pytest.mark.parametrize("vector", VECTORS["ticket_vectors"], ids=lambda v: v["name"])
def test_ticket_signing_reproduces_the_node_side_vector(vector: dict[str, Any]) -> None:
    key = TrackerKey.from_seed(bytes.fromhex(vector["tracker_private_key_seed_hex"]))
    raw = vector["ticket"]
    ticket = build_ticket(
        route_session_id=raw["route_session_id"],
        epoch=raw["epoch"],
        expires_at=raw["expires_at"],
        fingerprint=(
            raw["fingerprint"]["model_artifact_digest"],
            raw["fingerprint"]["runtime_recipe_digest"],
        ),
        hops=[TicketHop(**hop) for hop in raw["hops"]],
    )
    signed = sign_ticket(key, ticket)
    assert key.public_key_b64 == vector["tracker_public_key_b64"]
    assert ticket_message(ticket) == vector["canonical"].encode("utf-8")
    assert signed["signature"] == vector["signature_b64"]
    assert signed["ticket"] == raw


def test_ticket_expiry_is_written_as_a_float_even_when_whole() -> None:
    ticket = build_ticket(
        route_session_id="rs",
        epoch=1,
        expires_at=1893456000,
        fingerprint=("a" * 64, "b" * 64),
        hops=[TicketHop("n", 0, 4, 0)],
    )
    assert b'"expires_at":1893456000.0' in ticket_message(ticket)


@pytest.mark.parametrize("vector", VECTORS["receipt_vectors"], ids=lambda v: v["name"])
def test_receipt_verification_accepts_the_node_side_vector(vector: dict[str, Any]) -> None:
    public_key = _b64(vector["node_public_key_b64"])
    signed = {"receipt": vector["receipt"], "signature": vector["signature_b64"]}
    assert receipt_message(vector["receipt"]) == vector["canonical"].encode("utf-8")
    receipt = verify_receipt(signed, public_key)
    assert (receipt.node_id, receipt.start, receipt.end) == (
        vector["node_id"],
        *vector["receipt"]["range"],
    )
    assert (receipt.steps, receipt.tokens) == (
        vector["receipt"]["steps"],
        vector["receipt"]["tokens"],
    )


@pytest.mark.parametrize(
    "tamper",
    [
        lambda s: s["receipt"].__setitem__("tokens", s["receipt"]["tokens"] + 1),
        lambda s: s["receipt"].__setitem__("range", [0, 30]),
        lambda s: s.__setitem__("signature", base64.b64encode(b"\0" * 64).decode()),
        lambda s: s.__setitem__("signature", "not base64!"),
        lambda s: s.pop("receipt"),
    ],
    ids=["tokens", "range", "zero-signature", "garbage-signature", "missing"],
)
def test_a_tampered_receipt_is_refused(tamper: Any) -> None:
    vector = VECTORS["receipt_vectors"][0]
    signed = {"receipt": copy.deepcopy(vector["receipt"]), "signature": vector["signature_b64"]}
    tamper(signed)
    with pytest.raises(ReceiptError):
        verify_receipt(signed, _b64(vector["node_public_key_b64"]))


def test_a_receipt_signed_by_another_key_is_refused() -> None:
    receipt_vector = VECTORS["receipt_vectors"][0]
    other = _b64(VECTORS["reachability_vectors"][0]["node_public_key_b64"])
    signed = {"receipt": receipt_vector["receipt"], "signature": receipt_vector["signature_b64"]}
    with pytest.raises(ReceiptError, match="signature"):
        verify_receipt(signed, other)


def test_a_receipt_is_checked_against_the_work_the_client_sent() -> None:
    vector = VECTORS["receipt_vectors"][0]
    signed = {"receipt": vector["receipt"], "signature": vector["signature_b64"]}
    receipt = verify_receipt(signed, _b64(vector["node_public_key_b64"]))
    hop = TicketHop(vector["node_id"], 12, 30, 16)
    check_receipt_matches(receipt, route_session_id="rs-0001", epoch=1, hop=hop, steps=9, tokens=16)
    with pytest.raises(ReceiptError, match="steps 10"):
        check_receipt_matches(
            receipt, route_session_id="rs-0001", epoch=1, hop=hop, steps=10, tokens=16
        )


@pytest.mark.parametrize("vector", VECTORS["receipt_vectors"], ids=lambda v: v["name"])
def test_a_receipts_output_digest_rederives_from_the_output_it_names(
    vector: dict[str, Any],
) -> None:
    frame = next(f for f in VECTORS["frame_vectors"] if f["name"] == vector["output_frame"])
    data = _b64(frame["frame_b64"])
    digest = frame_output_digest(data)  # every hop's, the last one's included
    assert vector["receipt"]["output_sha256"] == digest
    receipt = verify_receipt(
        {"receipt": vector["receipt"], "signature": vector["signature_b64"]},
        _b64(vector["node_public_key_b64"]),
    )
    start, end = vector["receipt"]["range"]
    hop = TicketHop(vector["node_id"], start, end, start)
    work = {"steps": receipt.steps, "tokens": receipt.tokens}
    check_receipt_matches(
        receipt, route_session_id="rs-0001", epoch=1, hop=hop, output_sha256=digest, **work
    )
    with pytest.raises(ReceiptError, match="signed output"):
        check_receipt_matches(
            receipt, route_session_id="rs-0001", epoch=1, hop=hop, output_sha256="0" * 64, **work
        )


@pytest.mark.parametrize("vector", VECTORS["chain_step_vectors"], ids=lambda v: v["name"])
def test_a_chain_step_vector_rederives_and_verifies(vector: dict[str, Any]) -> None:
    frame = next(f for f in VECTORS["frame_vectors"] if f["name"] == vector["passed_frame"])
    data = _b64(frame["frame_b64"])
    tensors = wire_frames.tensor_bytes_digest(data, len(data))
    assert tensors == vector["tensors_sha256"]
    assert wire_frames.step_input_digest(vector["step"], tensors) == vector["input_sha256"]
    ticket = VECTORS["ticket_vectors"][0]["ticket"]
    public = _b64(vector["node_public_key_b64"])
    statement = chain_step_statement(
        ticket["route_session_id"],
        ticket["epoch"],
        ticket["hops"][0]["node_id"],
        ticket["hops"][1]["node_id"],
        4,
        vector["input_sha256"],
    )
    assert chain_step_message(statement).decode("utf-8") == vector["canonical"]
    assert verify_chain_step(public, statement, vector["signature_b64"])
    forged = {**statement, "input_sha256": wire_frames.step_input_digest({}, tensors)}
    assert not verify_chain_step(public, forged, vector["signature_b64"])


def test_a_receipt_without_an_output_digest_is_refused() -> None:
    vector = VECTORS["receipt_vectors"][0]
    key = TrackerKey.from_seed(bytes.fromhex(vector["node_private_key_seed_hex"]))
    for digest in ("missing", None, "ABC"):
        body = copy.deepcopy(vector["receipt"])
        if digest == "missing":
            body.pop("output_sha256")
        else:
            body["output_sha256"] = digest
        # Signed correctly by the node's own key: the shape, not the signature, is wrong.
        signature = key.sign(b"meshnet.hop-receipt.v1", body)
        with pytest.raises(ReceiptError, match="output_sha256"):
            verify_receipt({"receipt": body, "signature": signature}, key.public_key_raw)


@pytest.mark.parametrize("vector", VECTORS["reachability_vectors"], ids=lambda v: v["name"])
def test_challenge_verification_accepts_the_node_side_vector(vector: dict[str, Any]) -> None:
    public_key = _b64(vector["node_public_key_b64"])
    assert challenge_message(vector["nonce"], vector["node_id"]) == vector["message"].encode()
    verify_answer(
        vector["answer"], nonce=vector["nonce"], node_id=vector["node_id"], public_key=public_key
    )
    with pytest.raises(ChallengeFailed, match="nonce"):
        verify_answer(
            vector["answer"], nonce="00" * 16, node_id=vector["node_id"], public_key=public_key
        )


@pytest.mark.parametrize("vector", VECTORS["frame_vectors"], ids=lambda v: v["name"])
def test_frame_vectors_decode_to_the_listed_tensors(vector: dict[str, Any]) -> None:
    data = _b64(vector["frame_b64"])
    header = wire_frames.read_header(data, 1 << 20)
    assert header.metadata == vector["metadata"]
    arrays = safetensors.numpy.load(data)
    for name, spec in vector["tensors"].items():
        assert header.tensors[name].dtype == spec["dtype"]
        assert list(header.tensors[name].shape) == spec["shape"]
        np.testing.assert_array_equal(arrays[name], np.asarray(spec["values"]))


def test_input_ids_frame_reproduces_the_vector_bytes() -> None:
    vector = VECTORS["frame_vectors"][0]
    ids = vector["tensors"]["input_ids"]["values"]
    position = int(vector["metadata"]["position"])
    assert wire_frames.input_ids_frame(ids, position) == _b64(vector["frame_b64"])


def test_relaying_hidden_states_rewrites_only_the_position() -> None:
    vector = VECTORS["frame_vectors"][1]
    data = _b64(vector["frame_b64"])
    assert wire_frames.relay_hidden(data, 3, max_bytes=1 << 20) == data
    moved = wire_frames.relay_hidden(data, 7, max_bytes=1 << 20)
    assert wire_frames.read_header(moved, 1 << 20).metadata == {"position": "7"}
    np.testing.assert_array_equal(
        safetensors.numpy.load(moved)["hidden"], safetensors.numpy.load(data)["hidden"]
    )


def test_last_hop_reply_vector_decodes_to_token_and_logprobs() -> None:
    vector = VECTORS["frame_vectors"][2]
    reply = wire_frames.decode_last_hop(_b64(vector["frame_b64"]), max_bytes=1 << 20, batch_size=1)
    assert reply.token_ids == vector["tensors"]["token_ids"]["values"]
    assert reply.top_ids == vector["tensors"]["top_ids"]["values"]
    assert reply.compute_ms == pytest.approx(1.5)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\xff" * 8,
        (8).to_bytes(8, "little") + b"[1,2,3]\n",
        wire_frames.encode({"hidden": ("F32", (1, 1, 4), b"\0" * 12)}, {}),  # short data
        wire_frames.encode({"hidden": ("U8", (1, 1, 4), b"\0" * 4)}, {}),
    ],
    ids=["empty", "huge-header", "not-object", "short-data", "bad-dtype"],
)
def test_malformed_frames_raise_frame_error_not_crash(data: bytes) -> None:
    with pytest.raises(wire_frames.FrameError):
        wire_frames.relay_hidden(data, 0, max_bytes=1 << 20)


def test_an_oversized_frame_is_refused_before_parsing() -> None:
    data = _b64(VECTORS["frame_vectors"][1]["frame_b64"])
    with pytest.raises(wire_frames.FrameError, match="over the limit"):
        wire_frames.read_header(data, len(data) - 1)
