"""A real uvicorn tracker on loopback: the e2e node flow, and the ledger across kill -9."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.tracker_service.conftest import beat, register
from tests.tracker_service.helpers import FakeNode, identity_block
from tests.tracker_service.server_process import REPO, TrackerProcess, certify_through_the_ledger
from tests.tracker_service.store_backends import needs_postgres, reset_postgres
from tracker_service.domain.recipe_identity import parse_identity
from tracker_service.store.db import Database
from tracker_service.store.ledger import evidence_for, get_recipe

pytestmark = pytest.mark.slow


@pytest.fixture
def tracker(tmp_path: Path) -> Iterator[TrackerProcess]:
    process = TrackerProcess(tmp_path, f"sqlite:///{tmp_path / 'tracker.db'}").start()
    yield process
    process.stop()


def test_nodes_register_heartbeat_and_show_in_state_over_real_http(
    tracker: TrackerProcess,
) -> None:
    head, tail = FakeNode(endpoint="ws://127.0.0.1:7001"), FakeNode(endpoint="ws://127.0.0.1:7002")
    with httpx.Client(base_url=tracker.url, timeout=10.0) as client:
        first = register(client, head, identity_block(0, 15))
        assert first.status_code == 200, first.text
        broken = client.get("/api/v1/state").json()["models"][0]
        assert (broken["status"], broken["detail"]) == (
            "broken",
            "layers 15–30 are owned by no Shard on the route",
        )
        assert register(client, tail, identity_block(15, 30)).status_code == 200
        assert beat(client, head, tokens_served=7).status_code == 200
        assert beat(client, tail).status_code == 200
        state = client.get("/api/v1/state").json()
        page = client.get("/")
    [model] = state["models"]
    assert model["status"] == "healthy" and model["live_nodes"] == 2
    assert [r["status"] for r in state["recipes"]] == ["dark"]
    ranges = {n["node_id"]: (n["shard_start"], n["shard_end"]) for n in state["nodes"]}
    assert ranges == {head.node_id: (0, 15), tail.node_id: (15, 30)}
    assert page.status_code == 200 and "healthy" in page.text


def test_dark_and_certified_recipes_and_evidence_survive_kill_9(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'tracker.db'}"
    tracker = TrackerProcess(tmp_path, db_url).start()
    try:
        with httpx.Client(base_url=tracker.url, timeout=10.0) as client:
            assert register(client, FakeNode(), identity_block(0, 15)).status_code == 200
            certify_through_the_ledger(
                db_url, "rs-kill9"
            )  # promotion committed while the tracker runs
            # The tracker's own last write before the kill: a second, dark recipe.
            fp16 = identity_block(0, 30, compute_dtype="float16", recipe_id="smollm2-fp16")
            assert register(client, FakeNode(), fp16).status_code == 200
        tracker.kill9()
        assert tracker.process is not None and tracker.process.returncode == -9
        tracker.start()
        with httpx.Client(base_url=tracker.url, timeout=10.0) as client:
            recipes = client.get("/api/v1/state").json()["recipes"]
    finally:
        tracker.stop()
    by_id = {r["recipe_id"]: r for r in recipes}
    assert by_id["smollm2-135m-fp32"]["status"] == "certified"
    assert by_id["smollm2-135m-fp32"]["certified_route_session"] == "rs-kill9"
    assert by_id["smollm2-135m-fp32"]["certified_node_count"] == 2
    assert by_id["smollm2-fp16"]["status"] == "dark"
    database = Database(db_url)
    with database.session() as session:
        row = get_recipe(session, parse_identity(identity_block(0, 15)).key)
        assert row is not None
        [evidence] = evidence_for(session, row.id)
    database.dispose()
    assert evidence.tokens_generated == 16 and evidence.node_ids == ["a" * 32, "b" * 32]
    table = subprocess.run(
        [sys.executable, "-m", "tracker_service.cli", "recipes", "--db", db_url],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "certified" in table and "rs-kill9" in table and "smollm2-fp16" in table


@needs_postgres
def test_two_tracker_processes_start_together_on_one_postgres_and_serve_as_one(
    tmp_path: Path,
) -> None:
    # No reachability dials: the fake node listens nowhere, and a dial landing before the
    # state read would mark it unreachable and the model broken (seen under load).
    replicas = [
        TrackerProcess(tmp_path, reset_postgres(), MESHNET_TRACKER_BACKGROUND_TASKS="false")
        for _ in range(2)
    ]
    # Started at once: both migrate the empty database (the advisory lock serialises them).
    starters = [threading.Thread(target=replica.start) for replica in replicas]
    for starter in starters:
        starter.start()
    for starter in starters:
        starter.join()
    node = FakeNode()
    try:
        with (
            httpx.Client(base_url=replicas[0].url, timeout=10.0) as a,
            httpx.Client(base_url=replicas[1].url, timeout=10.0) as b,
        ):
            admitted = register(a, node, identity_block(0, 30))
            beat_b = beat(b, node)
            state_b = b.get("/api/v1/state").json()
    finally:
        for replica in replicas:
            replica.stop()
    assert admitted.status_code == 200, admitted.text
    assert beat_b.status_code == 200, beat_b.text
    assert state_b["models"][0]["status"] == "healthy"
    assert [n["node_id"] for n in state_b["nodes"]] == [node.node_id]


def test_serve_with_two_workers_answers_as_one_tracker(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'tracker.db'}"
    tracker = TrackerProcess(tmp_path, db_url, extra_args=("--workers", "2")).start()
    node = FakeNode()
    try:
        # No keep-alive: each request is a new connection, which either worker may accept.
        fresh = httpx.Limits(max_keepalive_connections=0)
        with httpx.Client(base_url=tracker.url, timeout=10.0, limits=fresh) as client:
            admitted = register(client, node, identity_block(0, 30))
            beats = [beat(client, node).status_code for _ in range(6)]
            keys = {register(client, FakeNode()).json()["tracker_public_key"] for _ in range(4)}
    finally:
        tracker.stop()
    assert admitted.status_code == 200, admitted.text
    assert beats == [200] * 6
    assert len(keys) == 1  # every worker signs with the one key made before they started


def test_a_quarantine_survives_kill_9_and_the_node_stays_refused(tmp_path: Path) -> None:
    from tracker_service.store.quarantine import quarantine_node

    db_url = f"sqlite:///{tmp_path / 'tracker.db'}"
    tracker = TrackerProcess(tmp_path, db_url).start()
    liar, honest = FakeNode(), FakeNode()
    try:
        with httpx.Client(base_url=tracker.url, timeout=10.0) as client:
            for node in (liar, honest):
                assert register(client, node, identity_block(0, 15)).status_code == 200
            database = Database(db_url)
            with database.sessions.begin() as session:  # what the auditor writes
                evidence = {"accused": liar.node_id, "majority": ["x" * 32, "y" * 32]}
                assert quarantine_node(
                    session, liar.node_id, reason="a hop audit found it wrong", evidence=evidence
                )
            database.dispose()
        tracker.kill9()
        tracker.start()
        with httpx.Client(base_url=tracker.url, timeout=10.0) as client:
            refused = beat(client, liar)
            again = register(client, liar, identity_block(0, 15))
            ok = beat(client, honest)
            shown = client.get(f"/api/v1/nodes/{liar.node_id}").json()
    finally:
        tracker.stop()
    assert (refused.status_code, refused.json()["reason"]) == (403, "quarantined")
    assert (again.status_code, again.json()["reason"]) == (403, "quarantined")
    assert ok.status_code == 200
    assert shown["state"] == "quarantined"
    assert shown["quarantine_evidence"]["accused"] == liar.node_id
