"""A node that announces it leaves: the gateway's in-flight route through it fails over
at once, on the announcement (reason ``node-left``), not on a timeout; the answer is
the undisturbed greedy one; and the failed-over request's hops are credited once: the
dropped route's hops for the steps their signed step receipts verified, the replacement
for the positions after them (its replay of the prefix earns nothing).

The departing node keeps serving after it announced (a real node also ends its
sessions itself, ``node-leaving``; here only the tracker's word can move the
route): without the announcement reaching the route session, the request would
finish on the old route with no failover at all.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.support.waiting import wait_until
from tests.tracker_service.gateway_cluster import (
    GatewayCluster,
    announce_departure,
    build_chat_model,
    slow,
    start_cluster,
    stream_completion,
)
from tests.tracker_service.real_nodes import RealNode
from tracker_service.store.credit_tables import CreditBucket

PROMPT = [100, 101, 102]
NEW_TOKENS = 30


@pytest.fixture(scope="module")
def chat_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_chat_model(tmp_path_factory.mktemp("departures-tiny-chat"))


@pytest.fixture
def cluster(chat_model: Path, tmp_path: Path) -> Iterator[GatewayCluster]:
    # A step deadline far past the test: only the announcement can move the route. No
    # audits and no drafts, so every credited position is one the answer needed.
    cluster = start_cluster(
        tmp_path,
        chat_model,
        gateway_step_timeout_s=600.0,
        audit_rate=0.0,
        audit_probation_rate=0.0,
        gateway_speculative_decoding="off",
    )
    try:
        yield cluster
    finally:
        cluster.stop()


def credited(cluster: GatewayCluster) -> dict[str, tuple[int, int]]:
    """(verified hops, tokens) credited to each node so far."""
    with cluster.app.state.tracker.database.session() as session:
        rows = session.execute(select(CreditBucket)).scalars().all()
        totals: dict[str, tuple[int, int]] = {}
        for row in rows:
            hops, tokens = totals.get(row.node_id, (0, 0))
            totals[row.node_id] = (hops + row.hops, tokens + row.tokens)
        return totals


def settled(cluster: GatewayCluster) -> dict[str, tuple[int, int]]:
    """The credit once the closing sessions' commits landed (two equal reads in a row)."""
    last = credited(cluster)
    for _ in range(100):
        time.sleep(0.1)
        now = credited(cluster)
        if now == last and cluster.open_sessions() == 0:
            return now
        last = now
    return last


def test_an_announced_departure_fails_the_route_over_at_once_and_credits_each_step_once(
    cluster: GatewayCluster, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="tracker_service.gateway.requests")
    first = cluster.add_node(0, 2)
    second = [slow(cluster.add_node(2, 4)), slow(cluster.add_node(2, 4))]
    cluster.wait_certified()
    undisturbed = stream_completion(cluster, PROMPT, NEW_TOKENS)
    before = settled(cluster)
    departed: list[RealNode] = []

    def leave_mid_stream(index: int) -> None:
        if index != 5:
            return
        serving = [n for n in second if n.sessions.open_count > 0]
        assert len(serving) == 1, "exactly one second-half node serves the stream"
        answer = announce_departure(cluster, serving[0].as_fake_node())
        assert answer.status_code == 200, answer.text
        departed.append(serving[0])

    def outcome_lines() -> list[str]:
        return [r.getMessage() for r in caplog.records if "outcome=" in r.getMessage()]

    wait_until(lambda: len(outcome_lines()) == 1, 30)  # the undisturbed request's line
    disturbed = stream_completion(cluster, PROMPT, NEW_TOKENS, leave_mid_stream)
    wait_until(lambda: len(outcome_lines()) == 2, 30)
    assert disturbed == undisturbed  # nothing lost, repeated or changed
    line = outcome_lines()[1]
    # the route moved because the tracker heard the node leave, not on a deadline
    assert "failovers=1 failover_reasons=node-left " in line, line
    gone = departed[0]
    stayed = next(n for n in second if n is not gone)
    wait_until(lambda: gone.sessions.open_count == 0, 30, "the departed node's session to end")

    after = settled(cluster)

    def delta(node: RealNode) -> tuple[int, int]:
        hops, tokens = after.get(node.node_id, (0, 0))
        was_hops, was_tokens = before.get(node.node_id, (0, 0))
        return hops - was_hops, tokens - was_tokens

    positions = len(PROMPT) + NEW_TOKENS - 1  # every token but the last is fed once
    # The dropped route pays each hop the steps it verified before the announcement;
    # the replacement pays the rest: each layer is credited every position exactly once.
    assert delta(first) == (2, positions)  # on both routes: two receipts, no position twice
    gone_hops, gone_tokens = delta(gone)
    stayed_hops, stayed_tokens = delta(stayed)
    assert (gone_hops, stayed_hops) == (1, 1)
    assert 0 < gone_tokens < positions  # paid for what it did, before it left
    assert gone_tokens + stayed_tokens == positions
