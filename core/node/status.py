"""What a node is doing right now, kept from its own events, for the snapshot.

The GUI may open its status window long after the node started, or restart
while the node keeps running; a replay of a bounded event history would show
it a partial story. So the node keeps the last word of every kind — its state,
each gate with its data, the report, the registration — and prints all of it
as one ``snapshot`` event on start and on request (the child protocol of
``meshnet-node run --events json``).

Nothing here imports torch: the GUI process may import it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from core.events import KIND_SNAPSHOT, Gate, NodeEvent, NodeState


class NodeStatus:
    """Subscribe :meth:`record` to a node's bus; :meth:`snapshot` is then always current."""

    def __init__(self, settings: Mapping[str, Any], clock: Callable[[], float] = time.time) -> None:
        self._settings = dict(settings)
        self._clock = clock
        self._lock = threading.Lock()
        self.state = NodeState.STOPPED
        self.message = "not started"
        self.reason: str | None = None
        self.gates: dict[str, dict[str, Any]] = {}
        self.report: dict[str, Any] | None = None
        self.registration: dict[str, Any] | None = None
        self.started_at: float | None = None  # when serving began
        # Seconds from the last pause or stop to the shard's memory given back, as the
        # node measured it (what a game waits for).
        self.memory_released_s: float | None = None

    def record(self, event: NodeEvent) -> None:
        with self._lock:
            if event.kind == "state" and event.state is not None:
                self._record_state(event)
            elif event.kind == "gate" and event.gate is not None:
                self._record_gate(event)

    def _record_state(self, event: NodeEvent) -> None:
        assert event.state is not None
        self.state, self.message, self.reason = event.state, event.message, event.reason
        if "memory_released_s" in event.data:
            self.memory_released_s = float(event.data["memory_released_s"])
        if event.state is NodeState.SERVING:
            if self.started_at is None:
                self.started_at = event.at
        elif event.state not in (NodeState.RECONNECTING, NodeState.REGISTERING):
            # Re-registering keeps the node's uptime; anything that leaves serving ends it.
            self.started_at = None
        if event.state in (NodeState.STOPPED, NodeState.PAUSED, NodeState.LOADING):
            self.registration = None
            for gone in (Gate.REGISTRATION, Gate.REACHABILITY, Gate.RECIPE, Gate.SESSIONS):
                self.gates.pop(gone.value, None)

    def _record_gate(self, event: NodeEvent) -> None:
        assert event.gate is not None
        data = dict(event.data)
        self.gates[event.gate.value] = {
            "gate_state": event.gate_state.value if event.gate_state else None,
            "message": event.message,
            "reason": event.reason,
            "data": data,
            "at": event.at,
        }
        if event.gate is Gate.CAPABILITY and "report" in data:
            self.report = dict(data["report"])
        elif event.gate is Gate.REGISTRATION:
            self.registration = data or None

    def snapshot(self, *, open_sessions: int = 0, tokens_served: int = 0) -> dict[str, Any]:
        """The whole status as the child protocol's snapshot data."""
        with self._lock:
            now = self._clock()
            return {
                "state": self.state.value,
                "message": self.message,
                "reason": self.reason,
                "gates": {name: dict(row) for name, row in self.gates.items()},
                "report": self.report,
                "registration": self.registration,
                "open_sessions": open_sessions,
                "tokens_served": tokens_served,
                "started_at": self.started_at,
                "memory_released_s": self.memory_released_s,
                "uptime_s": 0.0 if self.started_at is None else max(0.0, now - self.started_at),
                "pid": os.getpid(),
                "settings": dict(self._settings),
            }

    def snapshot_event(self, *, open_sessions: int = 0, tokens_served: int = 0) -> NodeEvent:
        data = self.snapshot(open_sessions=open_sessions, tokens_served=tokens_served)
        return NodeEvent(
            KIND_SNAPSHOT,
            data["message"],
            state=NodeState(data["state"]),
            reason=data["reason"],
            data=data,
        )
