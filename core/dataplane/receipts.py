"""Hop receipts: a node's signed account of the work it did for one route session.

The certifier collects one per hop and the ledger accepts a recipe only on that
evidence, so a receipt is signed by the node key and names the node, the layers
it actually ran (``[effective_start, end]``) and how much it ran:

    steps   the number of step frames the hop computed
    tokens  the number of positions it processed: the sum of B * T over those
            frames. Every hop, the last one included, counts the same way, so
            the certifier can check that all hops of a route did the same work
            (the last hop sampled one token per batch row per step besides).
    output_sha256
            what the hop sent for its last step, so the receipt binds the node to
            its output (a hop audit's evidence): the SHA-256 hex of the reply
            frame's bytes, for every hop. The last hop's frame holds its token ids,
            the top ids and log-probs a gateway samples from and, for a verify
            step, the drafts it kept: everything that decides a token is signed.
            Null when the hop ran no step. A
            client that opens with ``step_receipts`` gets this receipt after
            every reply (``{"type": "step-receipt"}``), so each output is bound
            by the node's signature; it may also ask for one between steps
            (``{"type": "receipt"}``, the session goes on).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from core.dataplane import wire
from core.errors import ProtocolError

_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


def frame_digest(reply: bytes) -> str:
    """A hop's output digest: SHA-256 hex of the reply frame's bytes (every hop, the last
    one included)."""
    return hashlib.sha256(reply).hexdigest()


@dataclass(frozen=True)
class HopReceipt:
    route_session_id: str
    epoch: int
    node_id: str
    start: int  # the effective start: where this hop began computing
    end: int
    steps: int
    tokens: int
    output_sha256: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "route_session_id": self.route_session_id,
            "epoch": self.epoch,
            "node_id": self.node_id,
            "range": [self.start, self.end],
            "steps": self.steps,
            "tokens": self.tokens,
            "output_sha256": self.output_sha256,
        }

    @classmethod
    def from_json(cls, raw: object) -> HopReceipt:
        if not isinstance(raw, dict):
            raise ProtocolError("the hop receipt is not a JSON object")
        span = raw.get("range")
        ints = [raw.get("epoch"), raw.get("steps"), raw.get("tokens")]
        if (
            not isinstance(raw.get("route_session_id"), str)
            or not isinstance(raw.get("node_id"), str)
            or not isinstance(span, list)
            or len(span) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in [*ints, *span])
        ):
            raise ProtocolError(
                "the hop receipt needs route_session_id, epoch, node_id, range, steps, tokens"
            )
        digest = raw.get("output_sha256")
        if digest is not None and not (isinstance(digest, str) and _SHA256_HEX.fullmatch(digest)):
            raise ProtocolError("the hop receipt's output_sha256 must be null or 64 hex chars")
        if "output_sha256" not in raw or (digest is None) != (raw["steps"] == 0):
            raise ProtocolError(
                "the hop receipt needs output_sha256: the digest of its last step's output"
            )
        return cls(
            route_session_id=raw["route_session_id"],
            epoch=raw["epoch"],
            node_id=raw["node_id"],
            start=span[0],
            end=span[1],
            steps=raw["steps"],
            tokens=raw["tokens"],
            output_sha256=digest,
        )


def receipt_message(receipt: Mapping[str, Any]) -> bytes:
    """The exact bytes the node signs."""
    return wire.HOP_RECEIPT_DOMAIN + wire.canonical_json(receipt)


def sign_receipt(receipt: HopReceipt, sign: Callable[[bytes], bytes]) -> dict[str, Any]:
    body = receipt.to_json()
    return {"receipt": body, "signature": wire.b64encode(sign(receipt_message(body)))}


def verify_receipt(signed: Mapping[str, Any], public_key: bytes) -> HopReceipt:
    """Check a ``{"receipt", "signature"}`` against the node's raw public key.

    The receipt must also name the node that key stands for, so one node cannot
    sign work in another node's name.
    """
    raw = signed.get("receipt")
    if not wire.verify_signature(public_key, receipt_message(raw or {}), signed.get("signature")):
        raise ProtocolError("the hop receipt's signature does not match the node's key")
    receipt = HopReceipt.from_json(raw)
    if receipt.node_id != wire.node_id_for(public_key):
        raise ProtocolError(
            f"the hop receipt names node {receipt.node_id}, the key is node "
            f"{wire.node_id_for(public_key)}"
        )
    return receipt
