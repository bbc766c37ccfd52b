"""Build tests/data/dataplane_vectors.json, the data-plane conformance vectors.

    python -m tests.core.dataplane.build_vectors     # rewrites the file

Every input is fixed (Ed25519 seeds, tickets, nonces, tensor values), and
Ed25519 is deterministic, so the output is byte-stable. The tracker's
independent implementation must reproduce each canonical string and signature
and decode each frame to the listed tensors.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import torch
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core.dataplane import chain, frames, wire
from core.dataplane.challenge import answer_challenge, reachability_message
from core.dataplane.receipts import (
    HopReceipt,
    frame_digest,
    receipt_message,
    sign_receipt,
)
from core.dataplane.tickets import RouteTicket, ticket_message
from tests.support.tickets import sign_ticket

VECTORS_PATH = Path(__file__).resolve().parents[2] / "data" / "dataplane_vectors.json"

MIDDLE_FRAME = "middle hop step: hidden states"
LAST_FRAME = "last hop reply: sampled token with top-2 log-probs"
SAFETENSORS_DTYPES = {torch.int64: "I64", torch.float32: "F32"}


def _seed(label: str) -> bytes:
    return hashlib.sha256(label.encode("utf-8")).digest()


def _key(label: str) -> tuple[bytes, Ed25519PrivateKey, bytes]:
    seed = _seed(label)
    private = Ed25519PrivateKey.from_private_bytes(seed)
    public = private.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    return seed, private, public


def _ticket_vectors() -> list[dict[str, Any]]:
    seed, tracker, public = _key("meshnet-vectors/tracker")
    node_a = wire.node_id_for(_key("meshnet-vectors/node-a")[2])
    node_b = wire.node_id_for(_key("meshnet-vectors/node-b")[2])
    fingerprint = {
        "model_artifact_digest": hashlib.sha256(b"artifact").hexdigest(),
        "runtime_recipe_digest": hashlib.sha256(b"recipe").hexdigest(),
    }
    tickets = [
        (
            "two hops, overlap resolved by effective_start",
            {
                "route_session_id": "rs-0001",
                "epoch": 1,
                "expires_at": 1893456000.25,
                "fingerprint": fingerprint,
                "hops": [
                    {"node_id": node_a, "start": 0, "end": 16, "effective_start": 0},
                    {"node_id": node_b, "start": 12, "end": 30, "effective_start": 16},
                ],
            },
        ),
        (
            "whole-number float expiry and a non-ASCII session id",
            {
                "route_session_id": "rs-é-0002",
                "epoch": 7,
                "expires_at": 1893456000.0,
                "fingerprint": fingerprint,
                "hops": [{"node_id": node_a, "start": 0, "end": 30, "effective_start": 0}],
            },
        ),
    ]
    out = []
    for name, ticket in tickets:
        signed = sign_ticket(ticket, tracker.sign)
        out.append(
            {
                "name": name,
                "tracker_private_key_seed_hex": seed.hex(),
                "tracker_public_key_b64": wire.b64encode(public),
                "ticket": ticket,
                "canonical": ticket_message(ticket).decode("utf-8"),
                "signature_b64": signed["signature"],
            }
        )
    return out


def _receipt_vector(
    name: str, receipt: HopReceipt, output_frame: str, seed: bytes, node: Ed25519PrivateKey
) -> dict[str, Any]:
    signed = sign_receipt(receipt, node.sign)
    public = node.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    return {
        "name": name,
        "node_private_key_seed_hex": seed.hex(),
        "node_public_key_b64": wire.b64encode(public),
        "node_id": receipt.node_id,
        "receipt": signed["receipt"],
        "canonical": receipt_message(signed["receipt"]).decode("utf-8"),
        "signature_b64": signed["signature"],
        # The frame vector whose bytes output_sha256 binds (every hop, the last one too).
        "output_frame": output_frame,
    }


def _receipt_vectors(frame_vectors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_name = {v["name"]: v for v in frame_vectors}
    middle = by_name[MIDDLE_FRAME]
    last = by_name[LAST_FRAME]
    seed_a, node_a, public_a = _key("meshnet-vectors/node-a")
    seed_b, node_b, public_b = _key("meshnet-vectors/node-b")
    return [
        _receipt_vector(
            "last hop after a 8-token prefill and 8 decode steps",
            HopReceipt(
                route_session_id="rs-0001",
                epoch=1,
                node_id=wire.node_id_for(public_b),
                start=16,
                end=30,
                steps=9,
                tokens=16,
                output_sha256=frame_digest(base64.b64decode(last["frame_b64"])),
            ),
            LAST_FRAME,
            seed_b,
            node_b,
        ),
        _receipt_vector(
            "middle hop after one step of two positions",
            HopReceipt(
                route_session_id="rs-0001",
                epoch=1,
                node_id=wire.node_id_for(public_a),
                start=0,
                end=16,
                steps=1,
                tokens=2,
                output_sha256=frame_digest(base64.b64decode(middle["frame_b64"])),
            ),
            MIDDLE_FRAME,
            seed_a,
            node_a,
        ),
    ]


def _chain_step_vectors(frame_vectors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What hop A signs when it passes its middle-hop reply to hop B as step 4 of their
    link, under the client's step keys (a rewind and a verify with a draft)."""
    seed, node_a, public_a = _key("meshnet-vectors/node-a")
    node_b = wire.node_id_for(_key("meshnet-vectors/node-b")[2])
    middle = next(v for v in frame_vectors if v["name"] == MIDDLE_FRAME)
    data = base64.b64decode(middle["frame_b64"])
    tensors_sha256 = frames.tensor_bytes_digest(data, frames.read_header(data, len(data)))
    step = {"position": "3", "rewind": "1", "verify": "1", "draft": "7,42"}
    digest = frames.step_input_digest(step, tensors_sha256)
    ticket = RouteTicket.from_json(_ticket_vectors()[0]["ticket"])
    statement = chain.step_statement(ticket, wire.node_id_for(public_a), node_b, 4, digest)
    return [
        {
            "name": "hop A passes hop B its hidden states as step 4, rewound, with a draft",
            "node_private_key_seed_hex": seed.hex(),
            "node_public_key_b64": wire.b64encode(public_a),
            "passed_frame": MIDDLE_FRAME,
            "tensors_sha256": tensors_sha256,
            "step": step,
            "input_sha256": digest,
            "canonical": statement.decode("utf-8"),
            "signature_b64": wire.b64encode(node_a.sign(statement)),
        }
    ]


