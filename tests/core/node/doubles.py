"""Test doubles for the node lifecycle tests: a tracker answering like the real one."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from core.events import NodeEvent
from core.identity.keypair import NodeIdentity, b64encode
from core.node import Node, NodeSettings
from tests.support.waiting import wait_until

IDENTITY = NodeIdentity.from_seed(bytes([7]) * 32)
TRACKER_KEY = NodeIdentity.from_seed(bytes([9]) * 32)


class FakeTracker:
    """Answers the tracker API the way the real one does; records every call."""

    def __init__(self, heartbeat_answers: list[int] | None = None) -> None:
        self.calls: list[str] = []
        self.registered: list[dict[str, Any]] = []  # each registration's body
        self._heartbeats = list(heartbeat_answers or [])
        self.refuse_heartbeats = threading.Event()  # set: every heartbeat is told to re-register
        self.view: dict[str, Any] = {}  # extra fields of the heartbeat reply
        self.on_register: Callable[[], None] | None = None
        # GET /api/v1/allocation: the answer's body, or a status code to refuse with.
        self.allocation: dict[str, Any] | int = 404
        self.allocation_asks: list[dict[str, str]] = []
        # set: every heartbeat is refused with (status, reason, detail), like a quarantine
        self.heartbeat_refusal: tuple[int, str, str] | None = None
        # The report age limit the registration answer carries (None: not said).
        self.capability_max_age_s: float | None = None
        # Registrations refused in turn with (status, reason, detail) before any succeeds.
        self.register_refusals: list[tuple[int, str, str]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        self.calls.append(path)
        if path.endswith("/register"):
            self.registered.append(json.loads(request.content))
            if self.on_register is not None:
                self.on_register()
            if self.register_refusals:
                code, reason, detail = self.register_refusals.pop(0)
                return httpx.Response(code, json={"reason": reason, "detail": detail})
            answer: dict[str, Any] = {
                "node_id": IDENTITY.node_id,
                "tracker_public_key": b64encode(TRACKER_KEY.public_key_raw),
                "heartbeat_interval_s": 0.05,
                "recipe": {"status": "dark", "detail": "registered"},
                "session": {"credential": {"expires_at": time.time() + 900}},
            }
            if self.capability_max_age_s is not None:
                answer["capability_max_age_s"] = self.capability_max_age_s
            return httpx.Response(200, json=answer)
        if path.endswith("/heartbeat"):
            status = self._heartbeats.pop(0) if self._heartbeats else 200
            if self.refuse_heartbeats.is_set():
                status = 410
            if self.heartbeat_refusal is not None:
                code, reason, detail = self.heartbeat_refusal
                return httpx.Response(code, json={"reason": reason, "detail": detail})
            if status != 200:
                return httpx.Response(status, json={"reason": "re-register", "detail": "expired"})
            body = {"heartbeat_interval_s": 0.05, "live_until": 1e12, **self.view}
            return httpx.Response(200, json=body)
        if path.endswith("/allocation"):
            self.allocation_asks.append(dict(request.url.params))
            if isinstance(self.allocation, int):
                return httpx.Response(
                    self.allocation, json={"reason": "not-found", "detail": "no such route"}
                )
            return httpx.Response(200, json=self.allocation)
        if path.endswith("/deregister"):
            return httpx.Response(200, json={"node_id": IDENTITY.node_id})
        return httpx.Response(200, json={"nodes": [], "recipes": []})

    def count(self, suffix: str) -> int:
        return sum(1 for call in self.calls if call.endswith(suffix))


def make_node(
    model: Path, tracker: FakeTracker, layers: tuple[int, int] | None = (0, 2), **kwargs: Any
) -> tuple[Node, list[NodeEvent]]:
    settings_fields = {
        k: kwargs.pop(k) for k in list(kwargs) if k in NodeSettings.__dataclass_fields__
    }
    settings = NodeSettings(
        tracker_url="http://tracker.test", model=str(model), layers=layers, **settings_fields
    )
    node = Node(settings, IDENTITY, transport=httpx.MockTransport(tracker), **kwargs)
    events: list[NodeEvent] = []
    node.bus.subscribe(events.append)
    return node, events


def node_threads() -> list[str]:
    """Threads a node may start; none may outlive a stop or a pause."""
    names = ("meshnet-heartbeat", "meshnet-reprove", "doctor-probe")
    return [t.name for t in threading.enumerate() if t.name in names and t.is_alive()]


def stop_from_another_thread(node: Node) -> threading.Thread:
    """Ask the node to stop the way the CLI's main thread does, and wait until it has asked."""
    stopper = threading.Thread(target=node.stop, name="test-stopper")
    stopper.start()
    wait_until(lambda: node._cancel.cancelled or not stopper.is_alive())
    return stopper
