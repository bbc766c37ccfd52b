"""A network whose contributors come and go: a tracker process, node children of the
default model behind delayed links, and the node states a churn driver needs.

Every node is a real `meshnet-node run --control stdin` child (tests/support/node_child.py),
listening on 127.0.0.1:P and advertising 127.0.0.2:P, where a userspace delay proxy
(tests/support/link_delay.py) forwards to it: every leg to a node — the gateway's,
a chained predecessor's, the tracker's reachability dial — pays the link's delay.
The gateway is reached through such a proxy too. The driver pauses, resumes, stops
and kills nodes through :class:`Member`; what each node said (its state, the seconds
from a pause to its memory released) is read from its JSON events.
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from app.demo.processes import Child, free_port, start_tracker
from tests.support.link_delay import Links
from tests.support.node_child import NodeChild

PROXY_HOST = "127.0.0.2"  # all of 127/8 is loopback on Linux


def _free_on_both() -> int:
    """A port free on 127.0.0.1 (the node) and on PROXY_HOST (its link's proxy)."""
    for _ in range(50):
        port = free_port()
        with socket.socket() as probe:
            try:
                probe.bind((PROXY_HOST, port))
            except OSError:
                continue
        return port
    raise RuntimeError(f"no port free on both 127.0.0.1 and {PROXY_HOST}")


@dataclass
class Member:
    """One contributor's node: its range, port, home (identity) and current child."""

    index: int
    layers: tuple[int, int]
    port: int
    home: Path
    child: NodeChild | None = None
    state: str = "starting"  # starting, serving, paused, stopped, killed
    serving_since: float | None = None  # monotonic, when it last said serving
    node_id: str | None = None
    released_s: list[float] = field(default_factory=list)  # pause → memory released
    ended_s: list[float] = field(default_factory=list)  # pause → sessions ended
    _seen: int = 0

    def read_events(self) -> None:
        """Take in the child's new events (its state, node id, memory released)."""
        if self.child is None:
            return
        events = self.child.events
        while self._seen < len(events):
            event = events[self._seen]
            self._seen += 1
            self._take(event)

    def _take(self, event: dict[str, Any]) -> None:
        data = event.get("data") or {}
        if event.get("gate") == "registration" and data.get("node_id"):
            self.node_id = str(data["node_id"])
        if event.get("kind") != "state":
            return
        state = event.get("state")
        if state == "serving" and self.state != "serving":
            self.state, self.serving_since = "serving", time.monotonic()
        elif state == "paused":
            self.state = "paused"
            if "memory_released_s" in data:
                self.released_s.append(float(data["memory_released_s"]))
                self.ended_s.append(float(data.get("sessions_ended_s", 0.0)))
        elif state in ("stopped", "error", "refused") and self.state not in ("paused",):
            self.state = "stopped"

    def available(self, now: float, grace_s: float) -> bool:
        """Serving long enough for the tracker to route through it."""
        return (
            self.state == "serving"
            and self.serving_since is not None
            and now - self.serving_since >= grace_s
        )


class ChurnNetwork:
    """The tracker, the delayed links and the node children of one churn run."""

    def __init__(
        self, workdir: Path, model_dir: Path, spans: list[tuple[int, int]], link_ms: float
    ) -> None:
        self.workdir = workdir
        self.model_dir = model_dir
        self.tracker: Child
        self.tracker, self.url = start_tracker(workdir, lambda _n, _l: None, heartbeat_s=1.0)
        try:
            tracker_port = int(self.url.rsplit(":", 1)[1])
            ports = [_free_on_both() for _ in spans]
            self.links = Links([*ports, tracker_port], link_ms / 1000.0, PROXY_HOST)
        except BaseException:
            self.tracker.stop()
            raise
        # Users reach the gateway over a delayed link too; nodes talk to the tracker directly.
        self.gateway_url = f"http://{PROXY_HOST}:{tracker_port}"
        self.members = [
            Member(i, span, port, workdir / f"node-{i}")
            for i, (span, port) in enumerate(zip(spans, ports, strict=True))
        ]
        for member in self.members:
            self.start(member)

    # -- the contributors' actions ------------------------------------------------------

    def start(self, member: Member) -> None:
        """(Re)start a node child: same identity, same port, its layers proven afresh."""
        member.read_events()
        member.child = NodeChild(
            member.home,
            self.url,
            self.model_dir,
            "--layers",
            f"{member.layers[0]}:{member.layers[1]}",
            "--port",
            str(member.port),
            "--advertise-host",
            PROXY_HOST,
            env={"OMP_NUM_THREADS": "1"},
            log_path=self.workdir / f"node-{member.index}.log",
        )
        member._seen = 0
        member.state, member.serving_since = "starting", None

    def pause(self, member: Member) -> None:
        assert member.child is not None
        member.child.send("pause")
        member.state = "pausing"

    def resume(self, member: Member) -> None:
        assert member.child is not None
        member.child.send("resume")
        member.state, member.serving_since = "starting", None

    def stop(self, member: Member) -> None:
        """A clean stop (the app's Quit): the node announces it and exits."""
        assert member.child is not None
        member.child.send("stop")
        member.state = "stopped"

    def kill(self, member: Member) -> None:
        """A crash or a pulled cable: nothing is announced."""
        assert member.child is not None
        os.kill(member.child.process.pid, signal.SIGKILL)
        member.child.process.wait(10)
        member.state = "killed"

    # -- what the network says ----------------------------------------------------------

    def refresh(self) -> None:
        for member in self.members:
            member.read_events()

    def model(self) -> str | None:
        try:
            data = httpx.get(self.url + "/v1/models", timeout=10, trust_env=False).json()["data"]
        except (httpx.HTTPError, ValueError, KeyError):
            return None
        return str(data[0]["id"]) if data else None

    def wait_ready(self, timeout_s: float = 600.0) -> str:
        """Every node serving and the model certified; its name."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.refresh()
            for member in self.members:
                child = member.child
                if child is not None and child.process.poll() is not None:
                    raise RuntimeError(f"node {member.index} exited; see node-{member.index}.log")
            model = self.model()
            if model and all(m.state == "serving" for m in self.members):
                return model
            time.sleep(1.0)
        states = [m.state for m in self.members]
        raise RuntimeError(f"the network did not come up in {timeout_s:.0f} s: {states}")

    def credited_hops(self) -> int:
        """Verified hop receipts the tracker's ledger credited so far (its database)."""
        with sqlite3.connect(self.workdir / "tracker.db") as db:
            row = db.execute("SELECT COALESCE(SUM(hops), 0) FROM credit_buckets").fetchone()
        return int(row[0])

    def close(self) -> None:
        for member in self.members:
            child = member.child
            if child is not None and child.process.poll() is None:
                child.send("stop")
        for member in self.members:
            child = member.child
            if child is None:
                continue
            try:
                child.process.wait(20)
            except Exception:
                child.kill()
        self.tracker.stop()
        self.links.close()
