"""Rebalancing: which serving nodes should move, computed off the heartbeat path.

The heartbeat is the tracker's hottest request, so it never plans anything:
:class:`Rebalancer` (a background loop) runs :func:`allocation.plan_moves`
over each fingerprint's live nodes every ``rebalance_poll_s`` and leaves the
answer on a :class:`RebalanceBoard`; the heartbeat reply only looks its node
up in a dict.

Hysteresis lives on both sides. Here: a move must lift the bottleneck by
``rebalance_margin``, at most one move per fingerprint is offered at a time,
and a node that left to move is counted at its new range until it re-registers
there (or ``rebalance_grace_s`` passes), so its old range is not handed to a
second node meanwhile. On the node: it moves only with no open sessions and
not sooner than its dwell time after its last start.

:class:`PendingPlacements` is the same idea for newcomers: ranges suggested
by ``GET /api/v1/allocation`` count until their node registers.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from tracker_service.domain.allocation import Move, Placement, Slot, plan_moves
from tracker_service.services.background import BackgroundLoop
from tracker_service.store.allocation import Key, ServingGroup, serving_groups
from tracker_service.store.db import Database

log = logging.getLogger(__name__)

PENDING_TTL_S = 300.0
PENDING_LIMIT = 2048  # per model: bounded memory whatever unsigned callers send


class PendingPlacements:
    """Ranges suggested lately to nodes that have not registered yet (in memory, per replica)."""

    def __init__(self, ttl_s: float = PENDING_TTL_S, clock: Callable[[], float] = time.time):
        self._ttl_s = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._by_model: dict[tuple[str, str], dict[str, tuple[float, Placement]]] = {}

    def add(self, model: tuple[str, str], asker: str, placement: Placement) -> None:
        with self._lock:
            entries = self._by_model.setdefault(model, {})
            entries.pop(asker, None)  # re-asking moves the asker to the end
            entries[asker] = (self._clock() + self._ttl_s, placement)
            while len(entries) > PENDING_LIMIT:
                entries.pop(next(iter(entries)))

    def live(self, model: tuple[str, str], registered: set[str]) -> list[Placement]:
        """Unexpired suggestions whose asker is not (yet) among the registered nodes."""
        now = self._clock()
        with self._lock:
            entries = self._by_model.get(model, {})
            for asker in [a for a, (until, _) in entries.items() if until < now or a in registered]:
                del entries[asker]
            return [placement for _, placement in entries.values()]


@dataclass(frozen=True)
class InFlight:
    key: Key
    move: Move
    rate: float
    until: float


class RebalanceBoard:
    """The current move suggestions, read by every heartbeat (a dict lookup)."""

    def __init__(self) -> None:
        self._moves: dict[str, Move] = {}
        self._in_flight: dict[str, InFlight] = {}
        self._origin: dict[str, tuple[Key, float]] = {}  # fingerprint and rate of each mover
        # Arbitration's loans (arbitration.py): a node asked to load a disputed range for
        # a replay, then to go back. They come before any rebalancing move.
        self._loans: dict[str, Move] = {}

    def suggestion_for(self, node_id: str) -> Move | None:
        return self._loans.get(node_id) or self._moves.get(node_id)

    def lend(self, move: Move) -> None:
        """Ask ``move.node_id`` to serve ``move``'s range (urgent: a dispute waits)."""
        self._loans[move.node_id] = move

    def end_loan(self, node_id: str) -> None:
        self._loans.pop(node_id, None)

    @property
    def moves(self) -> dict[str, Move]:
        return dict(self._moves)

    def plan(
        self,
        groups: list[ServingGroup],
        *,
        now: float,
        margin: float,
        grace_s: float,
    ) -> dict[str, Move]:
        """Recompute the suggestions from the registry; returns them (also kept here)."""
        previous, present = self._moves, {s.node_id for g in groups for s in g.slots}
        by_key = {g.key: g for g in groups}
        # A node that was told to move and has left the registry is on its way.
        for node_id, move in previous.items():
            if node_id not in present and node_id not in self._in_flight:
                key, rate = self._origin.get(node_id, (None, 0.0))
                if key is not None:
                    self._in_flight[node_id] = InFlight(key, move, rate, now + grace_s)
        for node_id in [n for n, f in self._in_flight.items() if n in present or f.until < now]:
            del self._in_flight[node_id]
        moves: dict[str, Move] = {}
        origin: dict[str, tuple[Key, float]] = {}
        for key, group in by_key.items():
            slots = list(group.slots)
            for node_id, flight in self._in_flight.items():
                if flight.key == key:  # counted at its target; never moved again meanwhile
                    m = flight.move
                    slots.append(Slot(node_id, m.start, m.end, flight.rate, open_sessions=1))
            for move in plan_moves(
                group.layer_count, slots, margin=margin, max_moves=1, model=group.artifact_id
            ):
                moves[move.node_id] = move
                rate = next(s.rate for s in slots if s.node_id == move.node_id)
                origin[move.node_id] = (key, rate)
        self._moves, self._origin = moves, origin
        return moves


class Rebalancer(BackgroundLoop):
    task_name = "meshnet-rebalancer"

    def __init__(
        self,
        database: Database,
        board: RebalanceBoard,
        *,
        poll_s: float,
        margin: float,
        grace_s: float,
    ) -> None:
        super().__init__(poll_s)
        self._db = database
        self._board = board
        self._margin = margin
        self._grace_s = grace_s

    def _pass(self) -> dict[str, Move]:
        now = time.time()
        with self._db.session() as session:
            groups = serving_groups(session, now=now)
        moves = self._board.plan(groups, now=now, margin=self._margin, grace_s=self._grace_s)
        for move in moves.values():
            log.info(
                "rebalance: node %s should move to layers %d-%d: %s",
                move.node_id,
                move.start,
                move.end,
                move.sentence,
            )
        return moves

    async def run_pass(self) -> dict[str, Move]:
        return await asyncio.to_thread(self._pass)
