"""Route tickets (signed by the tracker) and hop receipts (signed by nodes).

A node serves no session without a ticket: the tracker's signed statement of
``{route session id, epoch, hops, fingerprint, expiry}``. At the end of a
session every hop returns a receipt signed with its node key, naming the layers
it actually ran and how much work it did; the certifier accepts a recipe only
on receipts that verify against the keys nodes registered with.

Byte forms are those of ``docs/wire.md#route-tickets`` and
``docs/wire.md#hop-receipts``, implemented here independently of the node and
pinned by ``tests/data/dataplane_vectors.json``.
"""

from __future__ import annotations

import hashlib
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tracker_service.domain.keys import ROUTE_TICKET_DOMAIN, TrackerKey, verify_ed25519
from tracker_service.domain.wire import domain_message, node_id_for
from tracker_service.errors import ReceiptError

HOP_RECEIPT_DOMAIN = b"meshnet.hop-receipt.v1"
# What a chained hop signs for each step it passes its successor (docs/wire.md#chained-hops).
CHAIN_STEP_DOMAIN = b"meshnet.chain-step.v1"
DEFAULT_TICKET_TTL_S = 600.0
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


def frame_output_digest(reply: bytes) -> str:
    """What a hop's receipt binds: SHA-256 hex of its last reply frame's bytes. For the
    last hop that is its token ids, top ids and log-probs and a verify step's kept
    drafts: everything that decides a token."""
    return hashlib.sha256(reply).hexdigest()


@dataclass(frozen=True)
class NextHop:
    """Where a hop of a chain forwards its output (docs/wire.md#chained-hops): its
    successor's data plane and certificate pin ("" for a plaintext development node)."""

    endpoint: str
    tls_pin: str

    def to_json(self) -> dict[str, str]:
        return {"endpoint": self.endpoint, "tls_pin": self.tls_pin}


@dataclass(frozen=True)
class TicketHop:
    node_id: str
    start: int
    end: int
    effective_start: int
    next: NextHop | None = None  # set when the ticket lets the route run as a chain
    # An audit replay on a node whose shard contains the audited hop: stop at the hop's
    # end, inside the shard (docs/wire.md#route-tickets). None: at the shard's end.
    effective_end: int | None = None

    def to_json(self) -> dict[str, Any]:
        hop: dict[str, Any] = {
            "node_id": self.node_id,
            "start": self.start,
            "end": self.end,
            "effective_start": self.effective_start,
        }
        if self.next is not None:
            hop["next"] = self.next.to_json()
        if self.effective_end is not None:
            hop["effective_end"] = self.effective_end
        return hop


def new_route_session_id() -> str:
    return f"rs-{uuid.uuid4().hex}"


def build_ticket(
    *,
    route_session_id: str,
    epoch: int,
    expires_at: float,
    fingerprint: tuple[str, str],
    hops: Sequence[TicketHop],
) -> dict[str, Any]:
    """The ``ticket`` object exactly as docs/wire.md#route-tickets writes it (expiry a float)."""
    return {
        "route_session_id": route_session_id,
        "epoch": int(epoch),
        "expires_at": float(expires_at),
        "fingerprint": {
            "model_artifact_digest": fingerprint[0],
            "runtime_recipe_digest": fingerprint[1],
        },
        "hops": [hop.to_json() for hop in hops],
    }


def sign_ticket(key: TrackerKey, ticket: Mapping[str, Any]) -> dict[str, Any]:
    """``{"ticket", "signature"}``: Ed25519 over b"meshnet.route-ticket.v1\\n" + canonical."""
    return {"ticket": dict(ticket), "signature": key.sign(ROUTE_TICKET_DOMAIN, ticket)}


def issue_ticket(
    key: TrackerKey,
    *,
    fingerprint: tuple[str, str],
    hops: Sequence[TicketHop],
    ttl_s: float = DEFAULT_TICKET_TTL_S,
    epoch: int = 1,
    route_session_id: str | None = None,
    now: float | None = None,
) -> dict[str, Any]:
    """A fresh signed ticket for one route session."""
    issued = time.time() if now is None else now
    ticket = build_ticket(
        route_session_id=route_session_id or new_route_session_id(),
        epoch=epoch,
        expires_at=issued + ttl_s,
        fingerprint=fingerprint,
        hops=hops,
    )
    return sign_ticket(key, ticket)


def ticket_message(ticket: Mapping[str, Any]) -> bytes:
    return domain_message(ROUTE_TICKET_DOMAIN, ticket)


def receipt_message(receipt: Mapping[str, Any]) -> bytes:
    return domain_message(HOP_RECEIPT_DOMAIN, receipt)


