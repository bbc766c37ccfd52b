"""A certify route whose hops may stop inside their shards.

Route formation runs every hop to its shard's end, so nodes that each hold the
whole model form no route of two distinct nodes. The certifier then takes the
chain :func:`certifying_chain.certifying_hops` finds: each hop starts where the
previous stopped and stops where the next one takes over, its ticket naming that
layer (``effective_end``, docs/wire.md#route-tickets), exactly as an audit replay
stops inside its shard. The route runs as a star (no hop names a successor): the
certifier carries every hop's output and checks each receipt against the layers
its ticket asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tracker_service.domain.certifying_chain import certifying_hops
from tracker_service.domain.keys import TrackerKey
from tracker_service.domain.route_formation import Candidate
from tracker_service.domain.tickets import TicketHop, issue_ticket
from tracker_service.errors import NoRoute
from tracker_service.services.session_plan import PlannedHop, RoutePlan


def early_ended_plan(
    layer_count: int,
    candidates: Sequence[Candidate],
    fingerprint: tuple[str, str],
    tracker_key: TrackerKey,
    *,
    ttl_s: float,
    exclude: Iterable[str] = (),
) -> RoutePlan:
    """A signed certify route of >= 2 distinct nodes, hops stopping early where needed.

    Raises NoRoute when no such chain exists among the candidates not excluded.
    """
    left_out = set(exclude)
    usable = [c for c in candidates if c.node_id not in left_out]
    chain = certifying_hops(layer_count, [(c.start, c.end) for c in usable])
    if chain is None:
        raise NoRoute(
            f"no chain of 2 or more distinct nodes covers all {layer_count} layers, even "
            "with hops stopping inside their shards"
        )
    hops = [(usable[i], start, stop) for i, start, stop in chain]
    ticket_hops = [
        TicketHop(
            c.node_id,
            c.start,
            c.end,
            start,
            effective_end=stop if stop != c.end else None,
        )
        for c, start, stop in hops
    ]
    signed = issue_ticket(tracker_key, fingerprint=fingerprint, hops=ticket_hops, ttl_s=ttl_s)
    return RoutePlan.from_ticket(
        signed,
        fingerprint=fingerprint,
        layer_count=layer_count,
        hops=tuple(
            # ``end`` is where the hop stops: what it opens, runs and its receipt signs
            PlannedHop(c.node_id, c.start, stop, start, c.endpoint, c.public_key, c.tls_pin)
            for c, start, stop in hops
        ),
    )
