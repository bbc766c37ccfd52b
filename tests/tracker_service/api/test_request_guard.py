"""Route requests need an API key once keys are configured, and are limited per
address otherwise; registrations are limited per address."""

from __future__ import annotations

import time
from pathlib import Path

from fastapi.testclient import TestClient

from tests.tracker_service.conftest import beat, make_settings, register
from tests.tracker_service.helpers import FakeNode
from tracker_service.app import create_app
from tracker_service.errors import AddressLimited
from tracker_service.security.address_limits import AddressRateLimiter
from tracker_service.store.api_keys import add_api_key

ROUTE = {"artifact_id": "nobody/none"}


def test_with_keys_configured_a_route_request_needs_a_valid_key(tmp_path: Path) -> None:
    first = create_app(make_settings(tmp_path, background_tasks=False))
    with first.state.tracker.database.sessions.begin() as session:
        _, key = add_api_key(session, label="alice", now=time.time())
    first.state.tracker.database.dispose()
    app = create_app(make_settings(tmp_path, background_tasks=False))  # starts with the key
    with TestClient(app) as client:
        missing = client.post("/api/v1/routes", json=ROUTE)
        wrong = client.post("/api/v1/routes", json=ROUTE, headers={"Authorization": "Bearer no"})
        good = client.post("/api/v1/routes", json=ROUTE, headers={"Authorization": f"Bearer {key}"})
    app.state.tracker.database.dispose()
    assert missing.status_code == 401 and missing.json()["reason"] == "invalid_api_key"
    assert wrong.status_code == 401
    assert good.status_code == 404  # past the key check: the recipe is simply unknown


def test_without_keys_route_requests_are_limited_per_address(tmp_path: Path) -> None:
    settings = make_settings(
        tmp_path, background_tasks=False, route_requests_per_minute_per_address=2
    )
    app = create_app(settings)
    with TestClient(app) as client:
        answers = [client.post("/api/v1/routes", json=ROUTE) for _ in range(3)]
    app.state.tracker.database.dispose()
    assert [a.status_code for a in answers] == [404, 404, 429]
    assert answers[2].json()["reason"] == "rate-limited"
    assert "retry in" in answers[2].json()["detail"]


def test_registrations_are_limited_per_address(tmp_path: Path) -> None:
    settings = make_settings(
        tmp_path, background_tasks=False, registrations_per_minute_per_address=2
    )
    app = create_app(settings)
    with TestClient(app) as client:
        answers = [register(client, FakeNode()) for _ in range(3)]
    app.state.tracker.database.dispose()
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert answers[2].json()["reason"] == "rate-limited"


def test_the_window_slides_and_memory_stays_bounded() -> None:
    now = [0.0]
    limiter = AddressRateLimiter(2, "requests", clock=lambda: now[0], max_addresses=3)
    limiter.admit("a")
    limiter.admit("a")
    try:
        limiter.admit("a")
        raise AssertionError("the third request in a minute must be refused")
    except AddressLimited as exc:
        assert exc.retry_after_s == 61
    now[0] = 61.0
    limiter.admit("a")  # the window moved on
    for address in ("b", "c", "d", "e"):
        limiter.admit(address)
    assert len(limiter._windows) == 3


def test_an_address_failing_authentication_too_often_is_throttled(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, background_tasks=False, failed_auth_per_minute_per_address=3)
    app = create_app(settings)
    with TestClient(app) as client:
        failures = [client.post("/api/v1/nodes/register", content=b"{}") for _ in range(3)]
        after = register(client, FakeNode())  # valid, but from an address that kept failing
        state = client.get("/api/v1/state")
    app.state.tracker.database.dispose()
    assert [f.status_code for f in failures] == [401, 401, 401]
    assert after.status_code == 429 and after.json()["reason"] == "auth-throttled"
    assert int(after.headers["retry-after"]) >= 1
    assert state.status_code == 200  # a public read takes no credential: never throttled


def test_failed_logins_do_not_throttle_signed_node_requests_from_that_address(
    tmp_path: Path,
) -> None:
    """One client guessing credentials behind a shared NAT must not take its nodes down."""
    settings = make_settings(tmp_path, background_tasks=False, failed_auth_per_minute_per_address=3)
    app = create_app(settings)
    node = FakeNode()
    with TestClient(app) as client:
        failures = [client.get("/api/v1/jobs") for _ in range(4)]
        registered = register(client, node)
        heartbeat = beat(client, node)
        state = client.get("/api/v1/state")
        page = client.get("/")
        path = f"/api/v1/nodes/{node.node_id}/deregister"
        deregistered = client.post(path, content=b"", headers=node.headers("POST", path, b""))
        guessing = client.get("/api/v1/jobs")
    app.state.tracker.database.dispose()
    assert [f.status_code for f in failures] == [401, 401, 401, 429]
    assert registered.status_code == 200
    assert heartbeat.status_code == 200
    assert state.status_code == 200 and page.status_code == 200
    assert deregistered.status_code == 200
    assert guessing.status_code == 429 and guessing.json()["reason"] == "auth-throttled"


def test_bad_node_signatures_never_block_heartbeats_but_do_block_registration(
    tmp_path: Path,
) -> None:
    settings = make_settings(tmp_path, background_tasks=False, failed_auth_per_minute_per_address=3)
    app = create_app(settings)
    node = FakeNode()
    with TestClient(app) as client:
        assert register(client, node).status_code == 200
        path = f"/api/v1/nodes/{node.node_id}/heartbeat"
        forged = [
            client.post(path, content=b"{}", headers={**node.headers("POST", path, b"x")})
            for _ in range(3)
        ]
        heartbeat = beat(client, node)
        again = register(client, FakeNode())
        credentials = client.get("/api/v1/jobs")
    app.state.tracker.database.dispose()
    assert [f.status_code for f in forged] == [401, 401, 401]
    assert heartbeat.status_code == 200  # a valid signature cannot be guessed: never refused
    assert again.status_code == 429 and again.json()["reason"] == "auth-throttled"
    assert credentials.status_code == 401  # the node window is not the credentials one


def test_live_nodes_per_endpoint_host_are_capped(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, background_tasks=False, max_nodes_per_address=2)
    app = create_app(settings)
    first, second = FakeNode(), FakeNode(endpoint="ws://127.0.0.1:9002")
    with TestClient(app) as client:
        admitted = [register(client, first), register(client, second)]
        third = register(client, FakeNode(endpoint="ws://127.0.0.1:9003"))
        again = register(client, first)  # re-registering does not count against itself
        same_machine = register(client, FakeNode(endpoint="ws://localhost:9004"))
        elsewhere = register(client, FakeNode(endpoint="ws://127.0.0.2:9005"))
    app.state.tracker.database.dispose()
    assert [a.status_code for a in admitted] == [200, 200]
    assert third.status_code == 409 and third.json()["reason"] == "too-many-nodes"
    assert again.status_code == 200
    # Counted by the address a name resolves to: another name of the machine counts with it.
    assert same_machine.status_code == 409
    assert elsewhere.status_code == 200  # another address: its own count
