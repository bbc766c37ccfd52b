"""What each node said in an audit, bound by its own signature: the evidence a
quarantine or a dispute keeps (hop_audit.py, arbitration.py)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from tracker_service.domain import wire_frames
from tracker_service.services.route_receipts import reply_output_digest
from tracker_service.services.route_session import DEFAULT_MAX_REPLY_BYTES


def input_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def output_digest(reply: bytes, last: bool) -> str:
    """The output digest a receipt signs; an unreadable reply falls back to its bytes."""
    try:
        return reply_output_digest(reply, last_hop=last, max_bytes=DEFAULT_MAX_REPLY_BYTES)
    except wire_frames.FrameError:
        return input_sha256(reply)


@dataclass(frozen=True)
class Opinion:
    """One node's answer to the disputed hop input, bound by its own signature.

    ``output_sha256`` is the digest a receipt signs (the reply frame's bytes, or
    the last hop's sampled token ids); ``receipt`` is that node's signed receipt
    whose ``output_sha256`` equals it (the replay session's for an auditor, the
    step receipt that came with the disputed reply for the audited hop), or None
    when the node gave none.
    """

    node_id: str
    output_sha256: str
    receipt: dict[str, Any] | None

    def bound(self) -> bool:
        if self.receipt is None:
            return False
        signed = self.receipt.get("receipt") or {}
        return bool(signed.get("output_sha256") == self.output_sha256)

    def to_json(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "output_sha256": self.output_sha256,
            "receipt": self.receipt,
            "bound_by_receipt": self.bound(),
        }
