"""Issue 39: a liar cannot escape a sampled audit by making its route fail over.

Since a failover pays the dropped route's hops for the steps their signed step receipts
verified, a liar might lie, then leave at once (announce its departure, or drop its
connections): the gateway drops the route, and if that cancelled the route's running
audits, the lie would go unjudged and the lying steps paid. Now the dropped route's
audits run to their end (``RouteSession.settle_abandoned``): the liar is quarantined
and the route pays no one.

The real tracker app with its gateway, real in-process nodes over a tiny Llama: one
node on layers 0-2, a liar and two honest nodes on 2-4. Every step of an established
node is audited in the background; the honest nodes replay slowly (a busy PC), so the
audit of the liar's first reply is still running when the liar leaves right after it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from core.dataplane.hop import HopSession
from tests.support.lies import routes_only, slow_replays
from tests.support.lies.rate import Lie
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

pytestmark = pytest.mark.slow

NEW_TOKENS = 40  # at slow()'s pace, the route outlasts the departure's round trip
REPLAY_STEP_S = 2.0  # an audit of one step takes two such replays: the departure comes first


@pytest.fixture(scope="module")
def chat_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_chat_model(tmp_path_factory.mktemp("failover-audits-tiny-chat"))


@pytest.fixture
def cluster(chat_model: Path, tmp_path: Path) -> Iterator[GatewayCluster]:
    # Every node established at once (audited in the background, judges right away);
    # every step sampled while the hop has no audit running; no drafts.
    cluster = start_cluster(
        tmp_path,
        chat_model,
        gateway_step_timeout_s=60.0,
        audit_rate=1.0,
        audit_probation_audits=0,
        auditor_min_audits=0,
        auditor_min_age_s=0.0,
        gateway_speculative_decoding="off",
    )
    try:
        yield cluster
    finally:
        cluster.stop()


def credit_of(cluster: GatewayCluster, node: RealNode) -> int:
    """The tokens credited to ``node`` so far."""
    with cluster.app.state.tracker.database.session() as session:
        rows = session.execute(select(CreditBucket).where(CreditBucket.node_id == node.node_id))
        return sum(row.tokens for row in rows.scalars())


def state_of(cluster: GatewayCluster, node: RealNode) -> str:
    with cluster.http() as http:
        return str(http.get(f"/api/v1/nodes/{node.node_id}").json()["state"])


@pytest.mark.parametrize(
    ("leaves", "reason"), [("announces", "node-left"), ("drops", "connection-closed")]
)
def test_a_liar_that_leaves_right_after_its_lie_is_still_judged_and_paid_nothing(
    leaves: str,
    reason: str,
    cluster: GatewayCluster,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("INFO", logger="tracker_service.gateway.requests")
    lie = Lie(1.0, 0.05, random.Random(7))  # wraps the reply first: inside the gate below
    monkeypatch.setattr(HopSession, "_reply", routes_only.wrap(HopSession._reply))
    monkeypatch.setattr(HopSession, "_step", slow_replays.wrap(HopSession._step))
    monkeypatch.setattr(routes_only, "LIED", [])
    cluster.add_node(0, 2)
    liar = slow(cluster.add_node(2, 4))
    honest = [cluster.add_node(2, 4), cluster.add_node(2, 4)]
    cluster.wait_certified()
    for node in honest:
        monkeypatch.setitem(slow_replays.SLOW, node.node_id, REPLAY_STEP_S)
    liar.server._ctx.lie = lie  # type: ignore[attr-defined]
    before = credit_of(cluster, liar)
    left: list[str] = []

    def leave_after_the_lie(index: int) -> None:
        if index != 0 or not routes_only.LIED or left:
            return
        if leaves == "announces":  # a signed deregister: the route fails over at once
            answer = announce_departure(cluster, liar.as_fake_node())
            assert answer.status_code == 200, answer.text
        else:  # the liar's data plane stops: its connection drops
            liar.stop()
        left.append(liar.node_id)

    # The planner draws among the three nodes of layers 2-4: ask until a route takes the
    # liar (another prompt each time, so no node is preferred for a cached prefix).
    requests = 0
    while not left and requests < 20:
        stream_completion(cluster, [100 + requests, 101, 102], NEW_TOKENS, leave_after_the_lie)
        requests += 1
    assert left, "no route went through the liar"
    assert set(routes_only.LIED) == {liar.node_id}

    def outcome_lines() -> list[str]:
        return [r.getMessage() for r in caplog.records if "outcome=" in r.getMessage()]

    # The request's line comes once its generation ended: the dropped route settled.
    wait_until(lambda: len(outcome_lines()) == requests, 120, "the requests' outcome lines")
    assert f"failovers=1 failover_reasons={reason} " in outcome_lines()[-1]
    # Its pay waited for the audit of the lie, which convicted: the liar earns nothing.
    assert credit_of(cluster, liar) == before
    wait_until(lambda: state_of(cluster, liar) == "quarantined", 30, "the liar's quarantine")
    for node in honest:
        assert state_of(cluster, node) != "quarantined"
