"""Registration, heartbeat and deregistration over HTTP (TestClient)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from tests.tracker_service.conftest import beat, make_settings, register
from tests.tracker_service.helpers import OTHER_CONTENT, FakeNode, identity_block
from tests.tracker_service.identity_cases import REJECTIONS, Mutation
from tracker_service.app import create_app
from tracker_service.domain.keys import NODE_SESSION_DOMAIN, verify_domain_signature
from tracker_service.domain.wire import b64decode_exact
from tracker_service.store.route_candidates import mark_unreachable
from tracker_service.store.tables import Node
from tracker_service.store.tokens import add_join_token, revoke_join_token


def _reason(response: Any) -> str:
    reason: str = response.json()["reason"]
    return reason


def _expire(client: TestClient, node: FakeNode) -> None:
    database = client.app.state.tracker.database  # type: ignore[attr-defined]
    with database.sessions.begin() as session:
        session.execute(
            update(Node)
            .where(Node.node_id == node.node_id)
            .values(live_until=time.time() - 1, last_heartbeat_at=time.time() - 31)
        )


def test_registration_answers_a_signed_session_and_the_dark_recipe(client: TestClient) -> None:
    node = FakeNode()
    response = register(client, node, identity_block(0, 15))
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["node_id"] == node.node_id
    assert data["recipe"]["status"] == "dark"
    assert data["heartbeat_interval_s"] == 10.0
    credential = data["session"]["credential"]
    assert credential["node_id"] == node.node_id
    assert credential["expires_at"] - credential["issued_at"] == pytest.approx(900.0)
    tracker_key = b64decode_exact(data["tracker_public_key"], 32, "tracker key")
    assert verify_domain_signature(
        tracker_key, data["session"]["signature"], NODE_SESSION_DOMAIN, credential
    )


@pytest.mark.parametrize(
    ("mutate", "fragment"), [pytest.param(m, f, id=name) for name, m, _e, f in REJECTIONS]
)
def test_every_identity_rejection_answers_422_with_its_reason(
    client: TestClient, mutate: Mutation, fragment: str
) -> None:
    block = identity_block()
    mutate(block)
    response = register(client, FakeNode(), block)
    assert response.status_code == 422, response.text
    expected = "fingerprint-mismatch" if "recomputes" in fragment else "bad-identity"
    assert _reason(response) == expected
    assert fragment in response.json()["detail"]


@pytest.mark.parametrize(
    ("capability", "reason", "fragment"),
    [
        (
            {"passed": False, "status": "failed", "diagnostics": ["out of memory"]},
            "not-passed",
            "out of memory",
        ),
        ({"passed": True, "status": "aborted"}, "not-passed", "aborted"),
        ({"shard": {"start": 0, "end": 10}}, "shard-mismatch", "layers 0–10"),
        (
            {"recipe": {"recipe_id": "other", "recipe_version": "1"}},
            "recipe-mismatch",
            "other",
        ),
        (
            {"backend": {"backend_id": "cuda", "device": "cuda:0"}},
            "backend-mismatch",
            "cuda",
        ),
        ({"model": {"model_id": "someone/else"}}, "model-mismatch", "someone/else"),
        ({"validated_at": time.time() - 3 * 86400}, "stale", "min old"),
        ({"validated_at": time.time() - 1800}, "stale", "limit 15 min"),
        ({"validated_at": time.time() + 3600}, "stale", "in the future"),
    ],
)
def test_capability_report_must_prove_the_advertised_identity(
    client: TestClient, capability: dict[str, Any], reason: str, fragment: str
) -> None:
    response = register(client, FakeNode(), identity_block(0, 30), **capability)
    assert (response.status_code, _reason(response)) == (422, reason)
    assert fragment in response.json()["detail"]


@pytest.mark.parametrize("device", ["cuda:7", "some-other-device"])
def test_a_report_from_another_device_class_than_advertised_is_refused(
    client: TestClient, device: str
) -> None:
    backend = {"backend_id": identity_block()["recipe"]["backend_id"], "device": device}
    response = register(client, FakeNode(), identity_block(), backend=backend)
    assert (response.status_code, _reason(response)) == (422, "backend-mismatch")
    assert device in response.json()["detail"]


def test_a_registration_without_a_device_class_is_refused(client: TestClient) -> None:
    response = register(client, FakeNode(device_class=""), identity_block())
    assert (response.status_code, _reason(response)) == (422, "backend-mismatch")
    assert "device_class" in response.json()["detail"]


def test_a_cuda_node_with_a_cuda_report_is_admitted(client: TestClient) -> None:
    backend = {"backend_id": identity_block()["recipe"]["backend_id"], "device": "cuda:1"}
    response = register(client, FakeNode(device_class="cuda"), identity_block(), backend=backend)
    assert response.status_code == 200, response.text


def test_capability_measured_under_another_recipe_digest_is_refused(client: TestClient) -> None:
    recipe = {
        "recipe_id": "smollm2-135m-fp32",
        "recipe_version": "1",
        "runtime_recipe_digest": "f" * 64,
    }
    response = register(client, FakeNode(), identity_block(), recipe=recipe)
    assert (response.status_code, _reason(response)) == (422, "recipe-mismatch")


def test_capability_without_a_recipe_digest_proves_no_recipe(client: TestClient) -> None:
    recipe = {"recipe_id": "smollm2-135m-fp32", "recipe_version": "1"}
    response = register(client, FakeNode(), identity_block(), recipe=recipe)
    assert (response.status_code, _reason(response)) == (422, "recipe-mismatch")


def test_registration_without_a_capability_report_is_refused_no_report(
    client: TestClient,
) -> None:
    response = register(client, FakeNode(), identity_block(), drop_capability=True)
    assert (response.status_code, _reason(response)) == (422, "no-report")


@pytest.mark.parametrize("endpoint", ["http://127.0.0.1:9000", "ws://", "ws://host", "ws://h:x"])
def test_endpoint_must_be_a_websocket_url_with_a_port(client: TestClient, endpoint: str) -> None:
    response = register(client, FakeNode(endpoint=endpoint))
    assert (response.status_code, _reason(response)) == (422, "invalid-request")


def test_heartbeat_keeps_a_node_live_and_records_its_numbers(client: TestClient) -> None:
    node = FakeNode()
    register(client, node)
    response = beat(client, node, load=0.5, open_sessions=3, tokens_served=99, throughput=55.0)
    assert response.status_code == 200, response.text
    assert response.json()["live_until"] > time.time()
    [shown] = client.get("/api/v1/state").json()["nodes"]
    assert (shown["open_sessions"], shown["tokens_served"], shown["throughput"]) == (3, 99, 55.0)


def test_heartbeat_from_an_unknown_node_asks_it_to_re_register(client: TestClient) -> None:
    response = beat(client, FakeNode())
    assert (response.status_code, _reason(response)) == (409, "re-register")


def test_heartbeat_after_the_live_window_is_answered_410_re_register(client: TestClient) -> None:
    node = FakeNode()
    register(client, node)
    _expire(client, node)
    response = beat(client, node)
    assert (response.status_code, _reason(response)) == (410, "re-register")
    assert "no heartbeat for" in response.json()["detail"]
    assert register(client, node).status_code == 200
    assert beat(client, node).status_code == 200


def test_silent_nodes_leave_routing_and_the_model_turns_broken(client: TestClient) -> None:
    first, second = FakeNode(), FakeNode()
    register(client, first, identity_block(0, 15))
    register(client, second, identity_block(15, 30))
    [model] = client.get("/api/v1/state").json()["models"]
    assert model["status"] == "healthy"
    _expire(client, second)
    state = client.get("/api/v1/state").json()
    assert state["models"][0]["status"] == "broken"
    assert state["models"][0]["detail"] == "layers 15–30 are owned by no Shard on the route"
    assert {n["node_id"]: n["live"] for n in state["nodes"]} == {
        first.node_id: True,
        second.node_id: False,
    }


def test_a_node_found_unreachable_no_longer_makes_its_model_healthy(client: TestClient) -> None:
    # Killed with kill -9, a node stays live until its heartbeats lapse; the dialler's
    # failure takes it out of routing at once, and the model's health must agree.
    first, second = FakeNode(), FakeNode()
    register(client, first, identity_block(0, 15))
    register(client, second, identity_block(15, 30))
    database = client.app.state.tracker.database  # type: ignore[attr-defined]
    with database.sessions.begin() as session:
        mark_unreachable(session, second.node_id, "connection refused", now=time.time())
    state = client.get("/api/v1/state").json()
    [model] = state["models"]
    assert model["status"] == "broken"
    assert model["detail"] == "layers 15–30 are owned by no Shard on the route"
    shown = {n["node_id"]: (n["live"], n["reachability"]) for n in state["nodes"]}
    assert shown[second.node_id] == (True, "unreachable")


def test_deregistered_node_leaves_routing_and_must_register_again(client: TestClient) -> None:
    node = FakeNode()
    register(client, node)
    path = f"/api/v1/nodes/{node.node_id}/deregister"
    response = client.post(path, content=b"", headers=node.headers("POST", path, b""))
    assert response.json() == {"status": "deregistered", "node_id": node.node_id}
    assert client.get("/api/v1/state").json()["nodes_total_live"] == 0
    again = beat(client, node)
    assert (again.status_code, _reason(again)) == (409, "re-register")


def test_other_bytes_under_the_same_node_id_are_a_new_registration(client: TestClient) -> None:
    node = FakeNode()
    first = register(client, node, identity_block(0, 15)).json()
    swapped_block = identity_block(0, 15)
    swapped_block["artifact"]["content_digest"] = OTHER_CONTENT
    second = register(client, node, swapped_block).json()
    assert second["rebound"] is True
    assert second["shard_binding_digest"] != first["shard_binding_digest"]
    assert (
        second["session"]["credential"]["session_id"]
        != first["session"]["credential"]["session_id"]
    )
    same = register(client, node, swapped_block).json()
    assert same["rebound"] is False


def test_admin_can_ban_and_a_banned_node_cannot_return(client: TestClient) -> None:
    node = FakeNode()
    register(client, node)
    path = f"/api/v1/admin/nodes/{node.node_id}/ban"
    no_token = client.post(path, json={"reason": "abuse"})
    assert (no_token.status_code, _reason(no_token)) == (401, "admin-required")
    done = client.post(
        path, json={"reason": "abuse"}, headers={"Authorization": "Bearer s3cret-admin"}
    )
    assert done.json()["done"] is True
    refused = beat(client, node)
    assert (refused.status_code, _reason(refused)) == (403, "banned")
    back = register(client, node)
    assert (back.status_code, _reason(back)) == (403, "banned")


def test_admin_remove_takes_a_node_out_but_lets_it_register_again(client: TestClient) -> None:
    node = FakeNode()
    register(client, node)
    admin = {"Authorization": "Bearer s3cret-admin"}
    path = f"/api/v1/admin/nodes/{node.node_id}/remove"
    assert client.post(path, json={"reason": "maintenance"}, headers=admin).status_code == 200
    assert _reason(beat(client, node)) == "re-register"
    assert register(client, node).status_code == 200
    missing = client.post(
        "/api/v1/admin/nodes/" + "0" * 32 + "/remove", json={"reason": "x"}, headers=admin
    )
    assert (missing.status_code, _reason(missing)) == (404, "not-found")


def test_admin_actions_are_disabled_without_a_configured_token(tmp_path: Path) -> None:
    app = create_app(make_settings(tmp_path, admin_token="", background_tasks=False))
    with TestClient(app) as c:
        response = c.post("/api/v1/admin/nodes/" + "0" * 32 + "/ban", json={"reason": "x"})
    assert (response.status_code, _reason(response)) == (403, "admin-required")


def test_private_network_needs_a_valid_unrevoked_join_token(tmp_path: Path) -> None:
    app = create_app(make_settings(tmp_path, private=True, background_tasks=False))
    database = app.state.tracker.database
    with database.sessions.begin() as session:
        row, token = add_join_token(session, label="alice", now=time.time())
        token_id = row.id
    with TestClient(app) as c:
        missing = register(c, FakeNode())
        wrong = register(c, FakeNode(), headers={"X-Meshnet-Join-Token": "mnj_nope"})
        good = register(c, FakeNode(), headers={"X-Meshnet-Join-Token": token})
        with database.sessions.begin() as session:
            revoke_join_token(session, token_id, now=time.time())
        revoked = register(c, FakeNode(), headers={"X-Meshnet-Join-Token": token})
    assert (missing.status_code, _reason(missing)) == (403, "join-token-required")
    assert (wrong.status_code, _reason(wrong)) == (403, "join-token-invalid")
    assert good.status_code == 200
    assert (revoked.status_code, _reason(revoked)) == (403, "join-token-invalid")


def test_body_over_the_limit_is_refused_413_before_it_is_read(tmp_path: Path) -> None:
    app = create_app(make_settings(tmp_path, max_body_bytes=4096, background_tasks=False))
    node = FakeNode()
    with TestClient(app) as c:
        big = b"{" + b" " * 5000 + b"}"
        declared = c.post(
            "/api/v1/nodes/register",
            content=big,
            headers=node.headers("POST", "/api/v1/nodes/register", big),
        )

        def chunks() -> Any:
            for _ in range(10):
                yield b" " * 1000

        chunked = c.post("/api/v1/nodes/register", content=chunks())
    assert (declared.status_code, _reason(declared)) == (413, "body-too-large")
    assert "at most 4096 bytes" in declared.json()["detail"]
    assert (chunked.status_code, _reason(chunked)) == (413, "body-too-large")


def test_openapi_documents_every_route_with_pydantic_bodies(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    register_op = document["paths"]["/api/v1/nodes/register"]["post"]
    assert register_op["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/NodeRegisterCreate"
    }
    schemas = document["components"]["schemas"]
    for name in (
        "NodeRegisterCreate",
        "NodeRegisterPublic",
        "HeartbeatCreate",
        "StatePublic",
        "ErrorPublic",
    ):
        assert name in schemas
    assert "/api/v1/state" in document["paths"]


def test_status_page_shows_models_recipes_and_nodes(client: TestClient) -> None:
    node = FakeNode()
    register(client, node, identity_block(0, 15))
    page = client.get("/")
    assert page.status_code == 200
    assert 'name="viewport"' in page.text
    assert "HuggingFaceTB/SmolLM2-135M-Instruct" in page.text
    assert node.node_id[:12] in page.text and "0–15" in page.text
    assert "broken" in page.text and "dark" in page.text
    assert client.get("/static/status.css").status_code == 200


def test_metrics_report_live_nodes_and_recipes(client: TestClient) -> None:
    register(client, FakeNode())
    text = client.get("/metrics").text
    assert "meshnet_tracker_live_nodes 1.0" in text
    assert 'meshnet_tracker_recipes{status="dark"} 1.0' in text
    assert 'meshnet_tracker_registrations_total{outcome="admitted"} 1.0' in text


def test_heartbeat_reply_says_how_the_tracker_sees_the_node(client: TestClient) -> None:
    from sqlalchemy import update as sql_update

    from tracker_service.store.nodes import set_reachability
    from tracker_service.store.tables import Recipe

    node = FakeNode()
    register(client, node)
    first = beat(client, node).json()
    assert first["status"] == "ok" and first["live_until"] > time.time()
    assert {k: first[k] for k in ("heartbeat_interval_s", "session_expires_at")}  # kept
    assert (first["reachability"], first["reachability_reason"]) == (
        "unchecked",
        "not dialled yet",
    )
    assert first["recipe_status"] == "dark" and first["recipe_detail"]
    database = client.app.state.tracker.database  # type: ignore[attr-defined]
    with database.sessions.begin() as session:
        set_reachability(
            session, node.node_id, status="reachable", reason="dialled back", now=time.time()
        )
        session.execute(sql_update(Recipe).values(status="certified", detail="certified by r1"))
    later = beat(client, node).json()
    assert (later["reachability"], later["reachability_reason"]) == ("reachable", "dialled back")
    assert (later["recipe_status"], later["recipe_detail"]) == ("certified", "certified by r1")


def test_one_node_is_readable_on_its_own_without_signing(client: TestClient) -> None:
    node = FakeNode()
    register(client, node, identity_block(0, 15))
    response = client.get(f"/api/v1/nodes/{node.node_id}")
    assert response.status_code == 200, response.text
    view = response.json()
    assert view["node_id"] == node.node_id and view["live"] is True
    assert (view["shard_start"], view["shard_end"]) == (0, 15)
    assert view["reachability"] == "unchecked"
    [listed] = client.get("/api/v1/state").json()["nodes"]
    assert view == listed
    path = f"/api/v1/nodes/{node.node_id}/deregister"
    client.post(path, content=b"", headers=node.headers("POST", path, b""))
    assert client.get(f"/api/v1/nodes/{node.node_id}").json()["live"] is False


def test_an_unknown_node_is_404_with_a_reason(client: TestClient) -> None:
    response = client.get("/api/v1/nodes/" + "0" * 32)
    assert (response.status_code, _reason(response)) == (404, "not-found")


def test_a_quarantined_node_stopping_cleanly_stays_quarantined(client: TestClient) -> None:
    from tracker_service.store.quarantine import quarantine_node

    node = FakeNode()
    assert register(client, node).status_code == 200
    database = client.app.state.tracker.database  # type: ignore[attr-defined]
    with database.sessions.begin() as session:
        quarantine_node(session, node.node_id, reason="caught", evidence={"accused": node.node_id})
    path = f"/api/v1/nodes/{node.node_id}/deregister"
    response = client.post(path, content=b"", headers=node.headers("POST", path, b""))
    assert response.status_code == 200
    assert client.get(f"/api/v1/nodes/{node.node_id}").json()["state"] == "quarantined"
