"""The last hop's rule for drafted tokens (core/runtime/speculation.py): greedy keeps the
drafts plain greedy decoding would produce; sampling keeps them so that every token is
distributed exactly as plain sampling's."""

from __future__ import annotations

import pytest
import torch

from core.runtime.sampling import SamplingParams
from core.runtime.speculation import accept_draft

LOGITS = torch.tensor(
    [
        [2.0, 1.0, 0.5, -1.0],  # where draft[0] stands
        [0.0, 3.0, 0.0, 0.0],  # where draft[1] stands
        [1.0, 1.0, 1.0, 1.0],  # after the draft
    ]
)


def test_greedy_keeps_drafts_while_they_are_the_argmax_then_gives_the_argmax() -> None:
    greedy = SamplingParams()
    assert accept_draft(LOGITS, [0, 1], greedy, None) == [0, 1, 0]  # all kept, then after
    assert accept_draft(LOGITS, [0, 2], greedy, None) == [0, 1]  # the second replaced
    assert accept_draft(LOGITS, [3, 1], greedy, None) == [0]
    with pytest.raises(ValueError):
        accept_draft(LOGITS, [0], greedy, None)  # 1 draft needs 2 rows


def test_sampled_tokens_follow_the_models_distribution_whatever_was_drafted() -> None:
    """Draw many times with a draft the model mostly disagrees with: the first token's
    frequencies match softmax(logits / T) within sampling noise (seeded: no flakes)."""
    params = SamplingParams(temperature=0.8, seed=5)
    generator = torch.Generator().manual_seed(5)
    want = (LOGITS[0] / 0.8).softmax(dim=-1)
    draws = 10_000
    for draft in ([2, 1], [0, 1]):
        counts = torch.zeros(4)
        kept_whole = 0
        for _ in range(draws):
            tokens = accept_draft(LOGITS, draft, params, generator)
            counts[tokens[0]] += 1
            kept_whole += len(tokens) == 3
        assert torch.allclose(counts / draws, want, atol=0.02), (draft, counts / draws, want)
        # the whole draft is kept as often as the model would have produced it
        second = (LOGITS[1] / 0.8).softmax(dim=-1)[draft[1]]
        assert kept_whole / draws == pytest.approx(float(want[draft[0]] * second), abs=0.02)


def test_top_k_never_yields_a_token_outside_it() -> None:
    params = SamplingParams(temperature=1.0, top_k=2, seed=1)
    generator = torch.Generator().manual_seed(1)
    seen = {accept_draft(LOGITS, [3, 1], params, generator)[0] for _ in range(500)}
    assert seen <= {0, 1}  # the draft 3 is outside the top 2: never kept
