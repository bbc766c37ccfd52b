"""Issue 35, "a dispute with no arbiter waits … but not for a newcomer that may never
come", on real node processes.

The smallest network: two nodes on layers 0-2 (one lies on every step), one node on
2-4. The liar's first audited step finds the two 0-2 nodes disagreeing with no third
to decide: both are withdrawn and chats answer 503. No third node holds 0-2 and none
may ever join, so the established 2-4 node, tied to neither party, is *lent*: asked
to load 0-2, it arbitrates, the liar is quarantined, and it is asked back to 2-4.
Chats are answered again, never through the liar, on the public default (no
``--trust-lone-ranges``): each range is then held by one node, which the ledger
vouches for (both left probation while the network served before).

Real node processes (tests/tracker_service/node_process.py) of the tiny Llama on
loopback, the real tracker app; the node's move itself (reload and register) is the
node lifecycle's, emulated by restarting the process with the same key on the
suggested range.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.support.lies.rate import LIE_RATE_ENV
from tests.tracker_service.audit_network import fast_settings, generate, join_processes, node_view
from tests.tracker_service.conftest import beat
from tests.tracker_service.node_process import (
    NodeProcess,
    restart_node_process,
    start_node_process,
)
from tracker_service.app import create_app
from tracker_service.domain.route_formation import PURPOSE_SERVE
from tracker_service.errors import NoRoute, RouteFailure
from tracker_service.store.quarantine import record_audit_passed

pytestmark = pytest.mark.slow

PROBATION = 20  # the tracker's default audit_probation_audits


def test_on_the_smallest_network_an_established_node_is_lent_to_arbitrate_then_goes_back(
    tmp_path: Path, tiny_model: Path, processes: list[NodeProcess]
) -> None:
    app = create_app(
        fast_settings(
            tmp_path,
            background_tasks=False,
            heartbeat_interval_s=300,  # starting processes on a busy machine is slow
            trust_lone_ranges=False,
            audit_rate=1.0,
            audit_probation_rate=1.0,
            audit_probation_audits=PROBATION,
            auditor_min_audits=1,
            auditor_min_age_s=0,
        )
    )
    routing = app.state.routing
    database = app.state.tracker.database
    honest, lender = (
        start_node_process(tiny_model, 0, 2, 1),
        start_node_process(tiny_model, 2, 4, 1),
    )
    processes += [honest, lender]
    with TestClient(app) as client:
        join_processes(client, routing, honest, lender)
        [attempt] = asyncio.run(routing.certifier.run_pass())
        assert attempt.certified, attempt.message
        with database.sessions.begin() as session:  # the network has served before
            for _ in range(PROBATION):
                record_audit_passed(session, [honest.node_id, lender.node_id])
        liar = start_node_process(tiny_model, 0, 2, 1, **{LIE_RATE_ENV: "1"})
        processes.append(liar)
        join_processes(client, routing, liar)
        key = honest.fingerprint

        through_liar = routing.planner.plan(key, purpose=PURPOSE_SERVE, exclude=[honest.node_id])
        with pytest.raises(RouteFailure) as caught:
            asyncio.run(generate(through_liar, routing.auditor))
        assert (caught.value.reason, caught.value.node_id) == ("disputed", liar.node_id)
        with pytest.raises(NoRoute):  # both 0-2 nodes withdrawn: chats answer 503
            routing.planner.plan(key, purpose=PURPOSE_SERVE)

        # No arbiter holds 0-2: the established 2-4 node is asked to load it.
        assert asyncio.run(routing.arbitration.run_pass()) == []
        asked = beat(client, lender.fake).json()
        assert asked["suggested_layers"] == [0, 2] and asked["suggestion_urgent"]
        lender.stop()
        lent = restart_node_process(tiny_model, 0, 2, 1, lender.key)
        processes.append(lent)
        join_processes(client, routing, lent)
        assert asyncio.run(routing.arbitration.run_pass()) == [liar.node_id]
        assert node_view(client, liar)["state"] == "quarantined"
        assert node_view(client, honest)["state"] == "active"  # no honest node quarantined

        # Settled: it is asked back, and the loan ends once it is there.
        asyncio.run(routing.arbitration.run_pass())
        assert beat(client, lent.fake).json()["suggested_layers"] == [2, 4]
        lent.stop()
        home = restart_node_process(tiny_model, 2, 4, 1, lender.key)
        processes.append(home)
        join_processes(client, routing, home)
        asyncio.run(routing.arbitration.run_pass())
        assert beat(client, home.fake).json()["suggested_layers"] is None
        for _ in range(3):  # chats answer again, never through the liar
            plan = routing.planner.plan(key, purpose=PURPOSE_SERVE)
            assert liar.node_id not in {h.node_id for h in plan.hops}
            assert asyncio.run(generate(plan, routing.auditor))
        assert node_view(client, honest)["state"] == node_view(client, home)["state"] == "active"
    database.dispose()
