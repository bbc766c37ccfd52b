"""Quality of a recipe measured, not assumed: perplexity and top-1 agreement.

A quantized recipe is only worth routing if it says nearly what the dense one
says. These two figures compare a chain of shards against another chain on the
same tokens: perplexity of a fixed text (teacher-forced, next-token loss) and
the share of fixed prompts whose greedy next tokens agree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from core.runtime.generate import check_chain
from core.runtime.sessions import SessionManager
from core.runtime.shard import Shard


def chain_logits(shards: Sequence[Shard], ids: Sequence[int], chunk: int = 256) -> torch.Tensor:
    """Logits (T, V) float32 of every position of ``ids`` through the chain, prefilled in
    chunks (the same path a route's prefill takes)."""
    check_chain(shards)
    sessions = [SessionManager(s).open(len(ids)) for s in shards]
    out: list[torch.Tensor] = []
    try:
        for part in torch.tensor([list(ids)], dtype=torch.int64).split(chunk, dim=1):
            x = part
            for session in sessions[:-1]:
                hidden = session.step(x).hidden
                assert hidden is not None
                x = hidden
            logits = sessions[-1].step(x, return_logits=True).logits
            assert logits is not None
            out.append(logits[0])
    finally:
        for session in sessions:
            session.close()
    return torch.cat(out)  # (T, V)


def perplexity(shards: Sequence[Shard], ids: Sequence[int]) -> float:
    """exp(mean next-token cross-entropy) of ids[1:] given their prefixes."""
    logits = chain_logits(shards, ids)
    target = torch.tensor(list(ids[1:]), dtype=torch.int64)
    return math.exp(float(F.cross_entropy(logits[:-1], target)))


def top1_agreement(
    reference: Sequence[Shard], candidate: Sequence[Shard], prompts: Sequence[Sequence[int]]
) -> float:
    """Share of positions (every prompt token's next-token prediction) where the two
    chains' argmax agree, teacher-forced on the same tokens."""
    agree = total = 0
    for ids in prompts:
        a = chain_logits(reference, ids).argmax(-1)
        b = chain_logits(candidate, ids).argmax(-1)
        agree += int((a == b).sum())
        total += a.numel()
    return agree / total
