"""The heartbeat hot path: grouped commits, the shortcut ahead of the router, the reply's view."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from tests.tracker_service.conftest import beat, make_settings, register
from tests.tracker_service.helpers import FakeNode, heartbeat_body
from tests.tracker_service.store_backends import (
    BACKENDS,
    reset_postgres,
)
from tests.tracker_service.store_rows import heartbeat_values, register_in_store
from tracker_service.api.routes.heartbeat import heartbeat_node_id
from tracker_service.app import create_app
from tracker_service.config import Settings
from tracker_service.store.db import Database
from tracker_service.store.group_commit import HeartbeatCommits
from tracker_service.store.nodes import set_reachability
from tracker_service.store.tables import Recipe


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    db = Database(f"sqlite:///{tmp_path / 'store.db'}")
    db.migrate()
    yield db
    db.dispose()


def test_heartbeats_arriving_together_share_one_commit_and_a_repeated_nonce_counts_once(
    database: Database,
) -> None:
    now = time.time()
    first, second = FakeNode(), FakeNode()
    register_in_store(database, first, now)
    register_in_store(database, second, now)
    commits = HeartbeatCommits(database)
    batches: list[int] = []
    write_batch = commits.writer.beat_many_viewed

    def recording(batch: Any) -> list[Any]:
        batches.append(len(batch))
        return write_batch(batch)

    commits.writer.beat_many_viewed = recording  # type: ignore[method-assign]

    async def together() -> list[tuple[bool, bool]]:
        return list(
            await asyncio.gather(
                commits.beat(heartbeat_values(first.node_id, "aa" * 16, now)),
                commits.beat(heartbeat_values(second.node_id, "bb" * 16, now)),
                commits.beat(heartbeat_values(first.node_id, "aa" * 16, now)),
                commits.beat(heartbeat_values("e" * 32, "cc" * 16, now)),
            )
        )

    outcomes = asyncio.run(together())
    assert batches == [4]
    assert outcomes == [(True, True), (True, True), (False, False), (True, False)]
    # Committed: a later heartbeat with a spent nonce is refused from the store.
    again = asyncio.run(commits.beat(heartbeat_values(second.node_id, "bb" * 16, now)))
    assert again == (False, False)


def test_a_failed_grouped_commit_fails_every_heartbeat_in_it(database: Database) -> None:
    now = time.time()
    node = FakeNode()
    register_in_store(database, node, now)
    with database.engine.begin() as connection:
        connection.exec_driver_sql("DROP TABLE spent_nonces")
    commits = HeartbeatCommits(database)

    async def together() -> list[Any]:
        return list(
            await asyncio.gather(
                commits.beat(heartbeat_values(node.node_id, "aa" * 16, now)),
                commits.beat(heartbeat_values(node.node_id, "bb" * 16, now)),
                return_exceptions=True,
            )
        )

    outcomes = asyncio.run(together())
    assert [type(outcome) for outcome in outcomes] == [sqlite3.OperationalError] * 2


# The stopped loop never runs its flush task: that is the situation under test.
@pytest.mark.filterwarnings("ignore:coroutine 'HeartbeatCommits._flush_all' was never awaited")
def test_a_heartbeat_left_pending_by_a_stopped_loop_does_not_stall_the_next_loop(
    database: Database,
) -> None:
    now = time.time()
    node = FakeNode()
    register_in_store(database, node, now)
    commits = HeartbeatCommits(database)
    old = asyncio.new_event_loop()
    orphan = old.create_task(commits.beat(heartbeat_values(node.node_id, "aa" * 16, now)))
    old.call_soon(old.stop)  # stops after the beat queued itself, before its flush ran
    old.run_forever()
    assert not orphan.done()
    old.close()  # with the flush still queued on it: it never runs

    async def next_beat() -> tuple[bool, bool]:
        return await asyncio.wait_for(
            commits.beat(heartbeat_values(node.node_id, "bb" * 16, now)), 30
        )

    assert asyncio.run(next_beat()) == (True, True)


@pytest.mark.parametrize(
    ("method", "path", "root_path", "expected"),
    [
        ("POST", "/api/v1/nodes/abc/heartbeat", "", "abc"),
        ("GET", "/api/v1/nodes/abc/heartbeat", "", None),
        ("POST", "/api/v1/nodes//heartbeat", "", None),
        ("POST", "/api/v1/nodes/a/b/heartbeat", "", None),
        ("POST", "/api/v1/nodes/abc/heartbeat/", "", None),
        ("POST", "/api/v1/nodes/abc/deregister", "", None),
        ("POST", "/tracker/api/v1/nodes/abc/heartbeat", "/tracker", None),
    ],
)
def test_the_shortcut_takes_exactly_the_requests_the_heartbeat_route_would(
    method: str, path: str, root_path: str, expected: str | None
) -> None:
    scope = {"type": "http", "method": method, "path": path, "root_path": root_path}
    assert heartbeat_node_id(scope) == expected


def test_under_a_root_path_the_route_answers_heartbeats_with_the_same_checks(
    settings: Settings,
) -> None:
    app = create_app(settings)
    node = FakeNode()
    with TestClient(app, root_path="/tracker") as client:
        assert register(client, node).status_code == 200
        path = f"/tracker/api/v1/nodes/{node.node_id}/heartbeat"
        body = heartbeat_body()
        headers = node.headers("POST", path, body)
        first = client.post(path, content=body, headers=headers)
        replay = client.post(path, content=body, headers=headers)
        metrics = client.get("/tracker/metrics").text
    app.state.tracker.database.dispose()
    assert first.status_code == 200, first.text
    assert first.json()["status"] == "ok"
    assert (replay.status_code, replay.json()["reason"]) == (401, "nonce-reused")
    assert 'meshnet_tracker_heartbeats_total{outcome="ok"} 1.0' in metrics


def test_a_repeated_signed_header_counts_its_first_value(client: TestClient) -> None:
    node = FakeNode()
    register(client, node)
    path = f"/api/v1/nodes/{node.node_id}/heartbeat"
    body = heartbeat_body()
    signed = node.headers("POST", path, body)
    headers = [(name, value) for name, value in signed.items()]
    headers.append(
        ("X-Meshnet-Signature", node.headers("POST", path, b"other")["X-Meshnet-Signature"])
    )
    assert client.post(path, content=body, headers=headers).status_code == 200
    forged = [(name, value) for name, value in signed.items() if name != "X-Meshnet-Signature"]
    forged.insert(0, ("X-Meshnet-Signature", signed["X-Meshnet-Signature"][::-1]))
    forged.append(("X-Meshnet-Signature", signed["X-Meshnet-Signature"]))
    refused = client.post(path, content=body, headers=forged)
    assert (refused.status_code, refused.json()["reason"]) == (401, "bad-signature")
    assert beat(client, node).status_code == 200


def test_heartbeats_purge_nonces_past_the_window_and_keep_fresh_ones(client: TestClient) -> None:
    context = client.app.state.tracker  # type: ignore[attr-defined]
    context.nonces.PURGE_EVERY_S = 0.0  # every request may purge, not only the registration
    node = FakeNode()
    register(client, node)
    database: Database = context.database
    with database.engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO spent_nonces (node_id, nonce, expires_at) VALUES (?, ?, ?)",
            (node.node_id, "ab" * 16, time.time() - 1),
        )
    assert beat(client, node).status_code == 200
    with database.engine.connect() as connection:
        left = connection.exec_driver_sql("SELECT nonce FROM spent_nonces").scalars().all()
    assert len(left) == 2 and "ab" * 16 not in left  # the registration's and the heartbeat's


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest) -> str:
    """ "" (the tracker's own SQLite file) or the PostgreSQL test server, its schema fresh."""
    return "" if request.param == "sqlite" else reset_postgres()


def test_the_reply_carries_the_nodes_view_from_the_heartbeats_own_commit(
    store_url: str, tmp_path: Path
) -> None:
    app = create_app(make_settings(tmp_path, background_tasks=False, db=store_url))
    node = FakeNode()
    with TestClient(app) as client:
        database: Database = app.state.tracker.database
        register(client, node)
        reads: list[str] = []
        run_quick = database.run_quick

        async def recording(fn: Any, *args: Any, **kwargs: Any) -> Any:
            reads.append(getattr(fn, "__name__", repr(fn)))
            return await run_quick(fn, *args, **kwargs)

        database.run_quick = recording  # type: ignore[method-assign]
        first = beat(client, node).json()
        with database.sessions.begin() as session:
            set_reachability(
                session, node.node_id, status="reachable", reason="dialled back", now=time.time()
            )
            session.execute(update(Recipe).values(status="certified", detail="certified by r1"))
        later = beat(client, node).json()
    database.dispose()
    seen = ("reachability", "reachability_reason", "recipe_status")
    assert [first[key] for key in seen] == ["unchecked", "not dialled yet", "dark"]
    assert first["recipe_detail"]
    assert [later[key] for key in seen] == ["reachable", "dialled back", "certified"]
    assert later["recipe_detail"] == "certified by r1"
    assert reads == []  # a successful heartbeat reads nothing after its commit
