"""Route tickets: the tracker's signed permission for one route session.

A node serves no session without one. The ticket names every hop of the route;
this node admits a session only if the tracker's signature holds, the ticket is
not expired, and one hop names this node with exactly this node's shard range
and recipe fingerprint. The hop's ``effective_start`` tells an overlapping hop
where the previous hop stopped, so it must lie inside the range. An audit replay
may also carry ``effective_end``: the layer, inside the range, where the audited hop
ended, so a node whose shard *contains* a hop can replay exactly it (stopping there,
answering hidden states).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from core.dataplane import wire
from core.errors import TicketError

FINGERPRINT_KEYS = ("model_artifact_digest", "runtime_recipe_digest")


MAX_ENDPOINT_CHARS = 512
PIN_HEX_CHARS = 64


@dataclass(frozen=True)
class NextHop:
    """Where a chained hop passes its output (docs/wire.md#chained-hops): its successor's
    data plane and the SHA-256 pin of that node's certificate key ("" for a plaintext
    ``ws://`` node, which only a development tracker routes through)."""

    endpoint: str
    tls_pin: str


@dataclass(frozen=True)
class Hop:
    node_id: str
    start: int
    end: int
    effective_start: int
    # the successor a route run as a chain forwards to; None when the tracker offers
    # no chain (the last hop, or a successor it cannot reach directly)
    next: NextHop | None = None
    # where this hop stops, inside the shard: an audit replay of a hop ending there
    # (None: at the shard's end)
    effective_end: int | None = None

    @property
    def stop(self) -> int:
        """The layer this hop's work ends at (exclusive)."""
        return self.end if self.effective_end is None else self.effective_end


@dataclass(frozen=True)
class RouteTicket:
    route_session_id: str
    epoch: int
    expires_at: float
    fingerprint: dict[str, str]
    hops: tuple[Hop, ...]

    @classmethod
    def from_json(cls, raw: object) -> RouteTicket:
        """Parse the ``ticket`` object; any deviation from the schema is bad-ticket."""
        if not isinstance(raw, dict):
            raise TicketError("the route ticket is not a JSON object")
        session_id, epoch = raw.get("route_session_id"), raw.get("epoch")
        expires_at, fingerprint, hops = (
            raw.get("expires_at"),
            raw.get("fingerprint"),
            raw.get("hops"),
        )
        if not isinstance(session_id, str) or not session_id:
            raise TicketError("the route ticket has no route_session_id")
        if not isinstance(epoch, int) or isinstance(epoch, bool):
            raise TicketError("the route ticket's epoch is not an integer")
        if not isinstance(expires_at, int | float) or isinstance(expires_at, bool):
            raise TicketError("the route ticket's expires_at is not a number")
        if not isinstance(fingerprint, dict) or not all(
            isinstance(fingerprint.get(k), str) for k in FINGERPRINT_KEYS
        ):
            raise TicketError(f"the route ticket's fingerprint needs {', '.join(FINGERPRINT_KEYS)}")
        if not isinstance(hops, list) or not hops:
            raise TicketError("the route ticket lists no hops")
        return cls(
            route_session_id=session_id,
            epoch=epoch,
            expires_at=float(expires_at),
            fingerprint={k: str(fingerprint[k]) for k in FINGERPRINT_KEYS},
            hops=tuple(_parse_hop(h, i) for i, h in enumerate(hops)),
        )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _parse_hop(raw: object, index: int) -> Hop:
    if not isinstance(raw, dict):
        raise TicketError(f"hop {index} of the route ticket is not an object")
    node_id, start, end = raw.get("node_id"), raw.get("start"), raw.get("end")
    effective_start = raw.get("effective_start")
    if not (
        isinstance(node_id, str)
        and isinstance(start, int)
        and isinstance(end, int)
        and isinstance(effective_start, int)
        and all(_is_int(n) for n in (start, end, effective_start))
    ):
        raise TicketError(
            f"hop {index} of the route ticket needs node_id, start, end, effective_start"
        )
    effective_end = raw.get("effective_end")
    if effective_end is not None and not _is_int(effective_end):
        raise TicketError(f"hop {index} of the route ticket has a non-integer effective_end")
    return Hop(
        node_id, start, end, effective_start, _parse_next(raw.get("next"), index), effective_end
    )


def _parse_next(raw: object, index: int) -> NextHop | None:
    if raw is None:
        return None
    where = f"hop {index} of the route ticket"
    if not isinstance(raw, dict):
        raise TicketError(f"{where} has a 'next' that is not an object")
    endpoint, pin = raw.get("endpoint"), raw.get("tls_pin", "")
    if (
        not isinstance(endpoint, str)
        or len(endpoint) > MAX_ENDPOINT_CHARS
        or not endpoint.startswith(("ws://", "wss://"))
    ):
        raise TicketError(f"{where} names a next endpoint that is not a ws:// or wss:// URL")
    if not isinstance(pin, str) or (
        pin and (len(pin) != PIN_HEX_CHARS or pin.strip("0123456789abcdef"))
    ):
        raise TicketError(f"{where} names a next tls_pin that is not 64 lowercase hex")
    if endpoint.startswith("wss://") and not pin:
        raise TicketError(f"{where} names a wss:// successor without its tls_pin")
    return NextHop(endpoint, pin)


def ticket_message(ticket: Mapping[str, Any]) -> bytes:
    """The exact bytes the tracker signs."""
    return wire.ROUTE_TICKET_DOMAIN + wire.canonical_json(ticket)


@dataclass(frozen=True)
class TicketGrant:
    """A verified ticket and the hop in it that this node serves."""

    ticket: RouteTicket
    hop: Hop
    index: int = 0  # the hop's place in the route

    @property
    def previous(self) -> Hop | None:
        """The hop before this one, whose node alone may pass it steps in a chain."""
        return self.ticket.hops[self.index - 1] if self.index > 0 else None

    @property
    def is_last(self) -> bool:
        return self.index == len(self.ticket.hops) - 1


class TicketVerifier:
    """Checks route tickets for one node serving one shard range."""

    def __init__(
        self,
        *,
        node_id: str,
        shard_range: tuple[int, int],
        fingerprint: Mapping[str, str],
        tracker_public_key: Callable[[], bytes | None],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._node_id = node_id
        self._range = (int(shard_range[0]), int(shard_range[1]))
        self._fingerprint = {k: fingerprint.get(k) for k in FINGERPRINT_KEYS}
        self._tracker_public_key = tracker_public_key
        self._clock = clock

    def verify(self, signed: object) -> TicketGrant:
        """Return the grant, or raise TicketError whose ``reason`` names the refusal."""
        if not isinstance(signed, dict) or "ticket" not in signed:
            raise TicketError("the session was opened without a route ticket; ask the tracker")
        key = self._tracker_public_key()
        if key is None:
            raise TicketError(
                "this node has not registered with a tracker yet, so it cannot check tickets"
            )
        raw = signed["ticket"]
        if not wire.verify_signature(key, ticket_message(raw), signed.get("signature")):
            raise TicketError("the route ticket's signature is not the tracker's")
        ticket = RouteTicket.from_json(raw)
        now = self._clock()
        if ticket.expires_at <= now:
            raise TicketError(
                f"the route ticket expired {now - ticket.expires_at:.1f} s ago; "
                "ask the tracker for a fresh route",
                reason=wire.TICKET_EXPIRED,
            )
        hop = self._own_hop(ticket)
        return TicketGrant(ticket, hop, ticket.hops.index(hop))

    def _own_hop(self, ticket: RouteTicket) -> Hop:
        mine = [h for h in ticket.hops if h.node_id == self._node_id]
        if not mine:
            raise TicketError(
                f"the route ticket names no hop for node {self._node_id}", reason=wire.WRONG_NODE
            )
        start, end = self._range
        hop = next((h for h in mine if (h.start, h.end) == self._range), None)
        if hop is None:
            raise TicketError(
                f"the route ticket gives this node layers {mine[0].start}-{mine[0].end}, "
                f"it serves {start}-{end}",
                reason=wire.WRONG_RANGE,
            )
        if ticket.fingerprint != self._fingerprint:
            raise TicketError(
                "the route ticket is for another recipe fingerprint than this node serves",
                reason=wire.WRONG_FINGERPRINT,
            )
        if not start <= hop.effective_start < hop.stop <= end:
            raise TicketError(
                f"the route ticket runs this hop over layers {hop.effective_start}-{hop.stop}, "
                f"outside its layers {start}-{end}",
                reason=wire.WRONG_RANGE,
            )
        return hop
