"""The last hop's half of speculative decoding: which drafted tokens to keep.

A verify step carries the next token and `k` drafted ones (docs/wire.md#speculative-steps);
its last `k + 1` positions' logits say what the model would have produced at each
drafted place and after the last. The drafter (the gateway's prompt lookup) proposes
each token with certainty, so speculative sampling reduces to: keep draft ``d`` with
probability ``p(d)``; at the first draft not kept, draw from ``p`` with ``d`` removed;
after a fully kept draft, draw one more token from the last position. Every token so
produced is distributed exactly as plain sampling's (Leviathan et al. 2023, with a
one-hot draft distribution). Under greedy sampling ``p`` is the argmax's point mass, so
a draft is kept while it equals the argmax and the first mismatch is replaced by it:
the tokens plain greedy decoding gives.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from core.errors import RuntimeInputError
from core.runtime.sampling import SamplingParams, filter_logits


def accept_draft(
    logits: torch.Tensor,  # (k + 1, V): the step's last k + 1 positions
    draft: Sequence[int],
    params: SamplingParams,
    generator: torch.Generator | None,
) -> list[int]:
    """The drafts kept, then the model's own next token: 1 to k + 1 tokens."""
    if logits.shape[0] != len(draft) + 1:
        raise ValueError(f"{len(draft)} drafted tokens need {len(draft) + 1} rows of logits")
    if not bool(torch.isfinite(logits.max(dim=-1).values).all()):
        raise RuntimeInputError(
            "the model produced NaN/inf logits (overflow in the compute dtype?)",
            reason="non-finite-logits",
        )
    if params.greedy:
        best = logits.argmax(dim=-1).tolist()
        kept: list[int] = []
        for proposed, wanted in zip(draft, best, strict=False):
            if proposed != wanted:
                break
            kept.append(proposed)
        return [*kept, int(best[len(kept)])]
    probs = filter_logits(logits.float(), params).softmax(dim=-1)  # (k + 1, V)
    device = probs.device
    for i, proposed in enumerate(draft):
        chance = float(probs[i, proposed])
        if float(torch.rand((), generator=generator, device=device)) < chance:
            continue
        rest = probs[i].clone()
        rest[proposed] = 0.0  # the draft was not kept: draw among the others
        token = torch.multinomial(rest / rest.sum(), 1, generator=generator)
        return [*draft[:i], int(token)]
    bonus = torch.multinomial(probs[len(draft)], 1, generator=generator)
    return [*draft, int(bonus)]
