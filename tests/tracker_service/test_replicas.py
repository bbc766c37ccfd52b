"""Two tracker apps over one database behave as one tracker (the replica story)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.tracker_service.conftest import beat, make_settings, register
from tests.tracker_service.helpers import FakeNode, heartbeat_body, identity_block
from tests.tracker_service.store_backends import BACKENDS, database_url
from tracker_service.app import create_app


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return database_url(request.param, tmp_path, "shared.db")


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


def _long(field: str, value: Any) -> dict[str, Any]:
    block = identity_block()
    section, _, name = field.rpartition(".")
    (block[section] if section else block)[name] = value
    return block


@pytest.mark.parametrize(
    "identity",
    [
        pytest.param(_long("artifact.artifact_id", "m" * 300), id="artifact-id-too-long"),
        pytest.param(_long("recipe.recipe_version", "v" * 65), id="recipe-version-too-long"),
        pytest.param(_long("artifact.architecture", "Llama\x00"), id="nul-in-text"),
        pytest.param(
            {
                **identity_block(0, 15),
                "artifact": {**identity_block()["artifact"], "layer_count": 2**40},
            },
            id="layer-count-too-big",
        ),
    ],
)
def test_identity_fields_the_store_cannot_hold_are_refused_422(
    tmp_path: Path, db_url: str, identity: dict[str, Any]
) -> None:
    with _replica(tmp_path, db_url, "a") as client:
        response = register(client, FakeNode(), identity)
    assert (response.status_code, response.json()["reason"]) == (422, "bad-identity")


@pytest.mark.parametrize(
    "body",
    [
        b'{"load": NaN, "open_sessions": 0, "tokens_served": 0}',
        b'{"load": 0.1, "open_sessions": 0, "tokens_served": 0, "throughput": Infinity}',
        b'{"load": 0.1, "open_sessions": 4294967296, "tokens_served": 0}',
        b'{"load": 0.1, "open_sessions": 0, "tokens_served": 1180591620717411303424}',
    ],
    ids=["nan-load", "infinite-throughput", "open-sessions-over-int32", "tokens-over-int64"],
)
def test_heartbeat_numbers_the_store_cannot_hold_are_refused_422(
    tmp_path: Path, db_url: str, body: bytes
) -> None:
    node = FakeNode()
    path = f"/api/v1/nodes/{node.node_id}/heartbeat"
    with _replica(tmp_path, db_url, "a") as client:
        assert register(client, node).status_code == 200
        response = client.post(path, content=body, headers=node.headers("POST", path, body))
        lifetime = heartbeat_body(tokens_served=2**40)
        big = client.post(path, content=lifetime, headers=node.headers("POST", path, lifetime))
    assert (response.status_code, response.json()["reason"]) == (422, "invalid-request")
    assert big.status_code == 200  # a lifetime token count past 2**31 is fine


def test_capability_extras_with_odd_values_are_stored_or_refused_never_500(
    tmp_path: Path, db_url: str
) -> None:
    with _replica(tmp_path, db_url, "a") as client:
        odd = register(client, FakeNode(), identity_block(), memory={"x": "\x00", "n": 1e308})
        nan = register(client, FakeNode(), identity_block(), wall_time_s=float("nan"))
    assert odd.status_code == 200, odd.text
    assert (nan.status_code, nan.json()["reason"]) == (422, "invalid-request")
