"""How a node picks its layers and moves them: the tracker's range, rebalancing moves.

Kept apart from the lifecycle (core.node), which it drives through the same
steps as any start: a move leaves routing, frees the shard, and then runs the
doctor, the admission gate and registration again on the new range, so a
moved node is proven exactly like a new one. Where the new range cannot start
the node goes back to its old range, proven afresh.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from core.capability import CapabilityReport
from core.errors import MeshnetError
from core.events import Gate, GateState, NodeState
from core.node_settings import NodeSettings
from core.placement import Capacity, choose_layers, measure_capacity, should_move
from core.progress import Cancelled
from core.tracker_client import TrackerClient

if TYPE_CHECKING:
    from core.node import Node

log = logging.getLogger(__name__)


class NodePlacement:
    def __init__(
        self, node: Node, capacity: Callable[[NodeSettings], Capacity] | None = None
    ) -> None:
        self._node = node
        self._capacity = capacity or _measure
        # --layers, else the tracker's (or the local) choice; a move replaces it.
        self.layers: tuple[int, int] | None = node.settings.layers
        self._moving_lock = threading.Lock()  # one move at a time
        self._serving_since = time.monotonic()

    def serving(self, report: CapabilityReport | None) -> None:
        """The node began serving: start the dwell clock; learn a reused report's range."""
        if self.layers is None and report is not None:
            self.layers = (report.shard.start, report.shard.end)
        self._serving_since = time.monotonic()

    def choose(self) -> tuple[int, int]:
        """No --layers: ask the tracker which range helps the swarm most (placement gate)."""
        node = self._node
        node._cancel.check("choosing layers")
        try:
            capacity = self._capacity(node.settings)
            with TrackerClient(
                node.settings.tracker_url,
                node.identity,
                join_token=node.settings.join_token,
                transport=node._transport,
            ) as client:
                choice = choose_layers(client, capacity, node.identity.node_id)
        except MeshnetError as exc:
            node.gate(Gate.PLACEMENT, GateState.FAILED, str(exc), exc.reason)
            raise
        tracker = choice.source == "tracker"
        node.gate(
            Gate.PLACEMENT,
            GateState.PASSED if tracker else GateState.INFO,
            choice.sentence,
            None if tracker else "tracker-fallback",
            layers=list(choice.layers),
            source=choice.source,
        )
        return choice.layers

    def consider(self, suggested: tuple[int, int] | None, sentence: str) -> bool:
        """Act on the tracker's move suggestion when idle and past the dwell time.

        Called from the heartbeat thread; the move itself runs on its own
        thread (it stops the heartbeat loop). True when a move began.
        """
        node = self._node
        if node.state is not NodeState.SERVING or self._moving_lock.locked():
            return False
        move, why = should_move(
            suggested,
            self.layers,
            pinned=node.settings.layers is not None,
            open_sessions=node.open_sessions,
            serving_for_s=time.monotonic() - self._serving_since,
            dwell_s=node.settings.move_dwell_s,
        )
        if not move or suggested is None:
            log.debug("not moving to %s: %s", suggested, why)
            return False
        threading.Thread(
            target=self.relocate, args=(suggested, sentence), name="meshnet-move", daemon=True
        ).start()
        return True

    def relocate(self, layers: tuple[int, int], sentence: str = "") -> bool:
        """Serve `layers` instead: leave routing, reload, re-run the doctor and the gate.

        Only with no open session. If the new range cannot start (it does not
        fit, the gate refuses it) the node goes back to its old range, proven
        afresh the same way. False when it did not move.
        """
        node = self._node
        if not self._moving_lock.acquire(blocking=False):
            return False
        try:
            with node._lifecycle:
                if node.state is not NodeState.SERVING or node.open_sessions:
                    return False
                old = self.layers
                start, end = layers
                node.gate(
                    Gate.PLACEMENT,
                    GateState.INFO,
                    sentence or f"the tracker suggests layers {start}–{end}",
                    "rebalance",
                    layers=[start, end],
                    source="rebalance",
                )
                node.set_state(NodeState.DRAINING, f"moving to layers {start}–{end}")
                node._leave_routing_and_drain()
                node._teardown()
                self.layers = layers
                try:
                    node._start()
                except Cancelled:
                    node._teardown()
                    node.set_state(NodeState.STOPPED, "stopped while moving")
                    node._stopped.set()
                    return False
                except MeshnetError as exc:
                    node._teardown()
                    if old is None:
                        node._fail(NodeState.ERROR, str(exc), exc.reason)
                        return False
                    node.gate(
                        Gate.PLACEMENT,
                        GateState.INFO,
                        f"could not move to layers {start}–{end} ({exc}); going back to "
                        f"layers {old[0]}–{old[1]}",
                        exc.reason,
                        layers=list(old),
                        source="rebalance",
                    )
                    self.layers = old
                    node._start_or_fail()
                    return False
                return True
        finally:
            self._moving_lock.release()


def _measure(settings: NodeSettings) -> Capacity:
    cap = None if settings.memory_cap_mb is None else settings.memory_cap_mb * 1024 * 1024
    return measure_capacity(settings.model, settings.device, cap, settings.recipe_id)
