"""Reachability: the tracker dials a node's data plane and checks the signed
challenge; unreachable nodes stay listed, unroutable, with the reason."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.support.waiting import wait_until
from tests.tracker_service.conftest import make_settings, register
from tests.tracker_service.real_nodes import RealNode, start_real_node
from tracker_service.app import create_app
from tracker_service.services.reachability import ReachabilityMonitor, Verdict, challenge_url, dial
from tracker_service.store.route_candidates import DialTarget


@pytest.fixture(scope="module")
def node(tiny_model: Path) -> Iterator[RealNode]:
    real = start_real_node(tiny_model, 0, 4)
    yield real
    real.stop()


def dial_once(
    node_id: str, endpoint: str, public_key: bytes, allow_private: bool = True, **kw: Any
) -> Any:
    async def go() -> Any:
        async with httpx.AsyncClient(**kw) as client:
            return await dial(
                client,
                node_id=node_id,
                endpoint=endpoint,
                public_key=public_key,
                timeout_s=2.0,
                allow_private=allow_private,
            )

    return asyncio.run(go())


def test_challenge_url_is_derived_from_the_ws_endpoint() -> None:
    assert challenge_url("ws://10.0.0.2:7000", "ab") == "http://10.0.0.2:7000/v1/challenge?nonce=ab"
    assert challenge_url("wss://n.example:443/x", "ab").startswith("https://n.example:443/v1/")


def test_a_real_node_answers_the_signed_challenge(node: RealNode) -> None:
    verdict = dial_once(node.node_id, node.endpoint, node.public_key)
    assert verdict.status == "reachable"
    assert verdict.latency_ms is not None and verdict.latency_ms >= 0


def test_an_answer_from_another_key_than_the_registered_one_is_unreachable(
    node: RealNode, tiny_model: Path
) -> None:
    impostor = start_real_node(tiny_model, 0, 4)
    try:
        # The registry says node X lives here, but the port answers with another key.
        verdict = dial_once(node.node_id, impostor.endpoint, node.public_key)
    finally:
        impostor.stop()
    assert verdict.status == "unreachable"
    assert "another node answered" in verdict.reason


def test_a_closed_port_is_unreachable_with_an_actionable_reason() -> None:
    verdict = dial_once("0" * 32, "ws://127.0.0.1:9", b"k" * 32)
    assert verdict.status == "unreachable"
    assert "cannot connect" in verdict.reason and "port" in verdict.reason


def answering(reply: Callable[[httpx.Request], httpx.Response]) -> dict[str, Any]:
    return {"transport": httpx.MockTransport(reply)}


def test_a_replayed_answer_for_another_nonce_is_refused(node: RealNode) -> None:
    old = httpx.get(f"{node.server.http_url}/v1/challenge?nonce={'ab' * 16}").json()
    verdict = dial_once(
        node.node_id,
        "ws://127.0.0.1:1",
        node.public_key,
        **answering(lambda _request: httpx.Response(200, json=old)),
    )
    assert verdict.status == "unreachable" and "nonce" in verdict.reason


@pytest.mark.parametrize(
    ("response", "words"),
    [
        (httpx.Response(404, json={}), "HTTP 404"),
        (httpx.Response(200, content=b"<html>"), "not JSON"),
        (httpx.Response(200, json=[1, 2]), "not a JSON object"),
        (httpx.Response(200, content=b" " * 100_000), "implausibly large"),
    ],
    ids=["404", "html", "list", "flood"],
)
def test_a_port_answering_something_else_is_unreachable(
    response: httpx.Response, words: str
) -> None:
    verdict = dial_once(
        "0" * 32, "ws://127.0.0.1:1", b"k" * 32, **answering(lambda _request: response)
    )
    assert verdict.status == "unreachable" and words in verdict.reason


def node_row(state: dict[str, Any], node_id: str) -> dict[str, Any]:
    return next(n for n in state["nodes"] if n["node_id"] == node_id)


def test_registration_is_dialled_in_the_background_and_failures_show_in_state(
    tmp_path: Path, node: RealNode, tiny_model: Path
) -> None:
    settings = make_settings(tmp_path, reachability_poll_s=0.05, reachability_retry_s=0.2)
    app = create_app(settings)
    seen: list[str] = []
    app.state.routing.monitor.on_reachable = lambda target: seen.append(target.node_id)
    gone = start_real_node(tiny_model, 0, 4)
    with TestClient(app) as client:
        assert register(client, node.as_fake_node(), node.identity).status_code == 200
        assert register(client, gone.as_fake_node(), gone.identity).status_code == 200
        gone.stop()  # registered, then its data plane disappears

        def state() -> dict[str, Any]:
            return dict(client.get("/api/v1/state").json())

        wait_until(lambda: node_row(state(), gone.node_id)["reachability"] == "unreachable")
        wait_until(lambda: node_row(state(), node.node_id)["reachability"] == "reachable")
        assert "cannot connect" in node_row(state(), gone.node_id)["reachability_reason"]
        assert "signed challenge" in node_row(state(), node.node_id)["reachability_reason"]
        assert seen == [node.node_id]  # told once, on the transition
        assert "cannot connect" in client.get("/").text  # the page shows the reason too
    app.state.tracker.database.dispose()


def test_a_suspected_node_is_dialled_again_at_once(tmp_path: Path, node: RealNode) -> None:
    settings = make_settings(tmp_path, background_tasks=False, reachability_recheck_s=3600.0)
    app = create_app(settings)
    monitor: ReachabilityMonitor = app.state.routing.monitor
    with TestClient(app) as client:
        register(client, node.as_fake_node(), node.identity)
        assert asyncio.run(monitor.check_due()) == 1
        assert asyncio.run(monitor.check_due()) == 0  # fresh verdict: not due for an hour
        monitor.suspect(node.node_id)
        assert asyncio.run(monitor.check_due()) == 1
        assert monitor.latency_ms(node.node_id) is not None
    app.state.tracker.database.dispose()


def test_a_verdict_for_a_stale_registration_is_not_stored(tmp_path: Path, node: RealNode) -> None:
    settings = make_settings(tmp_path, background_tasks=False)
    app = create_app(settings)
    monitor: ReachabilityMonitor = app.state.routing.monitor
    with TestClient(app) as client:
        register(client, node.as_fake_node(), node.identity)
        stale = DialTarget(
            node.node_id, "ws://old.example:1", node.public_key, 0.0, "unchecked", ("a", "b")
        )
        assert monitor._record([(stale, Verdict("reachable", "old endpoint"))]) == []
        row = node_row(client.get("/api/v1/state").json(), node.node_id)
        assert row["reachability"] == "unchecked"
    app.state.tracker.database.dispose()


def test_public_key_on_the_wire_is_standard_base64(node: RealNode) -> None:
    answer = httpx.get(f"{node.server.http_url}/v1/challenge?nonce={'cd' * 16}").json()
    assert base64.b64decode(answer["public_key"]) == node.public_key
