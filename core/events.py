"""Node events: what the lifecycle publishes and the tray app shows live.

The node core knows nothing of Qt; the GUI subscribes a callback that re-emits
each event as a Qt signal (``app.controller``). Callbacks run on the publishing
thread, so a subscriber must hand work to its own thread and return quickly.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

log = logging.getLogger(__name__)


class NodeState(StrEnum):
    STOPPED = "stopped"
    LOADING = "loading"
    PROBING = "probing"
    ADMITTING = "admitting"
    STARTING = "starting"
    REGISTERING = "registering"
    SERVING = "serving"
    RECONNECTING = "reconnecting"
    DRAINING = "draining"
    PAUSING = "pausing"
    PAUSED = "paused"  # out of routing, shard memory freed; `resume` proves it again
    REFUSED = "refused"
    ERROR = "error"


class Gate(StrEnum):
    """The admission gates the status view lists, in the order a node passes them."""

    IDENTITY = "identity"
    PLACEMENT = "placement"  # which layers, and why (the tracker's sentence)
    CAPABILITY = "capability"
    ADMISSION = "admission"
    DATA_PLANE = "data-plane"
    REGISTRATION = "registration"
    REACHABILITY = "reachability"
    RECIPE = "recipe"
    SESSIONS = "sessions"


class GateState(StrEnum):
    PENDING = "pending"
    PASSED = "passed"
    FAILED = "failed"
    INFO = "info"


# Event kinds of the child protocol (`meshnet-node run --events json`).
KIND_STATE = "state"
KIND_GATE = "gate"
KIND_PROGRESS = "progress"
KIND_STATS = "stats"
KIND_SNAPSHOT = "snapshot"


@dataclass(frozen=True)
class NodeEvent:
    kind: str  # "state" | "gate" | "progress" | "stats" | "snapshot"
    message: str
    state: NodeState | None = None
    gate: Gate | None = None
    gate_state: GateState | None = None
    reason: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    at: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        """Every field, always present: one line of the child protocol."""
        return {
            "kind": self.kind,
            "message": self.message,
            "state": self.state.value if self.state else None,
            "gate": self.gate.value if self.gate else None,
            "gate_state": self.gate_state.value if self.gate_state else None,
            "reason": self.reason,
            "data": dict(self.data),
            "at": self.at,
        }


Subscriber = Callable[[NodeEvent], None]


class EventBus:
    """Thread-safe publish/subscribe with a short history for late subscribers."""

    def __init__(self, history: int = 200) -> None:
        self._lock = threading.Lock()
        self._subscribers: list[Subscriber] = []
        self._history: deque[NodeEvent] = deque(maxlen=history)

    def subscribe(self, callback: Subscriber, *, replay: bool = True) -> Callable[[], None]:
        with self._lock:
            self._subscribers.append(callback)
            past = list(self._history) if replay else []
        for event in past:
            callback(event)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def publish(self, event: NodeEvent) -> None:
        with self._lock:
            self._history.append(event)
            subscribers = list(self._subscribers)
        for callback in subscribers:
            try:
                callback(event)
            except Exception:  # a broken subscriber must not stop the node
                log.exception("event subscriber failed")

    def history(self) -> list[NodeEvent]:
        with self._lock:
            return list(self._history)
