"""A node serving past the tracker's report age limit keeps serving.

A real tracker on loopback admits capability reports at most 60 s old; a real
``meshnet-node run`` with the default model serves there for longer than that.
It proves its layers again (a fresh real forward) before the limit and
registers the fresh report, so it stays serving and live, and no event of it
ever says stale.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.app.conftest import serve_tracker
from tests.support.node_child import node_run_argv
from tests.tracker_service.server_process import TrackerProcess

REPO = Path(__file__).resolve().parents[2]
LIMIT_S = 60.0


@pytest.fixture
def tracker(tmp_path: Path) -> Iterator[TrackerProcess]:
    yield from serve_tracker(tmp_path, MESHNET_TRACKER_CAPABILITY_MAX_AGE_S=str(LIMIT_S))


def _read_events(process: subprocess.Popen[str], into: queue.Queue[dict[str, Any]]) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("{"):
            into.put(json.loads(line))


@pytest.mark.slow
def test_a_node_serving_past_the_trackers_age_limit_keeps_serving_and_is_never_stale(
    tracker: TrackerProcess, default_model_dir: Path, tmp_path: Path
) -> None:
    home = tmp_path / "node"
    argv = node_run_argv(tracker.url, default_model_dir, home, "--layers", "0:4")
    env = dict(os.environ, MESHNET_HOME=str(home), PYTHONUNBUFFERED="1")
    process = subprocess.Popen(
        argv, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True
    )
    new: queue.Queue[dict[str, Any]] = queue.Queue()
    threading.Thread(target=_read_events, args=(process, new), daemon=True).start()
    events: list[dict[str, Any]] = []
    try:
        first_report: float | None = None
        registrations = 0
        deadline = time.monotonic() + 900
        # Serve until the first report is well past the limit and a fresh one was
        # registered since; how long that takes depends on the machine, not the test.
        while time.monotonic() < deadline:
            try:
                event = new.get(timeout=1.0)
            except queue.Empty:
                assert process.poll() is None, events[-5:]
                event = None
            if event is not None:
                events.append(event)
                if event.get("gate") == "capability" and first_report is None:
                    first_report = float(event["data"]["report"]["validated_at"])
                if event.get("gate") == "registration" and event.get("gate_state") == "passed":
                    registrations += 1
            if first_report and time.time() > first_report + LIMIT_S + 5 and registrations >= 2:
                break
        assert first_report is not None and registrations >= 2, events[-10:]
        assert time.time() > first_report + LIMIT_S  # served past the tracker's limit
        node_id = next(e for e in events if e.get("gate") == "registration")["data"]["node_id"]
        view = httpx.get(f"{tracker.url}/api/v1/nodes/{node_id}", timeout=10).json()
        assert view["live"] is True
        states = [e["state"] for e in events if e.get("kind") == "state"]
        assert states[states.index("serving") :] == ["serving"]  # never left serving
        assert not [e for e in events if "stale" in str(e.get("reason") or "")]
        fresh = [e for e in events if e.get("gate") == "admission" and "fresh" in e["message"]]
        assert fresh, "the node never proved its layers again"
        reports = [e["data"]["report"] for e in events if e.get("gate") == "capability"]
        assert all(r["passed"] for r in reports) and len(reports) >= 2
        process.send_signal(signal.SIGTERM)
        assert process.wait(90) == 0
    finally:
        if process.poll() is None:
            process.kill()
