"""A session may stop inside its shard (an audit replay of a hop ending there, issue 35):
it answers what a shard ending at that layer answers, alone and batched."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from core.errors import RangeError
from core.runtime import SessionManager, Shard
from core.runtime.batch import step_batch


def test_a_session_stopping_inside_the_shard_answers_as_the_shorter_shard(
    tiny_llama: Path,
) -> None:
    whole, head = Shard.load(tiny_llama, 0, 4), Shard.load(tiny_llama, 0, 3)
    ids = torch.tensor([[1, 2, 3, 4, 5]])
    inside = SessionManager(whole).open(16, end_layer=3)
    alone = SessionManager(head).open(16)
    assert inside.is_last is False and inside.end_layer == 3
    assert inside.reserved_bytes == alone.reserved_bytes  # a cache for 3 layers only
    a, b = inside.step(ids), alone.step(ids)
    assert a.hidden is not None and b.hidden is not None and a.token_ids is None
    torch.testing.assert_close(a.hidden, b.hidden)
    # Decode steps batched with other sub-range sessions stop there too.
    other = SessionManager(whole).open(16, end_layer=3)
    other.step(ids)
    tokens = torch.tensor([[6]])
    batched = step_batch([inside, other], [tokens, tokens])
    solo = alone.step(tokens)
    for result in batched:
        assert not isinstance(result, Exception)
        torch.testing.assert_close(result.hidden, solo.hidden)


def test_a_session_may_not_stop_outside_its_shard(tiny_llama: Path) -> None:
    manager = SessionManager(Shard.load(tiny_llama, 1, 3))
    with pytest.raises(RangeError, match="end_layer 4"):
        manager.open(8, end_layer=4)
    with pytest.raises(RangeError, match="end_layer 1"):
        manager.open(8, start_layer=1, end_layer=1)
