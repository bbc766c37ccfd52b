"""Two tracker apps over one database behave as one tracker (the replica story)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from tests.tracker_service.conftest import beat, make_settings, register
from tests.tracker_service.helpers import FakeNode, heartbeat_body, identity_block
from tests.tracker_service.test_store import POSTGRES_URL, _postgres_param
from tracker_service.app import create_app


@pytest.fixture(params=["sqlite", _postgres_param()])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'shared.db'}"
        return
    engine = create_engine(POSTGRES_URL)
    with engine.begin() as connection:
        connection.execute(text("DROP SCHEMA public CASCADE"))
        connection.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    yield POSTGRES_URL


def _replica(tmp_path: Path, db_url: str, name: str, **overrides: Any) -> TestClient:
    settings = make_settings(
        tmp_path / name,
        db=db_url,
        signing_key="AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
        background_tasks=False,
        **overrides,
    )
    return TestClient(create_app(settings))


def test_replicas_share_nodes_nonces_and_the_ledger(tmp_path: Path, db_url: str) -> None:
    node = FakeNode()
    with _replica(tmp_path, db_url, "a") as a, _replica(tmp_path, db_url, "b") as b:
        first = register(a, node, identity_block(0, 15))
        assert first.status_code == 200, first.text
        assert beat(b, node).status_code == 200  # B knows the node A admitted
        body = heartbeat_body()
        path = f"/api/v1/nodes/{node.node_id}/heartbeat"
        headers = node.headers("POST", path, body)
        assert b.post(path, content=body, headers=headers).status_code == 200
        replay = a.post(path, content=body, headers=headers)  # the nonce B spent
        assert (replay.status_code, replay.json()["reason"]) == (401, "nonce-reused")
        second = register(b, FakeNode(), identity_block(15, 30))
        state_a, state_b = a.get("/api/v1/state").json(), b.get("/api/v1/state").json()
    # One key given by setting: tickets signed by either replica verify alike.
    assert first.json()["tracker_public_key"] == second.json()["tracker_public_key"]
    assert state_a["recipes"] == state_b["recipes"]
    assert [r["status"] for r in state_a["recipes"]] == ["dark"]
    assert state_a["models"][0]["status"] == state_b["models"][0]["status"] == "healthy"


def test_postgres_url_is_read_from_the_environment_name_the_ci_script_exports() -> None:
    # The CI script exports exactly this variable; a rename would silently skip PG tests.
    script = Path(__file__).resolve().parents[2] / ".ci" / "start-postgres.sh"
    assert "export MESHNET_TEST_POSTGRES_URL=postgresql+psycopg://" in script.read_text()
