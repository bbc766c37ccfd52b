"""Sampling at the gateway: penalties, ``logit_bias``, a grammar mask, a seeded draw.

Every sampled answer is drawn here (gateway/generation.py opens the last hop greedy
whenever the request samples), so a node never draws: the last hop is opened greedy
with ``logprobs`` 20 and
so returns, each step, the model's own 20 most likely tokens and their
log-probabilities. The route feeds back whatever token the client chooses
(the nodes' caches hold only what was fed), so the gateway can pick any of
those 20 itself: it adds ``logit_bias`` and the presence/frequency penalties,
masks what the grammar forbids, applies temperature and ``top_p``, and draws
with its own ``random.Random(seed)``, so a seed reproduces the answer for a
given route and recipe.

What this costs, said plainly: sampling here draws from the 20 most likely
tokens (an implicit ``top_k`` of 20; the wire carries no more), and a positive
``logit_bias`` on a token outside them lifts it from the 20th log-probability,
an upper bound of its own. When a grammar allows none of the 20, the gateway
takes the grammar's forced token, or the allowed token that best continues the
model's favourite (see :meth:`GrammarConstraint.fallback`); the answer stays
valid, and ``logprob`` for that step is the 20th's (an upper bound). Near
``max_tokens`` a grammar's answer is steered shut (the end, or a token made of
closing quotes and brackets, whenever the grammar allows one), so JSON cut short
by the budget still parses more often than not; it is then shorter than the
model would have made it.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from tracker_service.services.session_plan import GeneratedToken

WIRE_TOP_K = 20  # the most log-probs a last hop returns (docs/wire.md)
MAX_TOP_LOGPROBS = 20


class Constraint(Protocol):
    """What the sampler needs from a grammar (llguidance behind it)."""

    def allowed(self, token_ids: Sequence[int]) -> list[bool]: ...

    def fallback(self, preferred: Sequence[int]) -> int: ...

    def advance(self, token_id: int) -> None: ...

    def closer(self) -> int | None: ...


@dataclass(frozen=True)
class TokenLogprob:
    """One sampled token with the model's log-probability and its top alternatives."""

    token_id: int
    logprob: float
    top: tuple[tuple[int, float], ...]  # (token id, log-prob), most likely first


@dataclass(frozen=True)
class SamplerSettings:
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0  # 0: all of the wire's 20
    seed: int | None = None
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    logit_bias: Mapping[int, float] = field(default_factory=dict)
    top_logprobs: int = 0
    # Under a grammar, from this many tokens on the draw prefers tokens that close what is
    # open (a string, an array, an object) so the answer ends valid within max_tokens.
    closing_after: int | None = None


class GatewaySampler:
    """Chooses each next token from the last hop's top 20 (``Generation``'s ``pick``)."""

    def __init__(self, settings: SamplerSettings, constraint: Constraint | None = None) -> None:
        self._settings = settings
        self._constraint = constraint
        self._random = random.Random(settings.seed)  # None: seeded from the OS
        self._counts: Counter[int] = Counter()
        self.picked: list[TokenLogprob] = []

    def pick(self, step: GeneratedToken) -> int:
        ids = list(step.top_ids) or [step.token_id]
        logprobs = [float(v) for v in step.top_logprobs] or [0.0]
        floor = min(logprobs)
        scores = dict(zip(ids, logprobs, strict=True))
        s = self._settings
        for token, bias in s.logit_bias.items():
            scores[token] = scores.get(token, floor) + bias
        for token, count in self._counts.items():
            if token in scores:
                scores[token] -= s.presence_penalty + s.frequency_penalty * count
        candidates = [t for t in scores if scores[t] > -math.inf and s.logit_bias.get(t, 0) > -100]
        closing = None
        if self._constraint is not None:
            ok = self._constraint.allowed(candidates)
            candidates = [t for t, good in zip(candidates, ok, strict=True) if good]
            if s.closing_after is not None and len(self.picked) >= s.closing_after:
                closing = self._constraint.closer()
        if closing is not None:
            chosen = closing
        elif candidates:
            chosen = self._draw(candidates, scores)
        else:
            ranked = sorted(scores, key=lambda t: -scores[t])
            chosen = self._constraint.fallback(ranked) if self._constraint else ranked[0]
        if self._constraint is not None:
            self._constraint.advance(chosen)
        self._counts[chosen] += 1
        own = dict(zip(ids, logprobs, strict=True)).get(chosen, floor)
        top = tuple(zip(ids, logprobs, strict=True))[: s.top_logprobs]
        self.picked.append(TokenLogprob(chosen, own, top))
        return chosen

    def _draw(self, candidates: list[int], scores: Mapping[int, float]) -> int:
        s = self._settings
        ranked = sorted(candidates, key=lambda t: -scores[t])
        if s.top_k > 0:
            ranked = ranked[: s.top_k]
        if s.temperature == 0.0:
            return ranked[0]
        logits = [scores[t] / s.temperature for t in ranked]
        top = max(logits)
        weights = [math.exp(v - top) for v in logits]
        total = sum(weights)
        probs = [w / total for w in weights]
        if s.top_p < 1.0:  # keep a token while the mass before it is under top_p
            kept, mass = 0, 0.0
            while kept < len(probs) and (kept == 0 or mass < s.top_p):
                mass += probs[kept]
                kept += 1
            ranked, probs = ranked[:kept], probs[:kept]
        return self._random.choices(ranked, weights=probs, k=1)[0]
