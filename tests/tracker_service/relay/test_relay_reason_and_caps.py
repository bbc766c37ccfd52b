"""Why a node is relayed, as the node says it, and the per-address caps that hold
through a relay: the tracker counts a relayed node by the address it registered from,
and a relay caps the links one source address may hold.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from core.dataplane.relay_link import link_headers
from tests.tracker_service.conftest import make_settings
from tests.tracker_service.helpers import FakeNode, identity_block
from tests.tracker_service.relay.test_relay_parts import FakeKey
from tests.tracker_service.relay_server import RelayThread
from tracker_service.app import create_app
from tracker_service.relay.directory import RELAYED_SENTENCE
from tracker_service.relay.hub import RelayHub, RelaySettings

TRACKER = "http://127.0.0.1:8765"  # what TestClient calls the tracker: its relay's host
RELAY = "ws://127.0.0.1:8765/relay"
HOME, OTHER_HOME = ("203.0.113.7", 40000), ("198.51.100.9", 40000)


def relayed(node: FakeNode) -> FakeNode:
    node.endpoint = f"{RELAY}/{node.node_id}"
    return node


def register(client: TestClient, node: FakeNode, relay_reason: Any = None) -> Any:
    payload = json.loads(node.register_body(identity_block(0, 15)))
    if relay_reason is not None:
        payload["relay_reason"] = relay_reason
    body = json.dumps(payload).encode()
    path = "/api/v1/nodes/register"
    return client.post(path, content=body, headers=node.headers("POST", path, body))


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Any]:
    app = create_app(make_settings(tmp_path, background_tasks=False, max_nodes_per_address=2))
    yield app
    app.state.tracker.database.dispose()


@pytest.fixture
def home(app: Any) -> Iterator[TestClient]:
    with TestClient(app, base_url=TRACKER, client=HOME) as client:
        yield client


# -- why --------------------------------------------------------------------------------


def test_the_nodes_reason_is_stored_and_shown_on_state_node_view_and_status_page(
    home: TestClient,
) -> None:
    node = relayed(FakeNode())
    why = "the tracker could not dial this node directly (connect timed out <after 5 s>)"
    assert register(home, node, why).status_code == 200

    [listed] = home.get("/api/v1/state").json()["nodes"]
    view = home.get(f"/api/v1/nodes/{node.node_id}").json()
    for relay in (listed["relay"], view["relay"]):
        assert relay["url"] == RELAY
        assert relay["why"] == why
        assert relay["reason"] == (
            f"serving through a relay: {why}; clients reach it through {RELAY}"
        )
    page = home.get("/").text
    assert "connect timed out &lt;after 5 s&gt;" in page  # shown as text, escaped
    assert "Serving through a relay:</strong> the tracker could not dial" in page


def test_without_a_reason_the_generic_sentence_is_shown(home: TestClient) -> None:
    node = relayed(FakeNode())
    assert register(home, node).status_code == 200
    relay = home.get(f"/api/v1/nodes/{node.node_id}").json()["relay"]
    assert relay == {"url": RELAY, "reason": RELAYED_SENTENCE.format(relay=RELAY), "why": ""}


def test_a_direct_node_keeps_no_relay_reason(home: TestClient) -> None:
    node = FakeNode()  # ws://127.0.0.1:9001: dialled directly
    assert register(home, node, "the node was started with --relay").status_code == 200
    assert home.get(f"/api/v1/nodes/{node.node_id}").json()["relay"] is None


@pytest.mark.parametrize(
    "reason",
    ["two\nlines", "a bell \x07", "x" * 301, 42],
    ids=["newline", "control", "long", "int"],
)
def test_a_relay_reason_that_is_not_one_short_line_of_text_is_refused(
    home: TestClient, reason: Any
) -> None:
    answer = register(home, relayed(FakeNode()), reason)
    assert answer.status_code == 422, answer.text
    assert "relay_reason" in answer.text
    assert home.get("/api/v1/state").json()["nodes"] == []


# -- the tracker's cap, through a relay -------------------------------------------------


def test_relayed_nodes_count_against_the_address_they_register_from(
    app: Any, home: TestClient
) -> None:
    first, second, third = (relayed(FakeNode()) for _ in range(3))
    assert register(home, first).status_code == 200
    assert register(home, second).status_code == 200
    over = register(home, third)
    assert over.status_code == 409 and over.json()["reason"] == "too-many-nodes"
    assert HOME[0] in over.json()["detail"]
    assert register(home, first).status_code == 200  # re-registering: not against itself

    other = TestClient(app, base_url=TRACKER, client=OTHER_HOME)
    assert register(other, third).status_code == 200  # another machine: its own count


def test_direct_and_relayed_nodes_of_one_address_share_one_count(
    app: Any, home: TestClient
) -> None:
    direct = FakeNode(endpoint=f"ws://{HOME[0]}:9001")
    assert register(home, direct).status_code == 200
    assert register(home, relayed(FakeNode())).status_code == 200
    over = register(home, relayed(FakeNode()))
    assert over.status_code == 409 and over.json()["reason"] == "too-many-nodes"
    # The relay's own host is no one's address: other machines' relayed nodes fill it
    # without blocking a direct node there.
    other = TestClient(app, base_url=TRACKER, client=OTHER_HOME)
    assert register(other, FakeNode(endpoint="ws://127.0.0.1:9002")).status_code == 200


# -- the relay's cap on links per source address ----------------------------------------


def test_the_hub_reserves_places_so_a_burst_of_handshakes_cannot_pass_the_cap() -> None:
    hub = RelayHub(RelaySettings(max_links_per_address=2))
    a, b, c = "a" * 32, "b" * 32, "c" * 32
    assert hub.reserve_link(a, "10.0.0.1") is None
    assert hub.reserve_link(b, "10.0.0.1") is None
    refusal = hub.reserve_link(c, "10.0.0.1")  # two handshakes under way already
    assert refusal is not None and "10.0.0.1 already holds 2 links" in refusal
    assert hub.reserve_link(c, "10.0.0.2") is None  # another address
    hub.release_link("10.0.0.1")  # a handshake failed: its place is free again
    assert hub.reserve_link(c, "10.0.0.1") is None
    assert RelayHub(RelaySettings(max_links_per_address=0)).reserve_link(a, "x") is None


async def _link(relay: RelayThread, key: FakeKey) -> Any:
    url = relay.url + "/v1/link"
    return await connect(
        url, additional_headers=link_headers(url, key.node_id, key.public, key.private.sign)
    )


def test_a_relay_refuses_links_past_its_cap_per_source_address_and_says_why() -> None:
    relay = RelayThread(RelaySettings(max_links_per_address=2)).start()

    async def scenario() -> tuple[int, str, int]:
        keys = [FakeKey() for _ in range(3)]
        held = [await _link(relay, keys[0]), await _link(relay, keys[1])]
        try:
            with pytest.raises(InvalidStatus) as refused:
                await _link(relay, keys[2])
            again = await _link(relay, keys[0])  # a node's newer link replaces its own
            held.append(again)
            await asyncio.sleep(0.2)
            assert relay.hub is not None
            links = len(relay.hub.links)
            response = refused.value.response
            return response.status_code, response.body.decode(), links
        finally:
            for ws in held:
                await ws.close()

    try:
        status, body, links = asyncio.run(scenario())
    finally:
        relay.stop()
    assert status == 429
    assert json.loads(body)["detail"]["reason"] == "too-many-links"
    assert "127.0.0.1 already holds 2 links" in json.loads(body)["detail"]["detail"]
    assert links == 2
