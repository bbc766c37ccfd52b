"""A last hop that lies only when the answer is sampled (issue 35's attack 2): honest on
greedy sessions, which audits replay, and on sampled ones it chooses the token itself.

"Sampled" as the node sees it: opened with a temperature (the node draws), or greedy with
top log-probs (the gateway draws from them). Either way it puts its own token (the
honest rank-3 one) in ``token_ids`` and first in ``top_ids`` with the best log-prob,
and signs its receipts consistently, so whoever draws gets the liar's choice.
"""

from __future__ import annotations

from typing import Any

import torch

from core.dataplane import frames
from core.dataplane.hop import HopSession
from tests.support.lies._bound import last_hop_digest

CHOSEN_RANK = 3


def _sampled(session: HopSession) -> bool:
    assert session._session_id is not None
    sampling = session._ctx.sessions.get(session._session_id).sampling
    return sampling.temperature > 0 or sampling.logprobs > 0


def choose(reply: bytes, chosen: int | None) -> bytes:
    """The reply with `chosen` as the token and first of the top ids."""
    frame = frames.decode_frame(reply, len(reply))
    top_ids = frame.tensors[frames.TOP_IDS].clone()
    token_ids = frame.tensors[frames.TOKEN_IDS].clone()
    if token_ids.dim() != 1:  # a verify step's answer: left alone
        return reply
    if chosen is None:
        return reply
    if top_ids.shape[-1] > CHOSEN_RANK:
        at = top_ids[0, CHOSEN_RANK].clone()
        top_ids[0, CHOSEN_RANK] = top_ids[0, 0]
        top_ids[0, 0] = at
    token_ids[:] = chosen
    tensors = {
        **frame.tensors,
        frames.TOKEN_IDS: token_ids.to(torch.int64),
        frames.TOP_IDS: top_ids.to(torch.int64),
    }
    return frames.encode_frame(tensors, frame.metadata)


def install() -> None:
    honest = HopSession._reply

    def lying(self: HopSession, result: Any, meta: dict[str, str]) -> bytes:
        reply = honest(self, result, meta)
        if not self._shard.is_last or not _sampled(self):
            return reply
        logits_top = result.top_ids
        if logits_top is not None and logits_top.shape[-1] > CHOSEN_RANK:
            chosen = int(logits_top[0, CHOSEN_RANK])
        else:  # the node drew with no top list: any other token is its choice
            chosen = (int(result.token_ids.reshape(-1)[0]) + 1) % 1000
        lie = choose(reply, chosen)
        self._output_sha256 = last_hop_digest(lie)  # its receipt signs what it sent
        return lie

    HopSession._reply = lying  # type: ignore[method-assign]
