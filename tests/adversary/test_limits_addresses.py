"""Per-address limits count an IPv6 /64 as one address.

A home or a VPS is handed a whole /64; limits on exact addresses let one machine
pose as 2^64 clients. Each limit here is met from fresh addresses of one /64 (each
address used once), and must still hold; another /64 is not held back: registrations
and invite redemptions, failed authentications, relay links and live nodes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.tracker_service.conftest import make_settings, register
from tests.tracker_service.helpers import FakeNode
from tracker_service.app import create_app
from tracker_service.domain.address_groups import address_group
from tracker_service.relay.hub import RelayHub, RelaySettings

LIMIT = 3
ONE_HOME = [f"2001:db8:7:7::{i:x}" for i in range(1, 2 * LIMIT + 2)]
ELSEWHERE = "2001:db8:7:8::1"


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Any]:
    app = create_app(
        make_settings(
            tmp_path,
            background_tasks=False,
            registrations_per_minute_per_address=LIMIT,
            failed_auth_per_minute_per_address=LIMIT,
        )
    )
    yield app
    app.state.tracker.database.dispose()


def _from(app: Any, host: str) -> TestClient:
    return TestClient(app, client=(host, 40000))


def test_addresses_of_one_slash_64_share_one_group() -> None:
    assert address_group("2001:db8:7:7::1") == address_group("2001:db8:7:7:ffff::9")
    assert address_group("2001:db8:7:7::1") == "2001:db8:7:7::/64"
    assert address_group("2001:db8:7:8::1") != address_group("2001:db8:7:7::1")
    assert address_group("::ffff:203.0.113.5") == "203.0.113.5"
    assert address_group("203.0.113.5") == "203.0.113.5"


def test_invite_redemptions_are_limited_per_slash_64(app: Any) -> None:
    statuses = [_from(app, host).post("/api/v1/invites/redeem").status_code for host in ONE_HOME]
    assert 429 not in statuses[:LIMIT]
    assert set(statuses[LIMIT:]) == {429}, statuses
    assert _from(app, ELSEWHERE).post("/api/v1/invites/redeem").status_code != 429


def test_failed_authentications_are_throttled_per_slash_64(app: Any) -> None:
    def ask(host: str) -> Any:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        return _from(app, host).post("/v1/chat/completions", json=body)

    # No keys configured: a caller off loopback is refused 401, a failed authentication.
    first = [ask(host).status_code for host in ONE_HOME[:LIMIT]]
    assert first == [401] * LIMIT
    throttled = ask(ONE_HOME[LIMIT])
    assert throttled.status_code == 429, throttled.text
    assert throttled.json()["error"]["code"] == "auth_throttled"
    assert ask(ELSEWHERE).status_code == 401


def test_relay_links_are_capped_per_slash_64() -> None:
    hub = RelayHub(RelaySettings(max_links_per_address=2))
    nodes = [c * 32 for c in "abcd"]
    assert hub.reserve_link(nodes[0], ONE_HOME[0]) is None
    assert hub.reserve_link(nodes[1], ONE_HOME[1]) is None
    refusal = hub.reserve_link(nodes[2], ONE_HOME[2])
    assert refusal is not None and "2001:db8:7:7::/64 already holds 2 links" in refusal
    assert hub.reserve_link(nodes[3], ELSEWHERE) is None


def test_live_nodes_are_capped_per_slash_64(tmp_path: Path) -> None:
    """Nodes naming endpoints on addresses of one /64 share the per-address node cap."""
    app = create_app(make_settings(tmp_path, background_tasks=False, max_nodes_per_address=2))
    try:
        with TestClient(app) as client:
            statuses = []
            for host in [*ONE_HOME[:3], ELSEWHERE]:
                node = FakeNode()
                node.endpoint = f"ws://[{host}]:7000"
                statuses.append(register(client, node))
    finally:
        app.state.tracker.database.dispose()
    codes = [r.status_code for r in statuses]
    assert codes == [200, 200, 409, 200], [r.text for r in statuses]
    assert statuses[2].json()["reason"] == "too-many-nodes"