def chain_step_statement(
    route_session_id: str, epoch: int, from_node: str, to_node: str, seq: int, input_sha256: str
) -> dict[str, Any]:
    """What hop `from_node` signs for the `seq`-th step it passes `to_node`: the digest of
    that step's tensor bytes and step keys (wire_frames.step_input_digest)."""
    return {
        "route_session_id": route_session_id,
        "epoch": epoch,
        "from": from_node,
        "to": to_node,
        "seq": seq,
        "input_sha256": input_sha256,
    }


def chain_step_message(statement: Mapping[str, Any]) -> bytes:
    return domain_message(CHAIN_STEP_DOMAIN, statement)


def verify_chain_step(public_key: bytes, statement: Mapping[str, Any], signature: object) -> bool:
    """True when `signature` (base64) is the node's over `statement`."""
    if not isinstance(signature, str):
        return False
    return verify_ed25519(public_key, signature, chain_step_message(statement))


@dataclass(frozen=True)
class HopReceipt:
    """A verified receipt: this node ran layers [start, end) for `steps` steps."""

    route_session_id: str
    epoch: int
    node_id: str
    start: int  # the hop's effective start
    end: int
    steps: int
    tokens: int
    signed: dict[str, Any]  # the receipt and signature as received, kept as evidence
    output_sha256: str | None = None  # the digest of the hop's last step output (None: no step)


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def verify_receipt(signed: object, public_key: bytes) -> HopReceipt:
    """Check a ``{"receipt", "signature"}`` against the node's registered key."""
    if not isinstance(signed, Mapping):
        raise ReceiptError("the hop receipt is not a JSON object")
    raw, signature = signed.get("receipt"), signed.get("signature")
    if not isinstance(raw, dict) or not isinstance(signature, str):
        raise ReceiptError("the hop receipt needs 'receipt' and 'signature'")
    if not verify_ed25519(public_key, signature, receipt_message(raw)):
        raise ReceiptError("the hop receipt's signature is not the registered node key's")
    span = raw.get("range")
    if not (
        isinstance(raw.get("route_session_id"), str)
        and isinstance(raw.get("node_id"), str)
        and isinstance(span, list)
        and len(span) == 2
        and all(_int(v) for v in (raw.get("epoch"), raw.get("steps"), raw.get("tokens"), *span))
    ):
        raise ReceiptError(
            "the hop receipt needs route_session_id, epoch, node_id, range, steps, tokens"
        )
    digest = raw.get("output_sha256", "missing")
    if not (digest is None or (isinstance(digest, str) and _SHA256_HEX.fullmatch(digest))):
        raise ReceiptError(
            "the hop receipt needs output_sha256: null or the 64-hex SHA-256 of its last output"
        )
    if (digest is None) != (raw["steps"] == 0):
        raise ReceiptError("the hop receipt's output_sha256 must be null exactly when steps is 0")
    if raw["node_id"] != node_id_for(public_key):
        raise ReceiptError(
            f"the receipt names node {raw['node_id']}, the key is node {node_id_for(public_key)}"
        )
    return HopReceipt(
        route_session_id=raw["route_session_id"],
        epoch=raw["epoch"],
        node_id=raw["node_id"],
        start=span[0],
        end=span[1],
        steps=raw["steps"],
        tokens=raw["tokens"],
        output_sha256=digest,
        signed={"receipt": raw, "signature": signature},
    )


def check_receipt_matches(
    receipt: HopReceipt,
    *,
    route_session_id: str,
    epoch: int,
    hop: TicketHop,
    steps: int,
    tokens: int,
    output_sha256: str | None = None,
) -> None:
    """The receipt must account for exactly the work this client sent the hop.

    With ``output_sha256`` (the digest of the last reply this client received),
    it must also bind the node to that output.
    """
    expected = (route_session_id, epoch, hop.node_id, hop.effective_start, hop.end, steps, tokens)
    got = (
        receipt.route_session_id,
        receipt.epoch,
        receipt.node_id,
        receipt.start,
        receipt.end,
        receipt.steps,
        receipt.tokens,
    )
    if got != expected:
        raise ReceiptError(
            f"node {hop.node_id} signed session {got[0]} epoch {got[1]} layers "
            f"{got[3]}-{got[4]} steps {got[5]} tokens {got[6]}; this client ran session "
            f"{route_session_id} epoch {epoch} layers {hop.effective_start}-{hop.end} "
            f"steps {steps} tokens {tokens}"
        )
    if output_sha256 is not None and receipt.output_sha256 != output_sha256:
        raise ReceiptError(
            f"node {hop.node_id} signed output {receipt.output_sha256}; the last output this "
            f"client received from it has digest {output_sha256}"
        )
