"""One log line per gateway request, and the gateway's Prometheus metrics."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Histogram

log = logging.getLogger("tracker_service.gateway.requests")


class GatewayMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "meshnet_gateway_requests",
            "Gateway requests by endpoint and outcome (ok or the error code)",
            ["endpoint", "outcome"],
            registry=registry,
        )
        self.tokens = Counter(
            "meshnet_gateway_tokens",
            "Tokens through the gateway, prompt or completion",
            ["kind"],
            registry=registry,
        )
        self.first_token = Histogram(
            "meshnet_gateway_time_to_first_token_seconds",
            "From the request to the first generated token",
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30),
            registry=registry,
        )
        self.failovers = Counter(
            "meshnet_gateway_failovers",
            "Hops replaced mid-generation (the prefix replayed on a new route)",
            registry=registry,
        )


@dataclass
class RequestRecord:
    endpoint: str
    model: str
    caller: str
    stream: bool
    outcome: str = "ok"
    route: str = "-"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    first_token_s: float | None = None
    elapsed_s: float = 0.0
    failovers: int = 0
    # why each failover happened, comma-joined reason codes (node-left, timeout, …)
    failover_reasons: str = "-"
    stall_s: float = 0.0
    # per decode token: ms inside the route's steps, ms between them (the gateway's share)
    split_ms: tuple[float, float] | None = None
    # speculative decoding: tokens drafted, and those the route kept (gateway/drafting.py)
    drafted: int = 0
    accepted: int = 0
    shape: str = "-"  # the last route's: "chain" or "star" (docs/wire.md#chained-hops)
    started: float = field(default_factory=time.perf_counter)  # the request's arrival

    @property
    def decode_rate(self) -> float:
        decode_s = self.elapsed_s - (self.first_token_s or 0.0)
        if self.completion_tokens < 2 or decode_s <= 0:
            return 0.0
        return (self.completion_tokens - 1) / decode_s

    def finish(self, metrics: GatewayMetrics) -> None:
        metrics.requests.labels(self.endpoint, self.outcome).inc()
        metrics.tokens.labels("prompt").inc(self.prompt_tokens)
        metrics.tokens.labels("completion").inc(self.completion_tokens)
        if self.first_token_s is not None:
            metrics.first_token.observe(self.first_token_s)
        if self.failovers:
            metrics.failovers.inc(self.failovers)
        ttft = f"{self.first_token_s * 1000:.0f}ms" if self.first_token_s is not None else "-"
        in_route, between = (
            (f"{self.split_ms[0]:.1f}ms", f"{self.split_ms[1]:.2f}ms")
            if self.split_ms
            else ("-", "-")
        )
        log.info(
            "%s model=%s caller=%s stream=%s outcome=%s route=%s prompt_tokens=%d "
            "completion_tokens=%d ttft=%s tokens_per_s=%.1f failovers=%d "
            "failover_reasons=%s stall=%.2fs "
            "in_route_per_token=%s between_steps_per_token=%s drafted=%d accepted=%d "
            "shape=%s",
            self.endpoint,
            self.model,
            self.caller,
            self.stream,
            self.outcome,
            self.route,
            self.prompt_tokens,
            self.completion_tokens,
            ttft,
            self.decode_rate,
            self.failovers,
            self.failover_reasons,
            self.stall_s,
            in_route,
            between,
            self.drafted,
            self.accepted,
            self.shape,
            extra={
                "endpoint": self.endpoint,
                "model": self.model,
                "outcome": self.outcome,
                "route": self.route,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "first_token_s": self.first_token_s,
                "failovers": self.failovers,
                "failover_reasons": self.failover_reasons,
                "split_ms": self.split_ms,
                "drafted": self.drafted,
                "accepted": self.accepted,
                "shape": self.shape,
            },
        )
