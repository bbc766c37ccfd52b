"""One API key holding route sessions open: capped per key, and the gateway gated by default.

Tokens are charged when a request closes; with ``n`` up to 8 and
``gateway_max_concurrent=0`` by default, one key held 480 route sessions open at once
before any token limit applied. Here the real tracker app answers real requests;
the sessions a key already holds are taken through the gateway's own cap, as open
answers take them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.tracker_service.conftest import make_settings
from tracker_service.app import create_app
from tracker_service.config import Settings
from tracker_service.gateway.api_keys import TOO_MANY_SESSIONS, Caller
from tracker_service.store.api_keys import add_api_key
from tracker_service.store.db import Database

CAP = 16


@pytest.fixture
def tracker(tmp_path: Path) -> Iterator[tuple[TestClient, Any, list[tuple[int, str]]]]:
    settings = make_settings(tmp_path, background_tasks=False, gateway_max_sessions_per_key=CAP)
    database = Database(settings.database_url())
    database.migrate()
    with database.sessions.begin() as session:  # keys issued before the tracker starts
        issued = [add_api_key(session, label=f"k{i}", now=time.time()) for i in range(2)]
        keys = [(row.id, key) for row, key in issued]
    database.dispose()
    app = create_app(settings)
    with TestClient(app, client=("203.0.113.9", 50000)) as client:
        yield client, app.state.gateway, keys
    app.state.tracker.database.dispose()


def _ask(client: TestClient, key: str, n: int = 1) -> Any:
    body = {"model": "no-model", "n": n, "messages": [{"role": "user", "content": "hi"}]}
    return client.post(
        "/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {key}"}
    )


def test_a_key_cannot_hold_more_route_sessions_than_its_cap(tracker: Any) -> None:
    client, gateway, [(key_id, key), (_, other)] = tracker
    holder = Caller(key_id, "k0", None, None)
    # Two answers of n=8 under way for this key.
    open_answers = [gateway.sessions.open(holder, 8), gateway.sessions.open(holder, 8)]

    refused = _ask(client, key)
    assert refused.status_code == 429, refused.text
    error = refused.json()["error"]
    assert error["code"] == TOO_MANY_SESSIONS and error["type"] == "rate_limit_error"
    assert refused.headers["Retry-After"] == "1"

    # Another key is not held back by this one's sessions (it goes on to find no model).
    assert _ask(client, other).json()["error"]["code"] == "model_not_found"

    for release in open_answers:
        release()
    # Sessions given back: the key goes on; one request of n over the cap never does.
    assert _ask(client, key).json()["error"]["code"] == "model_not_found"
    assert _ask(client, key, n=8).json()["error"]["code"] == "model_not_found"
    assert gateway.sessions.held(holder) == 0  # a refused request gave its sessions back


def test_the_gateway_gates_concurrent_generations_by_default(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    assert settings.gateway_max_concurrent >= 64
    assert 0 < settings.gateway_max_sessions_per_key <= 8 * 4
