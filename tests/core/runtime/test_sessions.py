"""Session lifecycle: reservation, refusals with numbers, expiry, bad input, threads."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import torch

from core.errors import (
    CapacityError,
    PositionError,
    RangeError,
    RuntimeInputError,
    SessionError,
    ShapeError,
)
from core.runtime import SessionManager, Shard


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def middle(tiny_llama: Path) -> Shard:
    return Shard.load(tiny_llama, 1, 3)


@pytest.fixture(scope="module")
def whole(tiny_llama: Path) -> Shard:
    return Shard.load(tiny_llama, 0, 4)


def test_open_reserves_the_whole_cache_and_close_frees_it(middle: Shard) -> None:
    manager = SessionManager(middle)
    per_token = middle.kv_bytes_per_token()
    assert per_token == 2 * 2 * 2 * 16 * 4  # layers * (k, v) * kv heads * head_dim * fp32
    session = manager.open(100, batch_size=2)
    assert manager.reserved_bytes == per_token * 100 * 2 == session.reserved_bytes
    assert manager.open_count == 1
    manager.close(session.session_id)
    assert manager.reserved_bytes == 0 and manager.open_count == 0
    with pytest.raises(SessionError):
        manager.get(session.session_id)
    with pytest.raises(SessionError, match="closed"):
        session.step(torch.zeros(2, 1, 64))


def test_open_beyond_budget_is_refused_with_the_numbers(middle: Shard) -> None:
    per_token = middle.kv_bytes_per_token()
    manager = SessionManager(middle, kv_budget_bytes=per_token * 150)
    manager.open(100)
    with pytest.raises(CapacityError) as info:
        manager.open(100)
    assert info.value.reason == "no-capacity"
    assert "needs 0.0488 MB" in str(info.value)  # 100 positions * 512 B
    assert "0.0244 MB free of the 0.0732 MB budget" in str(info.value)
    assert manager.open_count == 1
    manager.open(50)  # what is left still fits
    assert manager.reserved_bytes == per_token * 150


def test_stepping_past_max_length_raises_position_error_and_session_stays_usable(
    middle: Shard,
) -> None:
    session = SessionManager(middle).open(8)
    session.step(torch.randn(1, 6, 64))
    with pytest.raises(PositionError, match="position 6 of max_length 8; 3 more"):
        session.step(torch.randn(1, 3, 64))
    assert session.position == 6
    session.step(torch.randn(1, 2, 64))
    assert session.position == 8


@pytest.mark.parametrize(
    ("bad", "error", "words"),
    [
        (torch.randn(1, 3, 65), ShapeError, "hidden 64"),
        (torch.randn(2, 3, 64), ShapeError, "batch 1"),
        (torch.randn(3, 64), ShapeError, "got (3, 64)"),
        (torch.zeros(1, 0, 64), ShapeError, "0 positions"),
        (torch.ones(1, 2, 64, dtype=torch.int64), ShapeError, "floating point"),
        (torch.full((1, 2, 64), float("nan")), RuntimeInputError, "NaN"),
    ],
)
def test_bad_hidden_input_is_refused_and_the_session_stays_usable(
    middle: Shard, bad: torch.Tensor, error: type[Exception], words: str
) -> None:
    session = SessionManager(middle).open(16)
    session.step(torch.randn(1, 2, 64))
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        session.step(bad)
    assert session.position == 2
    out = session.step(torch.randn(1, 1, 64)).hidden
    assert out is not None and out.shape == (1, 1, 64)


def test_rejected_step_leaves_the_cache_as_if_it_never_happened(whole: Shard) -> None:
    tokens = torch.tensor([[3, 1, 4, 1, 5]])
    clean = SessionManager(whole).open(16)
    clean.step(tokens[:, :3])
    expected = clean.step(tokens[:, 3:], return_logits=True).logits
    session = SessionManager(whole).open(16)
    session.step(tokens[:, :3])
    with pytest.raises(RuntimeInputError, match=r"\[0, 256\), got \[7, 999\]"):
        session.step(torch.tensor([[7, 999]]))
    torch.testing.assert_close(session.step(tokens[:, 3:], return_logits=True).logits, expected)


def test_open_refuses_bad_arguments_with_numbers(middle: Shard) -> None:
    manager = SessionManager(middle)
    with pytest.raises(PositionError, match="max_length 513 must be in"):
        manager.open(513)
    with pytest.raises(RangeError, match=r"start_layer 3 is outside this shard's layers \[1,"):
        manager.open(8, start_layer=3)
    manager.open(8, session_id="s1")
    with pytest.raises(SessionError, match="already open"):
        manager.open(8, session_id="s1")
    assert manager.open_count == 1


def test_idle_sessions_expire_by_the_injected_clock(middle: Shard) -> None:
    clock = FakeClock()
    manager = SessionManager(middle, idle_timeout_s=60, clock=clock)
    old = manager.open(8)
    clock.now += 30
    fresh = manager.open(8)
    clock.now += 31  # old idle 61 s, fresh idle 31 s
    fresh.step(torch.randn(1, 1, 64))
    assert manager.expire_idle() == [old.session_id]
    assert manager.get(fresh.session_id) is fresh
    assert manager.reserved_bytes == fresh.reserved_bytes
    clock.now += 61
    with pytest.raises(SessionError, match="expired after 61 s idle"):
        manager.get(fresh.session_id)
    assert manager.open_count == 0 and manager.reserved_bytes == 0


def test_expired_sessions_free_budget_for_a_new_open(middle: Shard) -> None:
    clock = FakeClock()
    manager = SessionManager(
        middle, kv_budget_bytes=middle.kv_bytes_per_token() * 10, idle_timeout_s=5, clock=clock
    )
    manager.open(10)
    with pytest.raises(CapacityError):
        manager.open(10)
    clock.now += 6
    assert manager.open(10).max_length == 10


def test_concurrent_open_close_keeps_the_books_balanced(middle: Shard) -> None:
    manager = SessionManager(middle, kv_budget_bytes=middle.kv_bytes_per_token() * 8 * 5)
    refused: list[int] = []

    def worker() -> None:
        for _ in range(30):
            try:
                session = manager.open(8)
            except CapacityError:
                refused.append(1)
                continue
            session.step(torch.randn(1, 1, 64))
            manager.close(session.session_id)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert manager.open_count == 0 and manager.reserved_bytes == 0


def test_steps_write_into_the_cache_reserved_at_open(whole: Shard) -> None:
    session = SessionManager(whole).open(40)
    cache = session.kv_cache
    address = cache.data_ptr()
    assert cache.numel() * cache.element_size() == session.reserved_bytes
    x = torch.tensor([[1, 2, 3, 4]])
    for _ in range(20):
        token_ids = session.step(x).token_ids
        assert token_ids is not None
        x = token_ids.view(1, 1)
    assert session.kv_cache.data_ptr() == address and session.position == 23
    assert bool(cache[:, :, :, :23].abs().sum(dim=-1).gt(0).all())  # written in place
    assert bool(cache[:, :, :, 23:].eq(0).all())  # the rest untouched
