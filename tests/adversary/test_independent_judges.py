"""Issue 35, attack 6: sybils decide disputes.

A liar that lies only when it replays someone else's step (a one-hop ticket:
``tests/support/lies/replay_only.py``) audits an honest node and disagrees; its
sybil, a fresh identity from the same batch of invites that lies the same way, is
the third opinion, sides with it, and the honest node is quarantined. The tracker
must choose judges itself: a second opinion independent of the audited node, and a
third opinion or arbiter (whose word convicts) established and tied to neither
party by account, network prefix or invite. Then the honest node is never
quarantined, the sybil never judges, the pair waits withdrawn until an independent
established arbiter replays the steps, and the liar is quarantined.

The real tracker app, real data-plane nodes over the tiny Llama (4 layers) on
loopback; audits at rate 1.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from core.dataplane.hop import HopSession
from tests.support.lies import replay_only
from tests.support.waiting import wait_until
from tests.tracker_service.audit_network import (
    every_step_auditor,
    fast_settings,
    generate,
    join,
    join_and_certify,
    make_liar,
    node_view,
    reachable,
)
from tests.tracker_service.real_nodes import RealNode, start_real_node
from tracker_service.app import create_app
from tracker_service.domain.route_formation import PURPOSE_CERTIFY, PURPOSE_SERVE
from tracker_service.errors import NoRoute, RouteFailure
from tracker_service.store.invites import add_invite, redeem_invite
from tracker_service.store.quarantine import audits_passed, record_audit_passed

pytestmark = pytest.mark.slow


def _lies_on_replays(node: RealNode) -> None:
    make_liar(node)


def test_a_replay_only_liar_and_its_sybil_cannot_convict_an_honest_node(
    tmp_path: Path, tiny_model: Path, nodes: list[RealNode], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(HopSession, "_reply", replay_only.wrap(HopSession._reply))
    app = create_app(fast_settings(tmp_path, background_tasks=False))
    routing = app.state.routing
    database = app.state.tracker.database
    honest, liar, sybil = (start_real_node(tiny_model, 0, 2) for _ in range(3))
    tail = start_real_node(tiny_model, 2, 4)
    nodes += [honest, liar, sybil, tail]
    _lies_on_replays(liar)
    _lies_on_replays(sybil)
    with TestClient(app) as client:
        join_and_certify(client, app, nodes)
        now = time.time()
        with database.sessions.begin() as session:
            # The liar's operator took two uses of one invite: the liar and its sybil.
            _, code = add_invite(session, label="one operator's batch", now=now, max_uses=2)
            redeem_invite(session, code, node_id=liar.node_id, now=now)
            redeem_invite(session, code, node_id=sybil.node_id, now=now)
            # The honest node and the liar have a history of passed audits (the liar is
            # honest on user routes); the sybil is fresh.
            record_audit_passed(session, [honest.node_id, liar.node_id, tail.node_id])
        auditor = every_step_auditor(app, 1, disputes=True, auditor_min_audits=1)
        routing.arbitration._auditor = auditor
        key = honest.fingerprint

        # A user route through the honest node; its audit asks the liar (established,
        # independent of it), which lies. The sybil may not decide: no third opinion.
        plan = routing.planner.plan(
            key, purpose=PURPOSE_CERTIFY, exclude=[liar.node_id, sybil.node_id]
        )
        assert honest.node_id in {h.node_id for h in plan.hops}
        with pytest.raises(RouteFailure) as caught:
            asyncio.run(generate(plan, auditor))
        assert caught.value.reason == "disputed"
        assert node_view(client, honest)["state"] == "active"
        assert routing.disputes.withdrawn(key) == {honest.node_id, liar.node_id}
        # Nor may it arbitrate: the dispute waits.
        assert asyncio.run(routing.arbitration.run_pass()) == []
        assert node_view(client, honest)["state"] == "active"
        with database.session() as session:
            assert audits_passed(session, sybil.node_id) == 0  # no passed audit for the sybil
            assert audits_passed(session, liar.node_id) == 1  # nor for the liar
        # Meanwhile no user is answered through either disputed node.
        for _ in range(5):
            try:
                served = routing.planner.plan(key, purpose=PURPOSE_SERVE)
            except NoRoute:
                continue
            assert not {h.node_id for h in served.hops} & {honest.node_id, liar.node_id}

        # An established node tied to neither party joins: it arbitrates, the liar is
        # quarantined, the honest node serves again.
        arbiter = start_real_node(tiny_model, 0, 2)
        nodes.append(arbiter)
        join(client, arbiter)
        asyncio.run(routing.monitor.check_due())
        wait_until(lambda: reachable(client, 5))
        with database.sessions.begin() as session:
            record_audit_passed(session, [arbiter.node_id])
        assert asyncio.run(routing.arbitration.run_pass()) == [liar.node_id]
        shown = node_view(client, liar)
        assert shown["state"] == "quarantined"
        assert set(shown["quarantine_evidence"]["majority"]) == {honest.node_id, arbiter.node_id}
        assert node_view(client, honest)["state"] == "active"
        assert node_view(client, sybil)["state"] == "active"  # it convicted no one
        for _ in range(10):
            served = routing.planner.plan(key, purpose=PURPOSE_SERVE, exclude=[sybil.node_id])
            assert liar.node_id not in {h.node_id for h in served.hops}
    database.dispose()


# The smallest network's arbiter loan runs on real node processes:
# tests/adversary/test_arbiter_loan.py.
