"""Issue 35, attack 7: long sessions dodge audits.

A replay had 10 s for every frame since the session's start, and a timeout was
"skipped" with full credit. A liar that lies only deep into long sessions
(``tests/support/lies/deep_session.py``) was never checked. Now an audit's budget
grows with the session's length, and an audit that cannot finish is not free: the
hop earns no credit for that session, is audited first in its next ones, and a node
whose audits keep timing out leaves user routes.

The real tracker app, real data-plane nodes over the tiny Llama (4 layers) on
loopback; replayers are honest but slow on replays (``slow_replays.py``), as a
busy PC replaying a long session is.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from core.dataplane.hop import HopSession
from tests.support.lies import deep_session, slow_replays
from tests.tracker_service.audit_network import (
    every_step_auditor,
    fast_settings,
    generate,
    join_and_certify,
    make_liar,
    node_view,
)
from tests.tracker_service.real_nodes import RealNode, start_real_node
from tracker_service.app import create_app
from tracker_service.domain.route_formation import PURPOSE_SERVE
from tracker_service.domain.tickets import HopReceipt
from tracker_service.errors import NoRoute, RouteFailure
from tracker_service.services.hop_audit import AuditVerdict
from tracker_service.services.route_session import RoutePlan

pytestmark = pytest.mark.slow

LIE_AFTER = 8  # the liar is honest for its first 7 steps of a session
NEW_TOKENS = 10


def _setup(
    tmp_path: Path, tiny_model: Path, nodes: list[RealNode], monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, RealNode, list[RealNode]]:
    """A deep-session liar and two honest replayers on layers 0-2, one node on 2-4."""
    monkeypatch.setattr(HopSession, "_reply", deep_session.wrap(HopSession._reply, LIE_AFTER))
    monkeypatch.setattr(HopSession, "_step", slow_replays.wrap(HopSession._step))
    app = create_app(fast_settings(tmp_path, background_tasks=False))
    liar = start_real_node(tiny_model, 0, 2)
    replayers = [start_real_node(tiny_model, 0, 2) for _ in range(2)]
    nodes += [liar, *replayers, start_real_node(tiny_model, 2, 4)]
    make_liar(liar)
    return app, liar, replayers


def test_a_liar_deep_in_a_session_is_caught_by_a_budget_that_grows_with_it(
    tmp_path: Path, tiny_model: Path, nodes: list[RealNode], monkeypatch: pytest.MonkeyPatch
) -> None:
    app, liar, replayers = _setup(tmp_path, tiny_model, nodes, monkeypatch)
    for node in replayers:  # a replay of k steps takes k / 10 s: past a fixed 0.3 s at k > 3
        monkeypatch.setitem(slow_replays.SLOW, node.node_id, 0.1)
    # 0.3 s for a short session, 0.5 s more per position: a long session's replay fits.
    auditor = every_step_auditor(app, 5, disputes=True, timeout_s=0.3, timeout_per_position_s=0.5)
    with TestClient(app) as client:
        join_and_certify(client, app, nodes)
        routing = app.state.routing
        plan = routing.planner.plan(
            liar.fingerprint, purpose=PURPOSE_SERVE, exclude=[n.node_id for n in replayers]
        )
        assert liar.node_id in {h.node_id for h in plan.hops}
        credited: list[HopReceipt] = []
        with pytest.raises(RouteFailure) as caught:  # the liar's step never reaches the user
            asyncio.run(generate(plan, auditor, NEW_TOKENS, credited=credited))
        assert (caught.value.reason, caught.value.node_id) == ("quarantined", liar.node_id)
        assert node_view(client, liar)["state"] == "quarantined"
        assert not [r for r in credited if r.node_id == liar.node_id]
        for node in replayers:
            assert node_view(client, node)["state"] == "active"
        for _ in range(10):
            served = routing.planner.plan(liar.fingerprint, purpose=PURPOSE_SERVE)
            assert liar.node_id not in {h.node_id for h in served.hops}
    app.state.tracker.database.dispose()


def test_an_audit_that_cannot_finish_costs_the_hop_its_credit_then_its_routes(
    tmp_path: Path, tiny_model: Path, nodes: list[RealNode], monkeypatch: pytest.MonkeyPatch
) -> None:
    app, liar, replayers = _setup(tmp_path, tiny_model, nodes, monkeypatch)
    for node in replayers:  # each step in time, but a replay of k steps takes 0.3 k s
        monkeypatch.setitem(slow_replays.SLOW, node.node_id, 0.3)
    # Established (no probation): audited in the background, the user's steps go on. A
    # fixed 1 s budget: a replayer still working through the frames when it runs out
    # (past 3 steps) times the audit out, which the audited hop answers for.
    auditor = every_step_auditor(
        app, 5, disputes=True, timeout_s=1.0, timeout_per_position_s=0.0, probation_audits=0
    )
    audit = auditor.audit

    async def long_ones_only(plan: RoutePlan, index: int, frames: Any, *a: Any, **k: Any) -> Any:
        if len(frames) < 4:  # a short replay finishes in time (and would reset the count)
            return AuditVerdict(plan.hops[index].node_id, "skipped", detail="short")
        return await audit(plan, index, frames, *a, **k)

    monkeypatch.setattr(auditor, "audit", long_ones_only)
    with TestClient(app) as client:
        join_and_certify(client, app, nodes)
        routing = app.state.routing
        others = [n.node_id for n in replayers]
        credited: list[HopReceipt] = []
        sessions = 0
        for _ in range(6):
            try:
                plan = routing.planner.plan(liar.fingerprint, purpose=PURPOSE_SERVE, exclude=others)
            except NoRoute:
                break  # the liar is withdrawn and no route is left without it
            if liar.node_id not in {h.node_id for h in plan.hops}:
                break
            sessions += 1
            try:
                asyncio.run(generate(plan, auditor, NEW_TOKENS, credited=credited))
            except RouteFailure as exc:
                assert (exc.reason, exc.node_id) == ("disputed", liar.node_id)
            assert auditor.policy_for(liar.node_id)[0] == 1.0  # audited first from now on
        assert 1 <= sessions <= 3  # three timed-out audits take it off user routes
        assert auditor.timeouts[liar.node_id] >= 3
        assert credited  # the honest tail earned its share
        assert not [r for r in credited if r.node_id == liar.node_id]  # the liar nothing
        for _ in range(10):
            served = routing.planner.plan(liar.fingerprint, purpose=PURPOSE_SERVE)
            assert liar.node_id not in {h.node_id for h in served.hops}
        for node in replayers:
            assert node_view(client, node)["state"] == "active"
    app.state.tracker.database.dispose()
