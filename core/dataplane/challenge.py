"""The reachability challenge: proof that the key holder answers on this port.

Before the tracker routes to a node it dials the node's data-plane port with a
fresh nonce; the node signs ``nonce`` and its node id under a domain of its own,
so the answer can be neither replayed for another nonce nor passed off as any
other signed document.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from core.dataplane import wire
from core.errors import ProtocolError

# 8..128 bytes of hex: enough for a fresh random nonce, bounded for a signer.
_NONCE = re.compile(r"[0-9a-fA-F]{16,256}")


def check_nonce(nonce: str | None) -> str:
    if nonce is None or not _NONCE.fullmatch(nonce):
        raise ProtocolError(
            "the challenge needs ?nonce= with 16 to 256 hex characters", reason=wire.BAD_FRAME
        )
    return nonce


def reachability_message(nonce: str, node_id: str) -> bytes:
    return wire.REACHABILITY_DOMAIN + f"{nonce}\n{node_id}".encode()


def answer_challenge(
    nonce: str, *, node_id: str, public_key: bytes, sign: Callable[[bytes], bytes]
) -> dict[str, str]:
    check_nonce(nonce)
    return {
        "node_id": node_id,
        "public_key": wire.b64encode(public_key),
        "nonce": nonce,
        "signature": wire.b64encode(sign(reachability_message(nonce, node_id))),
    }


def verify_challenge(answer: Mapping[str, Any], nonce: str, expected_node_id: str) -> bytes:
    """Check an answer to ``nonce``; returns the raw public key it proved.

    The key must derive the claimed node id, the node id must be the expected
    one, and the signature must cover exactly this nonce.
    """
    try:
        public_key = wire.b64decode(str(answer.get("public_key")))
    except ValueError as exc:
        raise ProtocolError("the challenge answer's public key is not base64") from exc
    node_id = answer.get("node_id")
    if node_id != expected_node_id or wire.node_id_for(public_key) != node_id:
        raise ProtocolError(
            f"the challenge was answered by node {node_id!r}, expected {expected_node_id}"
        )
    if answer.get("nonce") != nonce or not wire.verify_signature(
        public_key, reachability_message(nonce, node_id), answer.get("signature")
    ):
        raise ProtocolError("the challenge answer is not signed for this nonce")
    return public_key
