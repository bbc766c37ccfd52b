"""How a node picks its layers and when it moves them: the tracker's range, rebalancing.

This part decides; the lifecycle (core.node.lifecycle) acts. ``choose`` asks
the tracker for a range, ``consider`` judges a suggested move and ``relocate``
allows one move at a time; the move itself is the lifecycle's ``MoveFn``: it
leaves routing, frees the shard, and runs the doctor, the admission gate and
registration again on the new range, so a moved node is proven exactly like a
new one (and goes back to its old range, proven afresh, when the new one
cannot start).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from core.doctor.capability import CapabilityReport
from core.doctor.placement_advice import Capacity, choose_layers, measure_capacity, should_move
from core.errors import MeshnetError
from core.events import Gate, GateState
from core.network.tracker_client import TrackerClient
from core.node.hooks import GateFn, MoveFn
from core.node.settings import NodeSettings

log = logging.getLogger(__name__)


class NodePlacement:
    def __init__(
        self,
        settings: NodeSettings,
        node_id: str,
        *,
        open_tracker: Callable[[], TrackerClient],
        gate: GateFn,
        move: MoveFn,
        capacity: Callable[[NodeSettings], Capacity] | None = None,
    ) -> None:
        self._settings = settings
        self._node_id = node_id
        self._open_tracker = open_tracker
        self._gate = gate
        self._move = move
        self._capacity = capacity or _measure
        # --layers, else the tracker's (or the local) choice; a move replaces it.
        self.layers: tuple[int, int] | None = settings.layers
        self._moving_lock = threading.Lock()  # one move at a time
        self._serving_since = time.monotonic()

    def serving(self, report: CapabilityReport | None) -> None:
        """The node began serving: start the dwell clock; learn a reused report's range."""
        if self.layers is None and report is not None:
            self.layers = (report.shard.start, report.shard.end)
        self._serving_since = time.monotonic()

    def choose(self) -> tuple[int, int]:
        """No --layers: ask the tracker which range helps the swarm most (placement gate)."""
        try:
            capacity = self._capacity(self._settings)
            with self._open_tracker() as client:
                choice = choose_layers(client, capacity, self._node_id)
        except MeshnetError as exc:
            self._gate(Gate.PLACEMENT, GateState.FAILED, str(exc), exc.reason)
            raise
        tracker = choice.source == "tracker"
        self._gate(
            Gate.PLACEMENT,
            GateState.PASSED if tracker else GateState.INFO,
            choice.sentence,
            None if tracker else "tracker-fallback",
            layers=list(choice.layers),
            source=choice.source,
        )
        return choice.layers

    def consider(
        self,
        suggested: tuple[int, int] | None,
        sentence: str,
        *,
        serving: bool,
        open_sessions: int,
        urgent: bool = False,
    ) -> bool:
        """Act on the tracker's move suggestion when idle and past the dwell time.

        An urgent move (the model cannot serve without it) waits only the short
        urgent dwell. Called from the heartbeat thread; the move itself runs on
        its own thread (it stops the heartbeat loop). True when a move began.
        """
        if not serving or self._moving_lock.locked():
            return False
        move, why = should_move(
            suggested,
            self.layers,
            pinned=self._settings.layers is not None,
            open_sessions=open_sessions,
            serving_for_s=time.monotonic() - self._serving_since,
            dwell_s=self._settings.move_dwell_urgent_s if urgent else self._settings.move_dwell_s,
        )
        if not move or suggested is None:
            log.debug("not moving to %s: %s", suggested, why)
            return False
        threading.Thread(
            target=self.relocate, args=(suggested, sentence), name="meshnet-move", daemon=True
        ).start()
        return True

    def relocate(self, layers: tuple[int, int], sentence: str = "") -> bool:
        """Serve `layers` instead (one move at a time); False when it did not move."""
        if not self._moving_lock.acquire(blocking=False):
            return False
        try:
            return self._move(layers, sentence)
        finally:
            self._moving_lock.release()


def _measure(settings: NodeSettings) -> Capacity:
    cap = None if settings.memory_cap_mb is None else settings.memory_cap_mb * 1024 * 1024
    return measure_capacity(settings.model, settings.device, cap, settings.recipe_id)
