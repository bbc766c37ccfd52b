"""The tracker's own (embedded) relay, on a real tracker served by uvicorn on loopback.

A real tiny node registers directly, is offered the tracker's relay, links to it
and registers the relayed endpoint: the tracker dials it through the relay,
lists it as serving through a relay (state, page, metrics), counts the relay in
the hop's latency, and certifies a recipe with a real distributed forward whose
first hop is relayed.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.dataplane.relay_link import CONNECTED, Backoff, RelayLink, relay_endpoint
from tests.support.waiting import wait_until
from tests.tracker_service.audit_network import fast_settings
from tests.tracker_service.conftest import register
from tests.tracker_service.real_nodes import RealNode, start_real_node
from tests.tracker_service.relay_server import RelayThread
from tracker_service.app import create_app


@pytest.fixture
def tracker(tmp_path: Path) -> Iterator[RelayThread]:
    app = create_app(fast_settings(tmp_path, heartbeat_interval_s=1.0, relay_hop_penalty_ms=5.0))
    running = RelayThread(app=app, health_path="/api/v1/state").start()
    try:
        yield running
    finally:
        running.stop()


def join(http: httpx.Client, node: RealNode, endpoint: str | None = None) -> dict[str, Any]:
    fake = node.as_fake_node()
    if endpoint is not None:
        fake.endpoint = endpoint
    reply = register(http, fake, node.identity)
    assert reply.status_code == 200, reply.text
    node.tracker_key[0] = base64.b64decode(reply.json()["tracker_public_key"])
    return dict(reply.json())


def listed(http: httpx.Client, node: RealNode) -> dict[str, Any]:
    state = http.get("/api/v1/state").json()
    return dict(next(n for n in state["nodes"] if n["node_id"] == node.node_id))


def test_a_node_serves_through_the_trackers_own_relay_and_a_recipe_certifies_through_it(
    tracker: RelayThread, tiny_model: Path, nodes: list[RealNode]
) -> None:
    nodes += [start_real_node(tiny_model, 0, 2), start_real_node(tiny_model, 1, 4)]
    relayed, direct = nodes
    with httpx.Client(base_url=tracker.http_url, timeout=30) as http:
        offer = join(http, relayed)["relay"]["url"]
        assert offer == f"ws://127.0.0.1:{tracker.port}/relay"
        link = RelayLink(
            offer,
            node_id=relayed.node_id,
            public_key=relayed.public_key,
            sign=relayed.key.sign,
            serve=relayed.server.serve_relayed,
            answer_get=relayed.server.answer_relayed_get,
            max_message_bytes=1 << 22,
            backoff=Backoff(initial_s=0.05),
        )
        loop = relayed.server.loop
        assert loop is not None
        task = asyncio.run_coroutine_threadsafe(link.run_forever(), loop)
        try:
            wait_until(lambda: link.state == CONNECTED)
            assert link.endpoint == relay_endpoint(offer, relayed.node_id)
            join(http, relayed, link.endpoint)
            wait_until(lambda: listed(http, relayed)["reachability"] == "reachable")
            view = listed(http, relayed)
            assert "through its relay" in view["reachability_reason"]
            assert view["relay"]["url"] == offer
            assert view["relay"]["reason"].startswith("serving through a relay")
            assert "Serving through a relay" in http.get("/").text
            routing = tracker.hub  # the embedded relay's hub is the app's
            assert routing is not None and relayed.node_id in routing.links

            join(http, direct)
            wait_until(
                lambda: any(
                    r["status"] == "certified" for r in http.get("/api/v1/state").json()["recipes"]
                ),
                60,
            )
            metrics = http.get("/metrics").text
            assert 'meshnet_relay_links_total{outcome="accepted"}' in metrics
            assert 'meshnet_relay_streams_total{kind="session",outcome="opened"}' in metrics
        finally:
            task.cancel()


def test_the_planner_counts_a_relayed_hops_extra_latency(tmp_path: Path) -> None:
    app = create_app(fast_settings(tmp_path, background_tasks=False, relay_hop_penalty_ms=5.0))
    routing = app.state.routing
    monitor = routing.monitor
    monitor._latency.update({"a" * 32: 3.0, "b" * 32: 3.0})
    monitor.relayed.add("b" * 32)
    assert routing.hop_latency_ms("a" * 32) == 3.0
    assert routing.hop_latency_ms("b" * 32) == 8.0
    monitor.relayed.add("c" * 32)  # relayed but not timed yet: the default plus the relay
    assert routing.hop_latency_ms("c" * 32) == 25.0
    # The planner's one-mapping view of the same figures; untimed direct nodes are absent.
    assert routing.hop_latencies() == {"a" * 32: 3.0, "b" * 32: 8.0, "c" * 32: 25.0}
