"""What a liar's receipts sign: the digest the node's own receipt rule gives its reply, so
a lie is signed as consistently as an honest answer (a client that checks receipts then
sees nothing amiss; only what the receipt covers and the audit compares can catch it).

Nodes before issue 35 bound only a last hop's token ids; since, the whole reply frame.
"""

from __future__ import annotations

import hashlib

from core.dataplane import frames, receipts


def last_hop_digest(reply: bytes) -> str:
    token_digest = getattr(receipts, "token_digest", None)
    if token_digest is None:
        return hashlib.sha256(reply).hexdigest()
    ids = frames.decode_frame(reply, len(reply)).tensors[frames.TOKEN_IDS]
    return str(token_digest(ids.reshape(-1).tolist()))
