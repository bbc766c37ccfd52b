"""A replayer that stalls must not get the node it replays blamed (review of issue 35,
attack 7's fix).

One budget covered the whole audit and each replay's open and steps had as long as
that budget, so a replayer that accepted and never answered (a sybil, or an honest
node that went away) ran the audit out of time, and the timeout was charged to the
audited node: no pay for the session, audited first, and after three in a row off
user routes. Now a replayer that fails or stalls is passed over and counted against
itself; the audited hop answers for a timeout only when a replayer was still working
through its frames when the budget ran out (a long session).

The real tracker app, real data-plane nodes over the tiny Llama (4 layers) on
loopback: an honest node on layers 0-2, a replayer on 0-2 that never answers a
replay's open (``tests/support/lies/mute_replayer.py``) or answers its steps far
too slowly (``slow_replays.py``), and one node on 2-4.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from core.dataplane.hop import HopSession
from tests.support.lies import mute_replayer, slow_replays
from tests.tracker_service.audit_network import (
    every_step_auditor,
    fast_settings,
    generate,
    join_and_certify,
    node_view,
)
from tests.tracker_service.real_nodes import RealNode, start_real_node
from tracker_service.app import create_app
from tracker_service.domain.route_formation import PURPOSE_SERVE
from tracker_service.domain.tickets import HopReceipt
from tracker_service.services.hop_audit import TIMED_OUT

pytestmark = pytest.mark.slow

NEW_TOKENS = 10
SESSIONS = 5  # more than the three timed-out audits in a row that withdraw a node


@pytest.mark.parametrize("stall", ["mute-open", "slow-steps"])
def test_an_honest_node_keeps_its_pay_and_routes_when_its_replayer_stalls(
    tmp_path: Path,
    tiny_model: Path,
    nodes: list[RealNode],
    monkeypatch: pytest.MonkeyPatch,
    stall: str,
) -> None:
    monkeypatch.setattr(HopSession, "_open", mute_replayer.wrap(HopSession._open))
    monkeypatch.setattr(HopSession, "_step", slow_replays.wrap(HopSession._step))
    app = create_app(fast_settings(tmp_path, background_tasks=False))
    honest, staller = start_real_node(tiny_model, 0, 2), start_real_node(tiny_model, 0, 2)
    nodes += [honest, staller, start_real_node(tiny_model, 2, 4)]
    if stall == "mute-open":
        monkeypatch.setattr(mute_replayer, "MUTE", {staller.node_id})
    else:  # it opens, then takes far longer than a replay's step limit
        monkeypatch.setitem(slow_replays.SLOW, staller.node_id, 5.0)
    # Established (no probation): audited at every step, in the background.
    auditor = every_step_auditor(
        app, 5, disputes=True, timeout_s=0.5, timeout_per_position_s=0.0, probation_audits=0
    )
    with TestClient(app) as client:
        join_and_certify(client, app, nodes)
        routing = app.state.routing
        credited: list[HopReceipt] = []
        for _ in range(SESSIONS):
            plan = routing.planner.plan(
                honest.fingerprint, purpose=PURPOSE_SERVE, exclude=[staller.node_id]
            )
            assert honest.node_id in {h.node_id for h in plan.hops}  # never withdrawn
            asyncio.run(generate(plan, auditor, NEW_TOKENS, credited=credited))
        paid = [r for r in credited if r.node_id == honest.node_id]
        assert len(paid) == SESSIONS  # paid for every session
        assert auditor.outcomes[TIMED_OUT] == 0
        assert auditor.timeouts[honest.node_id] == 0
        assert honest.node_id not in auditor.audit_first
        assert not routing.disputes.is_withdrawn(honest.node_id)
        assert node_view(client, honest)["state"] == "active"
        assert auditor.replay_stalls[staller.node_id] >= 1  # the staller is counted
    app.state.tracker.database.dispose()
