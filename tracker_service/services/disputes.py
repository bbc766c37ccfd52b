"""Disputes: two nodes disagree on a hop and no third node was there to decide.

A hop audit that finds the audited node and its one replaying peer in
disagreement cannot convict either: a quarantine needs a majority. Before this
board the tracker logged the disagreement and kept routing users through both,
the liar included. Now the disagreement is kept here until an arbiter decides:

- both disputed nodes are *withdrawn*: the route planner leaves them out of
  every serve route (and routes already open through them fail over at their
  next step), so no user is answered through a node that may be lying. Where
  no route is left without them, the model is unavailable with
  :meth:`DisputeBoard.sentence` as the reason, never served through them;
- the next node to ask for an allocation that has the memory for the disputed
  range (and is neither disputed node) is allocated exactly that range
  (:meth:`DisputeBoard.recruit`). Recruiting a newcomer, rather than asking a
  serving node to load the range as an extra shard, needs no second shard per
  node (every registry row, route and receipt is one node, one range) and no
  new node protocol; a node restarting or moving asks the same endpoint;
- once such a node is live, :class:`tracker_service.services.arbitration.Arbitration`
  replays the disputed steps on it and the minority is quarantined with its
  own signed receipt, exactly as a three-node audit does.

The board also holds *suspended* nodes: one whose audits keep timing out
(hop_audit.py) is withdrawn the same way, without a dispute, for
``SUSPEND_S``; an audit that cannot finish must not leave a node on user routes.

The board is in memory, per tracker process: a restart forgets a dispute, and
the next audit of the liar records it again.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Key = tuple[str, str]

# A recruited newcomer has this long to load the range and register before the
# range is offered to the next one.
RECRUIT_TTL_S = 600.0
# A node suspended for audits that never finish stays off user routes this long.
SUSPEND_S = 3600.0


@dataclass
class Dispute:
    """One undecided disagreement: what was replayed and what each node answered."""

    fingerprint: Key
    layer_count: int
    start: int  # the hop's effective start: an arbiter's shard must begin at or before it
    end: int  # ... and end exactly here
    last_hop: bool
    frames: tuple[bytes, ...]  # the hop's inputs, in order: what an arbiter replays
    replies: dict[str, bytes]  # each disputed node's answer to the last input
    opinions: dict[str, dict[str, Any]]  # audit.Opinion.to_json() of each: digest and receipt
    detail: str  # the comparison that disagreed
    difference: float
    tolerance: float
    route_session_id: str
    dispute_id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    at: float = field(default_factory=time.time)
    tried: set[str] = field(default_factory=set)  # arbiters that could not decide
    recruited: dict[str, float] = field(default_factory=dict)  # newcomer -> until

    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(self.replies)


class DisputeBoard:
    """Open disputes of this tracker process (thread-safe: routes, audits, loops)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, Dispute] = {}
        self._suspended: dict[str, tuple[float, str]] = {}  # node -> (until, why)
        self._clock = clock

    def suspend(self, node_id: str, why: str, seconds: float = SUSPEND_S) -> None:
        """Withdraw a node from user routes for a while, with no dispute to settle."""
        with self._lock:
            self._suspended[node_id] = (self._clock() + seconds, why)

    def _suspended_now(self) -> frozenset[str]:
        """(Holding the lock) the suspensions still running; the rest are dropped."""
        now = self._clock()
        for node, (until, _) in list(self._suspended.items()):
            if until < now:
                del self._suspended[node]
        return frozenset(self._suspended)

    def add(self, dispute: Dispute) -> bool:
        """Keep a dispute; False when these two nodes are already in one on this range."""
        with self._lock:
            for other in self._open.values():
                if set(other.nodes) == set(dispute.nodes) and (other.start, other.end) == (
                    dispute.start,
                    dispute.end,
                ):
                    return False
            self._open[dispute.dispute_id] = dispute
            return True

    def open(self) -> list[Dispute]:
        with self._lock:
            return list(self._open.values())

    def resolve(self, dispute_id: str) -> None:
        with self._lock:
            self._open.pop(dispute_id, None)

    def forget_node(self, node_id: str) -> None:
        """A node quarantined elsewhere settles every dispute it was in."""
        with self._lock:
            for key in [k for k, d in self._open.items() if node_id in d.nodes]:
                del self._open[key]

    def withdrawn(self, fingerprint: Key | None = None) -> frozenset[str]:
        """Nodes in an open dispute (of one fingerprint, or any): they serve no user."""
        with self._lock:
            return self._suspended_now() | frozenset(
                node
                for d in self._open.values()
                if fingerprint is None or d.fingerprint == fingerprint
                for node in d.nodes
            )

    def is_withdrawn(self, node_id: str) -> bool:
        with self._lock:
            if node_id in self._suspended_now():
                return True
            return any(node_id in d.nodes for d in self._open.values())

    def sentence(self, fingerprint: Key) -> str | None:
        """Why this model may be unavailable (None with no dispute on it)."""
        with self._lock:
            found = [d for d in self._open.values() if d.fingerprint == fingerprint]
        if not found:
            return None
        d = found[0]
        a, b = (n[:8] for n in d.nodes)
        return (
            f"nodes {a} and {b} gave different answers for layers {d.start}-{d.end} and no third "
            "node was there to decide, so neither serves users until one does; a node with room "
            f"for layers {d.start}-{d.end} that joins is asked to settle it"
        )

    def recruit(
        self, fingerprint: Key, asker: str | None, max_layers: int
    ) -> tuple[int, int] | None:
        """The disputed range for a newcomer that can replay it, reserving it for that node."""
        now = self._clock()
        with self._lock:
            for d in self._open.values():
                if d.fingerprint != fingerprint or (asker and asker in d.nodes):
                    continue
                if d.end - d.start > max_layers:
                    continue
                for node, until in list(d.recruited.items()):
                    if until < now:
                        del d.recruited[node]
                if d.recruited and asker not in d.recruited:
                    continue  # one arbiter on its way at a time
                if asker:
                    d.recruited[asker] = now + RECRUIT_TTL_S
                return d.start, d.end
        return None
