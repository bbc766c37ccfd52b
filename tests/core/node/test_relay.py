"""When a node goes through a relay (core/node/relay.py): only on an 'unreachable'
verdict or with --relay, only where a relay is offered, and it says why."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from core.dataplane.relay_link import CONNECTED
from core.events import Gate
from core.network.tracker_client import HeartbeatAck
from core.node.relay import WHY_FLAG, NodeRelay, offered_relay
from tests.tracker_service.real_nodes import RealNode, build_tiny_model, start_real_node
from tests.tracker_service.relay_server import RelayThread


@dataclass
class FakeNode:
    """What NodeRelay reads of a node: settings, identity, registration, data plane."""

    real: RealNode
    relay_url: str | None
    flag: bool = False
    gates: list[tuple[Gate, str, dict[str, Any]]] = field(default_factory=list)

    @property
    def settings(self) -> Any:
        return SimpleNamespace(relay=self.flag, relay_url=None, max_frame_bytes=1 << 20)

    @property
    def identity(self) -> Any:
        return SimpleNamespace(
            node_id=self.real.node_id, public_key_raw=self.real.public_key, sign=self.real.key.sign
        )

    @property
    def registration(self) -> Any:
        offer = {"relay": {"url": self.relay_url}} if self.relay_url else {}
        return SimpleNamespace(raw=offer)

    @property
    def data_plane(self) -> Any:
        return self.real.server

    def gate(self, gate: Gate, _state: Any, message: str, _reason: Any, **data: Any) -> None:
        self.gates.append((gate, message, data))


def ack(reachability: str, reason: str = "") -> HeartbeatAck:
    return HeartbeatAck(1.0, 0.0, reachability=reachability, reachability_reason=reason)


@pytest.fixture(scope="module")
def real_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealNode]:
    node = start_real_node(build_tiny_model(tmp_path_factory.mktemp("node-relay")), 0, 2)
    yield node
    node.stop()


@pytest.fixture(scope="module")
def relay() -> Iterator[RelayThread]:
    running = RelayThread().start()
    yield running
    running.stop()


def test_the_offer_is_read_from_the_registration_reply() -> None:
    assert offered_relay({"relay": {"url": "ws://r:1/relay"}}) == "ws://r:1/relay"
    for reply in ({}, {"relay": None}, {"relay": {"url": "http://r/"}}, {"relay": {"url": 3}}):
        assert offered_relay(reply) is None


def test_a_reachable_node_or_one_without_an_offer_keeps_serving_directly(
    real_node: RealNode,
) -> None:
    offered = NodeRelay(FakeNode(real_node, "ws://127.0.0.1:9/relay"))  # type: ignore[arg-type]
    assert not offered.consider(ack("reachable")) and offered.link is None
    assert not offered.consider(ack("unchecked")) and offered.link is None
    none_offered = NodeRelay(FakeNode(real_node, None))  # type: ignore[arg-type]
    assert (
        not none_offered.consider(ack("unreachable", "timed out")) and none_offered.endpoint is None
    )
    assert not none_offered.after_registration()  # no --relay: nothing to do at start


def test_an_unreachable_verdict_opens_the_link_and_says_why(
    real_node: RealNode, relay: RelayThread
) -> None:
    node = FakeNode(real_node, relay.url)
    relayed = NodeRelay(node)  # type: ignore[arg-type]
    try:
        assert relayed.consider(ack("unreachable", "no answer within 3 s"))
        assert relayed.link is not None and relayed.link.state == CONNECTED
        assert relayed.endpoint == f"{relay.url}/{real_node.node_id}"
        assert "no answer within 3 s" in relayed.why
        assert not relayed.consider(ack("unreachable"))  # one link; it reconnects by itself
        sentence = relayed.sentence("answered through its relay")
        assert sentence.startswith("Serving through a relay") and relayed.why in sentence
        assert any(data.get("relay_state") == CONNECTED for _, _, data in node.gates)
    finally:
        relayed.stop()
    assert relayed.endpoint is None


def test_the_relay_flag_opens_the_link_right_after_registering(
    real_node: RealNode, relay: RelayThread
) -> None:
    relayed = NodeRelay(FakeNode(real_node, relay.url, flag=True))  # type: ignore[arg-type]
    try:
        assert relayed.after_registration()
        assert relayed.why == WHY_FLAG and relayed.endpoint is not None
        assert relayed.reason == WHY_FLAG  # what the relayed registration tells the tracker
        assert not relayed.after_registration()
    finally:
        relayed.stop()
    assert relayed.reason is None  # no link: a direct registration says nothing of a relay


def test_the_cli_flags_reach_the_node_settings(tmp_path: Path) -> None:
    from app.cli.node import build_parser as node_parser
    from tracker_service.cli.commands import build_parser as tracker_parser

    run = node_parser().parse_args(
        ["run", "--tracker", "http://t:1", "--relay", "--relay-url", "ws://r:2/relay"]
    )
    assert run.relay and run.relay_url == "ws://r:2/relay"
    relay = tracker_parser().parse_args(["relay", "--port", "9000", "--node-mbit-per-s", "8"])
    assert relay.port == 9000 and relay.node_mbit_per_s == 8.0
    serve = tracker_parser().parse_args(["serve", "--relay-url", "ws://a:1/relay"])
    assert serve.relay_url == ["ws://a:1/relay"]
