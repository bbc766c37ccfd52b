"""Sampling on the last shard: greedy, seeded randomness, top-k/top-p support, log-probs."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from core.errors import ConfigError, RuntimeInputError
from core.runtime import SamplingParams, SessionManager, Shard
from core.runtime.sampling import filter_logits, sample


def test_greedy_picks_the_argmax() -> None:
    logits = torch.tensor([[0.1, 2.0, -1.0, 1.9], [3.0, 0.0, 0.0, 0.0]])
    token_ids, _, _ = sample(logits, SamplingParams(), None)
    assert token_ids.tolist() == [1, 0]


def test_logprobs_are_log_softmax_of_the_raw_logits_in_descending_order() -> None:
    logits = torch.randn(2, 50, generator=torch.Generator().manual_seed(0))
    params = SamplingParams(temperature=0.7, top_k=5, logprobs=4, seed=1)
    _, top_ids, top_lp = sample(logits, params, torch.Generator().manual_seed(1))
    assert top_ids is not None and top_lp is not None
    expected = torch.log_softmax(logits, dim=-1).topk(4, dim=-1)
    assert torch.equal(top_ids, expected.indices)
    torch.testing.assert_close(top_lp, expected.values)


def test_top_k_restricts_support_to_the_k_largest() -> None:
    logits = torch.arange(20, dtype=torch.float32).unsqueeze(0)  # token 19 largest
    gen = torch.Generator().manual_seed(0)
    seen = {
        int(sample(logits, SamplingParams(temperature=5.0, top_k=3), gen)[0]) for _ in range(300)
    }
    assert seen == {17, 18, 19}


def test_top_p_keeps_the_smallest_set_reaching_p() -> None:
    probs = torch.tensor([[0.5, 0.3, 0.15, 0.05]])
    kept = torch.isfinite(filter_logits(probs.log(), SamplingParams(temperature=1.0, top_p=0.75)))
    assert kept.tolist() == [[True, True, False, False]]
    kept = torch.isfinite(filter_logits(probs.log(), SamplingParams(temperature=1.0, top_p=0.1)))
    assert kept.tolist() == [[True, False, False, False]]  # the top token always stays
    gen = torch.Generator().manual_seed(0)
    seen = {
        int(sample(probs.log(), SamplingParams(temperature=1.0, top_p=0.75), gen)[0])
        for _ in range(300)
    }
    assert seen == {0, 1}


@pytest.mark.parametrize(
    "bad", [dict(temperature=-1.0), dict(top_p=0.0), dict(top_k=-2), dict(logprobs=99)]
)
def test_bad_sampling_parameters_are_refused_with_the_value(bad: dict[str, float]) -> None:
    with pytest.raises(ConfigError, match=str(next(iter(bad.values())))):
        SamplingParams(**bad)  # type: ignore[arg-type]


def _sampled_tokens(shard: Shard, params: SamplingParams, n: int = 12) -> list[int]:
    session = SessionManager(shard).open(32, sampling=params)
    x = torch.tensor([[1, 2, 3]])
    out = []
    for _ in range(n):
        token_ids = session.step(x).token_ids
        assert token_ids is not None
        out.append(int(token_ids[0]))
        x = token_ids.view(1, 1)
    return out


def test_seeded_session_sampling_is_reproducible_and_seed_dependent(tiny_llama: Path) -> None:
    shard = Shard.load(tiny_llama, 0, 4)
    a = _sampled_tokens(shard, SamplingParams(temperature=1.5, seed=42))
    b = _sampled_tokens(shard, SamplingParams(temperature=1.5, seed=42))
    c = _sampled_tokens(shard, SamplingParams(temperature=1.5, seed=43))
    assert a == b
    assert a != c


def test_last_shard_returns_greedy_token_of_the_last_position(tiny_llama: Path) -> None:
    shard = Shard.load(tiny_llama, 0, 4)
    session = SessionManager(shard).open(16, sampling=SamplingParams(logprobs=3))
    result = session.step(torch.tensor([[5, 6, 7, 8]]), return_logits=True)
    assert result.logits is not None and result.token_ids is not None
    assert result.token_ids.tolist() == [int(result.logits[0, -1].argmax())]
    assert result.top_ids is not None and result.top_ids[0, 0] == result.token_ids[0]
    assert result.hidden is None


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_non_finite_logits_are_a_typed_error_not_a_crash(temperature: float) -> None:
    logits = torch.zeros(1, 8)
    logits[0, 3] = float("nan")
    with pytest.raises(RuntimeInputError, match="NaN/inf logits"):
        sample(logits, SamplingParams(temperature=temperature), torch.Generator())
