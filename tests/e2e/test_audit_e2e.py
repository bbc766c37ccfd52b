"""The audits' proof on real processes: a tracker and four node processes of the default
model on loopback, one of them started with MESHNET_TEST_LIE_RATE=1 (it perturbs every
reply). Every hop is audited (rate 1), so the gateway's greedy answers stay exactly
transformers' while the liar is caught by the two honest nodes of its range, quarantined,
told why in its own event stream, and left out of every later route.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.demo.processes import Child, start_node, start_tracker
from tests.e2e.test_gateway_e2e import NEW_TOKENS, Network, greedy_answer, openai_stream
from tests.support.audit_env import audit_every_step
from tests.support.lying_node import start_lying_node
from tests.support.node_lines import registered_node_id
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def lying_network(
    default_model_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Network, str, list[dict[str, Any]]]]:
    workdir = tmp_path_factory.mktemp("audit-e2e")
    registered: dict[str, str] = {}
    liar_events: list[dict[str, Any]] = []

    def on_line(name: str, line: object) -> None:
        if (node_id := registered_node_id(line)) is not None:
            registered[name] = node_id
        if name == "node 4" and isinstance(line, dict):
            liar_events.append(line)

    restore_environment = audit_every_step()
    children: list[Child] = []
    try:
        tracker, url = start_tracker(workdir, on_line, heartbeat_s=1.0)
        children.append(tracker)
        for index, layers in enumerate([(0, 15), (15, 30), (15, 30)], start=1):
            children.append(start_node(index, workdir, url, default_model_dir, layers, on_line))
        children.append(start_lying_node(4, workdir, url, default_model_dir, (15, 30), on_line))
        network = Network(url, workdir, default_model_dir, tracker, {})
        wait_until(
            lambda: (
                len(registered) == 4
                and any(r["status"] == "certified" for r in network.state()["recipes"])
                and sum(n["reachability"] == "reachable" for n in network.state()["nodes"]) == 4
            ),
            400,
            "four reachable nodes and a certified recipe",
        )
        network.node_ids = dict(registered)
        network.nodes = {registered[c.name]: c for c in children[1:]}
        yield network, registered["node 4"], liar_events
    finally:
        restore_environment()
        for child in reversed(children):
            child.stop()


def test_a_lying_node_process_is_quarantined_while_answers_stay_greedy_exact(
    lying_network: tuple[Network, str, list[dict[str, Any]]],
) -> None:
    network, liar, liar_events = lying_network
    expected = greedy_answer(network.model_dir, NEW_TOKENS)

    def liar_state() -> str:
        return str(next(n for n in network.state()["nodes"] if n["node_id"] == liar)["state"])

    for _ in range(12):  # the route picks the liar's range at random among three nodes
        assert openai_stream(network) == expected
        if liar_state() == "quarantined":
            break
    assert liar_state() == "quarantined"
    shown = next(n for n in network.state()["nodes"] if n["node_id"] == liar)
    assert shown["quarantine_evidence"]["accused"] == liar
    assert len(shown["quarantine_evidence"]["majority"]) == 2
    # The accused's own signed receipt binds it to the output the majority disputed.
    assert shown["quarantine_evidence"]["accused_bound_by_receipt"]
    for node in network.state()["nodes"]:
        if node["node_id"] != liar:
            assert node["state"] == "active"
    wait_until(
        lambda: any(
            e.get("state") == "refused" and e.get("reason") == "quarantined" for e in liar_events
        ),
        60,
        "the liar to be told it is quarantined",
    )
    for _ in range(3):  # honest nodes keep serving, exactly
        assert openai_stream(network) == expected
