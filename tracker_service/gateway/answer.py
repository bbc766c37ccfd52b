"""One request under way at the gateway: its choices, their text, and its closing.

:class:`Answer` is what ``Gateway.prepare`` returns: ``n`` :class:`Choice` objects,
each with its first token in hand, decoded into :class:`Piece` deltas (safe text
and the log-probs it came from). Closing an answer closes every hop's session,
writes the request's log record and charges the key's rate limit once.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tracker_service.gateway.api_keys import Caller, RateLimiter
from tracker_service.gateway.generation import Generation
from tracker_service.gateway.observability import GatewayMetrics, RequestRecord
from tracker_service.gateway.sampler import GatewaySampler, TokenLogprob
from tracker_service.gateway.text_stream import TextStream


@dataclass
class Piece:
    """Text safe to show, and the sampled tokens it came from (with their log-probs)."""

    text: str
    logprobs: list[TokenLogprob]


@dataclass
class Choice:
    """One choice under way (one route session): its first token is already in hand."""

    index: int
    generation: Generation
    sampler: GatewaySampler | None  # None: the last hop samples
    _tokens: AsyncGenerator[int, None]
    _first: int
    _text: TextStream
    _eos: frozenset[int]
    completion_tokens: int = 0
    finish_reason: str | None = None

    async def deltas(self) -> AsyncIterator[Piece]:
        """Text as it becomes safe to show; ``finish_reason`` is set when it ends."""
        token: int | None = self._first
        pending: list[TokenLogprob] = []
        while token is not None:
            self.completion_tokens += 1
            if token in self._eos:
                self.finish_reason = "stop"
                break
            if self.sampler is not None:
                pending.append(self.sampler.picked[self.completion_tokens - 1])
            delta = self._text.push(token)
            if delta:
                yield Piece(delta, pending)
                pending = []
            if self._text.stopped:
                self.finish_reason = "stop"
                break
            token = await anext(self._tokens, None)
        if self.finish_reason is None:
            self.finish_reason = "length"
        tail = self._text.finish()
        if tail or pending:
            yield Piece(tail, pending)

    async def pieces(self) -> list[Piece]:
        return [p async for p in self.deltas()]

    @property
    def stop_text(self) -> str | None:
        """The stop sequence that ended this choice, if one did (not eos or the limit)."""
        return self._text.matched

    async def aclose(self) -> None:
        if self.finish_reason is not None:
            # Ended on a stop (eos or stop text): close with receipts, so the hops are
            # credited; the generator is then only dropped.
            with contextlib.suppress(Exception):
                await self.generation.finish()
        with contextlib.suppress(Exception):
            await self._tokens.aclose()


@dataclass
class Answer:
    """One request under way: its choices (``n`` of them), decoded together."""

    id: str
    model: str
    created: int
    prompt_tokens: int
    max_tokens: int
    choices: list[Choice]
    record: RequestRecord
    caller: Caller
    functions: list[dict[str, Any]]  # offered tools (parse the answer for calls)
    token_text: Callable[[int], str]  # one token's text, for log-prob entries
    _closed: bool = field(default=False)
    # Set by the gateway: gives the priority slot back and charges a credited account.
    _on_close: Callable[[int], Awaitable[None]] | None = None

    @property
    def generation(self) -> Generation:
        return self.choices[0].generation

    @property
    def completion_tokens(self) -> int:
        return sum(c.completion_tokens for c in self.choices)

    @property
    def usage(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": self.generation.stats.cached_tokens},
        }

    async def close(self, limiter: RateLimiter, metrics: GatewayMetrics, outcome: str) -> None:
        """End every choice (closing every hop's session) and log the request once."""
        if self._closed:
            return
        self._closed = True
        for choice in self.choices:
            await choice.aclose()
        stats = self.generation.stats
        record = self.record
        record.outcome = outcome
        record.route = stats.route_text
        record.prompt_tokens = self.prompt_tokens
        record.completion_tokens = self.completion_tokens
        if stats.first_token_at is not None:
            record.first_token_s = stats.first_token_at - record.started
        record.elapsed_s = time.perf_counter() - record.started
        record.failovers = sum(c.generation.stats.failovers for c in self.choices)
        reasons = [r for c in self.choices for r in c.generation.stats.failover_reasons]
        record.failover_reasons = ",".join(reasons) or "-"
        record.stall_s = sum(c.generation.stats.stall_s for c in self.choices)
        record.split_ms = stats.per_decode_token_ms()  # the first choice's, as for ttft
        record.drafted = sum(c.generation.stats.drafted_tokens for c in self.choices)
        record.accepted = sum(c.generation.stats.accepted_tokens for c in self.choices)
        record.shape = stats.shape
        limiter.charge(self.caller, self.prompt_tokens + self.completion_tokens)
        record.finish(metrics)
        if self._on_close is not None:
            await self._on_close(self.prompt_tokens + self.completion_tokens)
