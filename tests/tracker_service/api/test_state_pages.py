"""/api/v1/state's node list in pages: every node exactly once, bad parameters refused.

On SQLite and a real PostgreSQL (MESHNET_TEST_POSTGRES_URL). Without `limit`
or `cursor` the answer keeps its earlier shape: the nodes most recently heard
from, at most 1,000 (the status page and the desktop app read it so).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from tests.tracker_service.conftest import make_settings
from tests.tracker_service.routing_fixtures import add_nodes, node_row, register_recipe_of
from tests.tracker_service.store_backends import (
    BACKENDS,
    reset_postgres,
)
from tracker_service.app import create_app
from tracker_service.store.db import Database
from tracker_service.store.tables import NODE_DEREGISTERED


@pytest.fixture(params=BACKENDS)
def app_client(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TestClient]:
    overrides: dict[str, Any] = {"background_tasks": False}
    if request.param == "postgres":
        overrides["db"] = reset_postgres()  # a clean schema for every test
    app = create_app(make_settings(tmp_path, **overrides))
    with TestClient(app) as client:
        yield client
    app.state.tracker.database.dispose()


def _database(client: TestClient) -> Database:
    database: Database = client.app.state.tracker.database  # type: ignore[attr-defined]
    return database


def _add(client: TestClient, count: int) -> set[str]:
    database = _database(client)
    register_recipe_of(database)
    rows = [node_row((i % 2) * 15, (i % 2) * 15 + 15, live_for_s=600.0) for i in range(count)]
    # Some not live: pages list every node row, as the default list does.
    for row in rows[::10]:
        row.state, row.live_until = NODE_DEREGISTERED, 0.0
    return set(add_nodes(database, rows))


def _walk(client: TestClient, limit: int, between: Any = None) -> tuple[list[str], int]:
    seen: list[str] = []
    pages = 0
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": limit}
        if cursor is not None:
            params["cursor"] = cursor
        answer = client.get("/api/v1/state", params=params)
        assert answer.status_code == 200, answer.text
        document = answer.json()
        assert len(document["nodes"]) <= limit
        seen += [node["node_id"] for node in document["nodes"]]
        pages += 1
        cursor = document["next_cursor"]
        if cursor is None:
            return seen, pages
        if between is not None:
            between()


def test_pages_list_every_node_exactly_once(app_client: TestClient) -> None:
    nodes = _add(app_client, 2_500)
    for limit, pages in ((1000, 3), (333, 8), (500, 5)):
        seen, walked = _walk(app_client, limit)
        assert len(seen) == len(set(seen)) == 2_500
        assert set(seen) == nodes
        assert walked == pages
    document = app_client.get("/api/v1/state", params={"limit": 10}).json()
    assert document["nodes_total"] == 2_500
    assert document["nodes_total_live"] == 2_250


def test_heartbeats_between_pages_do_not_move_nodes_across_pages(app_client: TestClient) -> None:
    nodes = _add(app_client, 600)
    database = _database(app_client)
    chosen = random.Random(7)

    def heartbeats() -> None:  # reorders the most-recent list; pages go by node id
        with database.sessions.begin() as session:
            for node_id in chosen.sample(sorted(nodes), 50):
                session.execute(
                    text(
                        "UPDATE nodes SET last_heartbeat_at=last_heartbeat_at+:d WHERE node_id=:n"
                    ),
                    {"d": chosen.uniform(1, 100), "n": node_id},
                )

    seen, _ = _walk(app_client, 45, between=heartbeats)
    assert len(seen) == len(set(seen)) and set(seen) == nodes


def test_without_paging_the_answer_keeps_its_shape(app_client: TestClient) -> None:
    _add(app_client, 1_200)
    document = app_client.get("/api/v1/state").json()
    assert {"generated_at", "models", "recipes", "nodes", "nodes_total_live", "jobs"} <= set(
        document
    )
    assert document["next_cursor"] is None
    assert document["nodes_total"] == 1_200
    assert len(document["nodes"]) == 1_000  # the most recently heard from, as before
    seen = [n["last_seen"] for n in document["nodes"]]
    assert seen == sorted(seen, reverse=True)
    [model] = document["models"]
    assert model["live_nodes"] == 1_080 and model["status"] == "healthy"


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("limit=ten", "limit"),
        ("cursor=!!!", "cursor"),
        ("cursor=AA", "cursor"),  # not hex
        ("cursor=00", "cursor"),  # a NUL byte is no node id
        ("limit=5&cursor=" + "A" * 300, "cursor"),
    ],
)
def test_bad_page_parameters_get_a_sentence(app_client: TestClient, query: str, words: str) -> None:
    answer = app_client.get(f"/api/v1/state?{query}")
    assert answer.status_code == 422
    body = answer.json()
    assert body["reason"] == "invalid-request"
    assert words in body["detail"] and "Traceback" not in answer.text


def test_an_empty_cursor_is_the_first_page(app_client: TestClient) -> None:
    _add(app_client, 3)
    answer = app_client.get("/api/v1/state?cursor=")
    assert answer.status_code == 200
    first = app_client.get("/api/v1/state?limit=1000").json()["nodes"]
    assert [n["node_id"] for n in answer.json()["nodes"]] == [n["node_id"] for n in first]


def test_any_cursor_the_schema_admits_is_a_position(app_client: TestClient) -> None:
    _add(app_client, 3)
    ids = sorted(n["node_id"] for n in app_client.get("/api/v1/state?limit=10").json()["nodes"])
    after_first = app_client.get(f"/api/v1/state?cursor={ids[0].encode().hex()}").json()
    assert [n["node_id"] for n in after_first["nodes"]] == ids[1:]
    # Not issued, yet a position: "~~~" sorts after every hex id, so the page is empty.
    beyond = app_client.get("/api/v1/state?cursor=7e7e7e")
    assert beyond.status_code == 200 and beyond.json()["nodes"] == []


def test_the_cursor_is_documented(app_client: TestClient) -> None:
    operation = app_client.get("/openapi.json").json()["paths"]["/api/v1/state"]["get"]
    assert {p["name"] for p in operation["parameters"]} == {"limit", "cursor"}
    assert "422" in operation["responses"]