def _reachability_vectors() -> list[dict[str, Any]]:
    seed, node, public = _key("meshnet-vectors/node-a")
    node_id = wire.node_id_for(public)
    nonce = hashlib.sha256(b"challenge-nonce").hexdigest()[:32]
    return [
        {
            "name": "16-byte nonce",
            "node_private_key_seed_hex": seed.hex(),
            "node_public_key_b64": wire.b64encode(public),
            "node_id": node_id,
            "nonce": nonce,
            "message": reachability_message(nonce, node_id).decode("utf-8"),
            "answer": answer_challenge(nonce, node_id=node_id, public_key=public, sign=node.sign),
        }
    ]


def _frame_vector(name: str, tensors: dict[str, torch.Tensor], meta: dict[str, str]) -> Any:
    data = frames.encode_frame(tensors, meta)
    return {
        "name": name,
        "frame_b64": base64.b64encode(data).decode("ascii"),
        "metadata": meta,
        "tensors": {
            key: {
                "dtype": SAFETENSORS_DTYPES[t.dtype],
                "shape": list(t.shape),
                "values": t.tolist(),
            }
            for key, t in tensors.items()
        },
    }


def _frame_vectors() -> list[dict[str, Any]]:
    hidden = torch.tensor([[[0.5, -1.25, 2.0, 0.0], [3.5, -0.125, 1.0, -2.0]]])  # (1, 2, 4)
    return [
        _frame_vector(
            "first hop step: prompt ids",
            {"input_ids": torch.tensor([[1, 7, 42]])},
            {"position": "0"},
        ),
        _frame_vector(MIDDLE_FRAME, {"hidden": hidden}, {"position": "3"}),
        _frame_vector(
            LAST_FRAME,
            {
                "token_ids": torch.tensor([42]),
                "top_ids": torch.tensor([[42, 7]]),
                "top_logprobs": torch.tensor([[-0.25, -1.5]]),
            },
            {"compute_ms": "1.500"},
        ),
    ]


def build() -> dict[str, Any]:
    frame_vectors = _frame_vectors()
    return {
        "description": (
            "MeshNet data-plane vectors (docs/wire.md#data-plane, issue 5). "
            "Signed bytes are the UTF-8 of "
            "'canonical'; signatures are Ed25519 (deterministic) by the listed seed, standard "
            "padded base64. Frames are safetensors bytes; a reader must decode each to exactly "
            "the listed dtype, shape and values (byte-exact re-encoding is not required). "
            "A receipt's output_sha256 is the SHA-256 hex of its 'output_frame' vector's bytes "
            "(every hop, the last one included). A chain step's input_sha256 is the SHA-256 "
            "hex of canonical JSON {step, tensors_sha256} (tensors_sha256: of the passed "
            "frame's tensor bytes); the passing hop signs 'canonical'."
        ),
        "domains": {
            "route_ticket": wire.ROUTE_TICKET_DOMAIN.decode(),
            "hop_receipt": wire.HOP_RECEIPT_DOMAIN.decode(),
            "reachability": wire.REACHABILITY_DOMAIN.decode(),
            "chain_step": wire.CHAIN_STEP_DOMAIN.decode(),
        },
        "ticket_vectors": _ticket_vectors(),
        "receipt_vectors": _receipt_vectors(frame_vectors),
        "reachability_vectors": _reachability_vectors(),
        "chain_step_vectors": _chain_step_vectors(frame_vectors),
        "frame_vectors": frame_vectors,
    }


def render() -> str:
    return json.dumps(build(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"


if __name__ == "__main__":
    VECTORS_PATH.write_text(render(), encoding="utf-8")
