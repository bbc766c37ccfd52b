"""Every family against transformers on a tiny random model: logits, 32 greedy tokens,
cached decode, a two-shard split and batched decode."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from core.runtime import SessionManager, Shard, generate_local
from core.runtime.batch import step_batch
from tests.core.runtime.chain import logits_through
from tests.core.runtime.conftest import reference_logits, reference_model
from tests.core.runtime.family_models import FAMILY_MODELS, build_family_model

TOL = 1e-4  # fp32 tolerance, as test_conformance
_BUILT: dict[str, Path] = {}


@pytest.fixture(params=FAMILY_MODELS)
def family(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    name = str(request.param)
    if name not in _BUILT:
        _BUILT[name] = build_family_model(tmp_path_factory.mktemp(name), name)
    return _BUILT[name]


def prompt(batch: int = 1, length: int = 40, seed: int = 3) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (batch, length), generator=g)


def test_family_logits_match_transformers(family: Path) -> None:
    ids = prompt(batch=2)  # 40 positions: past every window of 8 and llama3's 32
    ours = logits_through([Shard.load(family, 0, 4)], ids)
    torch.testing.assert_close(ours, reference_logits(family, ids), rtol=TOL, atol=TOL)


def test_family_greedy_tokens_equal_transformers_over_32_steps(family: Path) -> None:
    start = prompt(length=8, seed=5)[0].tolist()
    ours = list(generate_local([Shard.load(family, 0, 4)], start, 32))
    ids = torch.tensor([start])
    model = reference_model(family)
    with torch.inference_mode():  # the reference recomputes the whole prefix every step
        for _ in range(32):
            nxt = model(ids).logits[0, -1].argmax()
            ids = torch.cat((ids, nxt.view(1, 1)), dim=1)
    assert ours == ids[0, 8:].tolist()


def test_family_cached_decode_equals_the_full_forward(family: Path) -> None:
    ids = prompt(length=24, seed=7)
    shard = Shard.load(family, 0, 4)
    full = logits_through([shard], ids)
    session = SessionManager(shard).open(32)
    prefill = session.step(ids[:, :6], return_logits=True).logits
    steps = [session.step(ids[:, t : t + 1], return_logits=True).logits for t in range(6, 24)]
    cached = torch.cat([prefill, *steps], dim=1)  # type: ignore[list-item]
    torch.testing.assert_close(cached, full, rtol=TOL, atol=TOL)
    torch.testing.assert_close(cached, reference_logits(family, ids), rtol=TOL, atol=TOL)


def test_family_split_across_two_shards_equals_one(family: Path) -> None:
    ids = prompt(batch=2, seed=9)
    one = logits_through([Shard.load(family, 0, 4)], ids)
    two = logits_through([Shard.load(family, 0, 2), Shard.load(family, 2, 4)], ids)
    torch.testing.assert_close(two, one, rtol=1e-5, atol=1e-5)


def test_family_batched_decode_equals_each_sessions_solo_steps(family: Path) -> None:
    shard = Shard.load(family, 0, 4)
    manager = SessionManager(shard)
    starts = [prompt(length=n, seed=n)[0].tolist() for n in (3, 11, 17)]  # windows crossed
    solo = [list(generate_local([shard], s, 8)) for s in starts]
    sessions = [manager.open(32) for _ in starts]
    tokens: list[list[int]] = []
    for session, start in zip(sessions, starts, strict=True):
        out = session.step(torch.tensor([start])).token_ids
        assert out is not None
        tokens.append([int(out[0])])
    for _ in range(7):
        outcomes = step_batch(sessions, [torch.tensor([[t[-1]]]) for t in tokens])
        for toks, outcome in zip(tokens, outcomes, strict=True):
            assert not isinstance(outcome, Exception), outcome
            assert outcome.token_ids is not None
            toks.append(int(outcome.token_ids[0]))
    assert tokens == solo
