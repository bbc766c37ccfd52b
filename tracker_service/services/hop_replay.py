"""One replay of an audited hop: the same inputs on another node, on a one-hop session.

The auditor (hop_audit.py) chooses the replayer and compares; this module runs the
replay. The replay's ticket names the replayer's own shard and, when its shard goes
further than the audited hop, stops it at the hop's end (``effective_end``). A
replayer that cannot answer gives an empty reply, which agrees with nothing, so an
unreachable replayer never convicts the audited node alone; its failure counts
against it (``stalls``, in a row). A replayer still answering frames when the
audit's budget runs out raises :class:`BudgetSpent`: the session was too long for
the budget, which is the audited hop's to answer for.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Sequence
from typing import Any

from tracker_service.domain import wire_frames
from tracker_service.domain.keys import TrackerKey
from tracker_service.domain.route_formation import Candidate
from tracker_service.domain.tickets import TicketHop, issue_ticket
from tracker_service.errors import BudgetSpent, RouteFailure
from tracker_service.services.audit_settings import AuditSettings
from tracker_service.services.route_session import DEFAULT_MAX_REPLY_BYTES, RouteSession
from tracker_service.services.session_plan import PlannedHop, RoutePlan, Sampling

log = logging.getLogger(__name__)

AUDIT_TICKET_TTL_S = 120.0
REPLAY_LOGPROBS = 20  # the most a last hop returns (docs/wire.md#session-messages)


def end_of(frame: bytes) -> int:
    """The furthest position a frame reaches (a speculative route's frames rewind)."""
    return wire_frames.end_of(frame, DEFAULT_MAX_REPLY_BYTES)


def replay_plan(
    key: TrackerKey,
    fingerprint: tuple[str, str],
    layer_count: int,
    effective_start: int,
    node: Candidate,
    stop: int,
) -> RoutePlan:
    """A one-hop route on ``node`` over ``[effective_start, stop)``, freshly signed."""
    ticket_hop = TicketHop(
        node.node_id,
        node.start,
        node.end,
        effective_start,
        effective_end=stop if stop != node.end else None,
    )
    signed = issue_ticket(key, fingerprint=fingerprint, hops=[ticket_hop], ttl_s=AUDIT_TICKET_TTL_S)
    return RoutePlan.from_ticket(
        signed,
        fingerprint=fingerprint,
        layer_count=layer_count,
        hops=(
            PlannedHop(
                node.node_id,
                node.start,
                stop,  # what the replay runs and its receipt signs
                effective_start,
                node.endpoint,
                node.public_key,
                node.tls_pin,
            ),
        ),
    )


async def replay_hop(
    key: TrackerKey,
    settings: AuditSettings,
    stalls: Counter[str],
    fingerprint: tuple[str, str],
    layer_count: int,
    effective_start: int,
    node: Candidate,
    frames: Sequence[bytes],
    last: bool,
    *,
    end: int | None = None,
    deadline: float | None = None,
) -> tuple[bytes, dict[str, Any] | None]:
    """The node's reply to the same inputs and its signed receipt; ``(b"", None)`` when
    it failed or stalled (counted in ``stalls``).

    ``end``: the audited hop's end. Its open and each step get ``settings.timeout_s``,
    and all of it ends at ``deadline`` (the audit's budget, event-loop time).
    """
    stop = node.end if end is None else end
    one_hop = replay_plan(key, fingerprint, layer_count, effective_start, node, stop)
    timeout = settings.timeout_s  # this replayer's own limit on its open and steps
    max_length = max(end_of(f) for f in frames)
    reply = b""
    answered = 0  # frames it replied to; -1 once past them (closing)
    try:
        async with asyncio.timeout_at(deadline):
            async with RouteSession(
                one_hop,
                open_timeout_s=timeout,
                step_timeout_s=timeout,
                allow_private_endpoints=settings.allow_private_endpoints,
                allow_plaintext_nodes=settings.allow_plaintext_nodes,
            ) as session:
                # the most top log-probs: the audited reply's k first are compared
                replay_sampling = Sampling(temperature=0.0, logprobs=REPLAY_LOGPROBS)
                await session.open(max_length, replay_sampling if last else None)
                for frame in frames:
                    reply = await session.relay(frame)
                    answered += 1
                answered = -1
                receipts = await session.close()
    except TimeoutError as exc:  # the budget ran out (before OSError: a subclass)
        if answered > 0:
            raise BudgetSpent(node.node_id, answered) from exc
        return _stalled(stalls, node, "it gave no reply before the audit's budget ran out")
    except (RouteFailure, wire_frames.FrameError, ValueError) as exc:
        return _stalled(stalls, node, str(exc))
    stalls.pop(node.node_id, None)
    return reply, receipts[0].signed


def _stalled(stalls: Counter[str], node: Candidate, why: str) -> tuple[bytes, None]:
    """A replayer that failed or stalled: counted against it, never the audited hop."""
    stalls[node.node_id] += 1
    log.info(
        "audit replay on %s failed (%d in a row): %s", node.node_id[:12], stalls[node.node_id], why
    )
    return b"", None
