"""Logits of a prompt through shards chained in order, as a route's hops compute them."""

from __future__ import annotations

import torch

from core.runtime import SessionManager, Shard


def logits_through(shards: list[Shard], ids: torch.Tensor, capacity: int = 64) -> torch.Tensor:
    """Each shard's session steps the previous one's hidden states; the last gives logits."""
    sessions = [SessionManager(s).open(capacity, batch_size=ids.shape[0]) for s in shards]
    x = ids
    for session in sessions[:-1]:
        x = session.step(x).hidden  # type: ignore[assignment]
    logits = sessions[-1].step(x, return_logits=True).logits
    assert logits is not None
    return logits
