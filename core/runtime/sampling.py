"""Token sampling on the last shard: greedy, temperature, top-k, top-p.

Randomness comes only from the session's ``torch.Generator``, so a seeded
session reproduces its tokens exactly. Log-probs reported to the client are the
model's own distribution (log-softmax of the raw logits), not the filtered one.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from core.errors import ConfigError, RuntimeInputError


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 0.0  # 0 => greedy
    top_k: int = 0  # 0 => no top-k filter
    top_p: float = 1.0  # 1 => no nucleus filter
    seed: int | None = None
    logprobs: int = 0  # how many top log-probs to return per token

    def __post_init__(self) -> None:
        problems = []
        if not self.temperature >= 0.0:
            problems.append(f"temperature {self.temperature} must be >= 0")
        if self.top_k < 0:
            problems.append(f"top_k {self.top_k} must be >= 0")
        if not 0.0 < self.top_p <= 1.0:
            problems.append(f"top_p {self.top_p} must be in (0, 1]")
        if not 0 <= self.logprobs <= 20:
            problems.append(f"logprobs {self.logprobs} must be in [0, 20]")
        if problems:
            raise ConfigError(
                "bad sampling parameters: " + "; ".join(problems), reason="bad-sampling"
            )

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0


def filter_logits(logits: torch.Tensor, params: SamplingParams) -> torch.Tensor:
    """Temperature-scaled logits (B, V) with tokens outside top-k / top-p set to -inf."""
    logits = logits / params.temperature
    vocab = logits.shape[-1]
    if 0 < params.top_k < vocab:
        kth = torch.topk(logits, params.top_k, dim=-1).values[..., -1:]  # (B, 1)
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if params.top_p < 1.0:
        sorted_logits, order = torch.sort(logits, dim=-1, descending=True)  # (B, V)
        probs = sorted_logits.softmax(dim=-1)
        # drop a token when the mass before it already reaches top_p (the first always stays)
        drop_sorted = (probs.cumsum(dim=-1) - probs) >= params.top_p
        drop = drop_sorted.scatter(-1, order, drop_sorted)
        logits = logits.masked_fill(drop, float("-inf"))
    return logits


def sample(
    logits: torch.Tensor,  # (B, V) float32, last position
    params: SamplingParams,
    generator: torch.Generator | None,
) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
    """(token_ids (B,), top_ids (B, k) | None, top_logprobs (B, k) | None)."""
    if params.greedy:
        token_ids = logits.argmax(dim=-1)
        # argmax lands on a NaN or +inf if there is one: checking the chosen logits is
        # enough, and far cheaper than scanning the vocabulary every step
        if not bool(torch.isfinite(logits.gather(-1, token_ids[:, None])).all()):
            raise RuntimeInputError(
                "the model produced NaN/inf logits (overflow in the compute dtype?)",
                reason="non-finite-logits",
            )
    else:
        probs = filter_logits(logits, params).softmax(dim=-1)
        if not bool(torch.isfinite(probs.sum(dim=-1)).all()):
            raise RuntimeInputError(
                "the model produced NaN/inf logits (overflow in the compute dtype?)",
                reason="non-finite-logits",
            )
        token_ids = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
    if params.logprobs == 0:
        return token_ids, None, None
    logprobs = logits.log_softmax(dim=-1)
    top = torch.topk(logprobs, min(params.logprobs, logits.shape[-1]), dim=-1)
    return token_ids, top.indices, top.values
