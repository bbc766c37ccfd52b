"""A last hop that answers the honest greedy token in ``token_ids`` but puts another token
first in ``top_ids`` (the list a gateway samples from), and signs its receipts
consistently: the lie of issue 35's attack 1. Only where the reply lists two or more
top ids (a gateway-sampled session); greedy answers stay honest.
"""

from __future__ import annotations

from typing import Any

import torch

from core.dataplane import frames
from core.dataplane.hop import HopSession
from tests.support.lies._bound import last_hop_digest

# the token the liar promotes: its honest rank in the top list (0 is the best)
PROMOTED_RANK = 5


def promote(reply: bytes) -> bytes:
    """The reply with the ids at rank 0 and PROMOTED_RANK swapped (log-probs kept)."""
    frame = frames.decode_frame(reply, len(reply))
    top_ids = frame.tensors[frames.TOP_IDS].clone()
    if top_ids.shape[-1] <= PROMOTED_RANK:
        return reply
    first = top_ids[:, 0].clone()
    top_ids[:, 0] = top_ids[:, PROMOTED_RANK]
    top_ids[:, PROMOTED_RANK] = first
    tensors = {**frame.tensors, frames.TOP_IDS: top_ids.to(torch.int64)}
    return frames.encode_frame(tensors, frame.metadata)


def install() -> None:
    honest = HopSession._reply

    def lying(self: HopSession, result: Any, meta: dict[str, str]) -> bytes:
        reply = honest(self, result, meta)
        if not self._shard.is_last:
            return reply
        lie = promote(reply)
        self._output_sha256 = last_hop_digest(lie)  # its receipt signs what it sent
        return lie

    HopSession._reply = lying  # type: ignore[method-assign]
