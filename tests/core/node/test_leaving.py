"""A node leaves within one step: a pause with a session open ends that session with
``node-leaving`` at once (no drain), tells the tracker, frees the shard and reports
``paused`` with the seconds from the pause to the memory released (docs/churn.md)."""

from __future__ import annotations

import gc
import json
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

from core.doctor.checkup import DoctorOutcome, DoctorRequest, run_doctor
from core.events import NodeState
from tests.core.node.doubles import IDENTITY, TRACKER_KEY, FakeTracker, make_node, node_threads
from tests.support.tickets import sign_ticket


def test_a_pause_with_a_session_open_hands_it_over_and_frees_the_shard(
    tiny_model_dir: Path,
) -> None:
    tracker = FakeTracker()
    loaded: list[weakref.ref[Any]] = []

    def doctor(request: DoctorRequest, **kwargs: Any) -> DoctorOutcome:
        outcome = run_doctor(request, **kwargs)
        loaded.append(weakref.ref(outcome.shard))
        return outcome

    node, events = make_node(
        tiny_model_dir, tracker, doctor=doctor, insecure_plaintext_dataplane=True
    )
    node.start()
    outcome = node._proof.outcome
    assert outcome is not None and outcome.identity_block is not None
    ticket = sign_ticket(
        {
            "route_session_id": "route-1",
            "epoch": 1,
            "expires_at": time.time() + 60.0,
            "fingerprint": dict(outcome.identity_block["fingerprint"]),
            "hops": [{"node_id": IDENTITY.node_id, "start": 0, "end": 2, "effective_start": 0}],
        },
        TRACKER_KEY.sign,
    )
    with connect(node.endpoint + "/v1/session", max_size=None) as ws:
        ws.send(json.dumps({"type": "open", "ticket": ticket, "max_length": 16}))
        assert json.loads(ws.recv(timeout=30))["type"] == "opened"
        assert node.open_sessions == 1
        outcome = None
        pausing = threading.Thread(target=node.pause, args=("Paused: a game is running",))
        pausing.start()
        told = json.loads(ws.recv(timeout=30))  # before any next step: no drain to wait out
        pausing.join(30)
    assert told["type"] == "error" and told["reason"] == "node-leaving", told
    assert node.state is NodeState.PAUSED
    paused = [e for e in events if e.kind == "state" and e.state is NodeState.PAUSED][-1]
    released = paused.data["memory_released_s"]
    assert isinstance(released, float) and released >= 0.0
    assert node.snapshot_event().data["memory_released_s"] == released
    assert tracker.count("/deregister") == 1  # the tracker was told
    assert node_threads() == [] and node.open_sessions == 0
    gc.collect()
    assert loaded[0]() is None  # nobody holds the shard: its memory is free
