"""The plan a route session runs: its hops, its signed ticket, the last hop's sampling.

The route planner makes a :class:`RoutePlan`, ``POST /api/v1/routes`` returns it as
JSON (:meth:`RoutePlan.to_json`), and a route session
(:mod:`tracker_service.services.route_session`) dials its hops; a client outside the tracker
reads it back with :meth:`RoutePlan.from_json`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tracker_service.domain.tickets import TicketHop
from tracker_service.domain.wire import b64decode_exact, b64encode

SESSION_PATH = "/v1/session"

# (hop, seconds from sending a decode or verify step to the hop's reply)
StepTimer = Callable[["PlannedHop", float], None]


@dataclass(frozen=True)
class PlannedHop:
    """One hop of a planned route: what to dial and which key signs its receipt."""

    node_id: str
    start: int
    end: int
    effective_start: int
    endpoint: str  # wss://host:port as registered
    public_key: bytes
    # SHA-256 hex of the node's certificate key, which the node signed (docs/wire.md#tls);
    # "" for a node registered without one (only routed by a --allow-plaintext-nodes tracker).
    tls_pin: str = ""

    @property
    def session_url(self) -> str:
        return self.endpoint.rstrip("/") + SESSION_PATH

    @property
    def ticket_hop(self) -> TicketHop:
        return TicketHop(self.node_id, self.start, self.end, self.effective_start)


@dataclass(frozen=True)
class RoutePlan:
    """A route and its signed ticket: everything a client needs to run a session."""

    route_session_id: str
    epoch: int
    expires_at: float
    fingerprint: tuple[str, str]
    layer_count: int
    hops: tuple[PlannedHop, ...]
    signed_ticket: dict[str, Any]
    # The tracker's own sessions report each hop's decode step time here (the speed
    # route formation weighs: services/speed_meter.py); never part of the JSON form.
    on_step: StepTimer | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_ticket(
        cls,
        signed: dict[str, Any],
        *,
        fingerprint: tuple[str, str],
        layer_count: int,
        hops: tuple[PlannedHop, ...],
    ) -> RoutePlan:
        """The plan of a freshly signed ticket (``issue_ticket``'s answer) over ``hops``."""
        ticket = signed["ticket"]
        return cls(
            route_session_id=ticket["route_session_id"],
            epoch=ticket["epoch"],
            expires_at=ticket["expires_at"],
            fingerprint=fingerprint,
            layer_count=layer_count,
            hops=hops,
            signed_ticket=signed,
        )

    @property
    def chain_offered(self) -> bool:
        """The ticket names every hop's successor: the route may run as a chain
        (docs/wire.md#chained-hops)."""
        hops = self.signed_ticket.get("ticket", {}).get("hops", [])
        return len(hops) > 1 and all(isinstance(h.get("next"), dict) for h in hops[:-1])

    def to_json(self) -> dict[str, Any]:
        return {
            "route_session_id": self.route_session_id,
            "epoch": self.epoch,
            "expires_at": self.expires_at,
            "fingerprint": {
                "model_artifact_digest": self.fingerprint[0],
                "runtime_recipe_digest": self.fingerprint[1],
            },
            "layer_count": self.layer_count,
            "hops": [
                {
                    "node_id": h.node_id,
                    "start": h.start,
                    "end": h.end,
                    "effective_start": h.effective_start,
                    "endpoint": h.endpoint,
                    "session_url": h.session_url,
                    "public_key": b64encode(h.public_key),
                    "tls_pin": h.tls_pin,
                }
                for h in self.hops
            ],
            "ticket": self.signed_ticket,
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> RoutePlan:
        """The plan as ``POST /api/v1/routes`` returns it (for clients outside the tracker)."""
        fingerprint = raw["fingerprint"]
        return cls(
            route_session_id=str(raw["route_session_id"]),
            epoch=int(raw["epoch"]),
            expires_at=float(raw["expires_at"]),
            fingerprint=(
                str(fingerprint["model_artifact_digest"]),
                str(fingerprint["runtime_recipe_digest"]),
            ),
            layer_count=int(raw["layer_count"]),
            hops=tuple(
                PlannedHop(
                    node_id=str(h["node_id"]),
                    start=int(h["start"]),
                    end=int(h["end"]),
                    effective_start=int(h["effective_start"]),
                    endpoint=str(h["endpoint"]),
                    public_key=b64decode_exact(str(h["public_key"]), 32, "hop public key"),
                    tls_pin=str(h.get("tls_pin") or ""),
                )
                for h in raw["hops"]
            ),
            signed_ticket=dict(raw["ticket"]),
        )


@dataclass(frozen=True)
class Sampling:
    """The last hop's sampling settings (greedy by default)."""

    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 1.0
    seed: int | None = None
    logprobs: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "top_k": self.top_k,
            "top_p": self.top_p,
            "seed": self.seed,
            "logprobs": self.logprobs,
        }


@dataclass(frozen=True)
class GeneratedToken:
    token_id: int
    top_ids: list[int]
    top_logprobs: list[float]
    position: int  # cache positions before the step that produced it
    compute_ms: tuple[float | None, ...]  # per hop, as the nodes reported
    # positions of the step every hop took from its prefix cache instead of computing
    # (the least any hop said; 0 on a decode step): usage's cached prompt tokens
    cached: int = 0
