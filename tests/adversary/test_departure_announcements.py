"""A departure announcement fails a node's route sessions over at once
(docs/wire.md#leaving): a forger who could announce another node's departure would
cut every answer running through it and take it out of routing.

Attacks, each while a user's greedy answer streams through the victim: another
registered node signs a deregister naming the victim in the path; a forger puts
the victim's id in the signed header under its own key. What the user cares about:
the answer completes on its route with no failover, and the victim stays in routing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tracker_service.gateway_cluster import (
    GatewayCluster,
    announce_departure,
    build_chat_model,
    failovers,
    slow,
    start_cluster,
    stream_completion,
)
from tests.tracker_service.helpers import FakeNode

PROMPT = [100, 101, 102]
NEW_TOKENS = 20


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[GatewayCluster]:
    model = build_chat_model(tmp_path / "tiny-chat")
    cluster = start_cluster(tmp_path, model, audit_rate=0.0, audit_probation_rate=0.0)
    try:
        yield cluster
    finally:
        cluster.stop()


def test_no_one_announces_another_nodes_departure(cluster: GatewayCluster) -> None:
    cluster.add_node(0, 2)
    victim = slow(cluster.add_node(2, 4))
    attacker = cluster.add_node(0, 2)  # a registered node of the same network
    cluster.wait_certified()
    undisturbed = stream_completion(cluster, PROMPT, NEW_TOKENS)
    refusals: list[tuple[int, str]] = []

    def attack(index: int) -> None:
        if index != 3:
            return
        assert victim.sessions.open_count == 1, "the answer runs through the victim"
        forged = [
            announce_departure(cluster, attacker.as_fake_node(), path_node=victim.node_id),
            announce_departure(cluster, attacker.as_fake_node(), header_node=victim.node_id),
            announce_departure(cluster, FakeNode(), path_node=victim.node_id),  # a stranger
        ]
        refusals.extend((r.status_code, r.json().get("reason", "")) for r in forged)

    before = failovers(cluster)
    answered = stream_completion(cluster, PROMPT, NEW_TOKENS, attack)
    assert answered == undisturbed
    assert failovers(cluster) == before  # the answer was never cut
    assert [status for status, _ in refusals] == [401, 401, 401], refusals
    assert cluster.app.state.tracker.departures.announced == 0
    with cluster.http() as http:
        listed = http.get(f"/api/v1/nodes/{victim.node_id}").json()
    assert listed["live"] is True  # still in routing
