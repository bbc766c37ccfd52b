"""Decoding through the KV cache equals one full forward, in every way it can be split."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from core.errors import PositionError
from core.runtime import SessionManager, Shard
from tests.core.runtime.conftest import reference_logits


def ids(length: int, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, 256, (1, length), generator=torch.Generator().manual_seed(seed))


def run_chunks(shards: list[Shard], tokens: torch.Tensor, chunks: list[int]) -> torch.Tensor:
    sessions = [SessionManager(s).open(64) for s in shards]
    out, at = [], 0
    for n in chunks:
        x = tokens[:, at : at + n]
        for session in sessions[:-1]:
            x = session.step(x).hidden
        logits = sessions[-1].step(x, return_logits=True).logits
        assert logits is not None
        out.append(logits)
        at += n
    assert [s.position for s in sessions] == [at] * len(sessions)
    return torch.cat(out, dim=1)


@pytest.mark.parametrize("chunks", [[8] + [1] * 12, [5, 3, 1, 7, 4], [1] * 20])
def test_prefill_then_steps_equals_full_forward(tiny_llama: Path, chunks: list[int]) -> None:
    tokens = ids(sum(chunks))
    shards = [Shard.load(tiny_llama, 0, 2), Shard.load(tiny_llama, 2, 4)]
    torch.testing.assert_close(
        run_chunks(shards, tokens, chunks),
        reference_logits(tiny_llama, tokens),
        rtol=1e-4,
        atol=1e-4,
    )


def test_incremental_qwen2_with_bias_equals_full_forward(tiny_qwen2: Path) -> None:
    tokens = ids(16, seed=3)
    shards = [Shard.load(tiny_qwen2, 0, 3), Shard.load(tiny_qwen2, 3, 4)]
    torch.testing.assert_close(
        run_chunks(shards, tokens, [6] + [1] * 10),
        reference_logits(tiny_qwen2, tokens),
        rtol=1e-4,
        atol=1e-4,
    )


def test_overlapping_hop_skips_layers_the_previous_hop_computed(tiny_llama: Path) -> None:
    """Hop A serves [0, 3), hop B serves [1, 4) but starts at layer 3."""
    tokens = ids(10, seed=5)
    a, b = Shard.load(tiny_llama, 0, 3), Shard.load(tiny_llama, 1, 4)
    sa = SessionManager(a).open(32)
    sb = SessionManager(b).open(32, start_layer=3)
    assert sb.reserved_bytes == b.kv_bytes_per_token(3) * 32
    assert b.kv_bytes_per_token(3) * 3 == b.kv_bytes_per_token()
    logits = sb.step(sa.step(tokens).hidden, return_logits=True).logits
    torch.testing.assert_close(logits, reference_logits(tiny_llama, tokens), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("compute", "kv", "tol"),
    [
        ("bfloat16", None, 0.02),
        ("float16", None, 0.003),
        ("float32", "bfloat16", 0.01),
        ("bfloat16", "float32", 0.02),
    ],
)
def test_half_precision_decoding_stays_close_to_float32(
    tiny_llama: Path, compute: str, kv: str | None, tol: float
) -> None:
    tokens = ids(12, seed=7)
    shards = [
        Shard.load(tiny_llama, 0, 2, compute_dtype=compute, kv_dtype=kv),
        Shard.load(tiny_llama, 2, 4, compute_dtype=compute, kv_dtype=kv),
    ]
    assert shards[0].kv_dtype == (shards[0].compute_dtype if kv is None else getattr(torch, kv))
    got = run_chunks(shards, tokens, [6] + [1] * 6)
    torch.testing.assert_close(got, reference_logits(tiny_llama, tokens), rtol=0, atol=tol)


def test_rewind_then_replay_gives_the_same_logits(tiny_llama: Path) -> None:
    shard = Shard.load(tiny_llama, 0, 4)
    session = SessionManager(shard).open(32)
    tokens = ids(10, seed=9)
    first = session.step(tokens, return_logits=True).logits
    session.rewind(6)
    assert session.position == 6
    again = session.step(tokens[:, 6:], return_logits=True).logits
    assert first is not None and again is not None
    torch.testing.assert_close(again, first[:, 6:])
    with pytest.raises(PositionError, match="positions \\[0, 10\\)"):
        session.rewind(11)
