"""Issue 35, attack 3: a hop nobody can replay is never audited, yet keeps serving.

Replayers had to end exactly where the audited hop ends. A liar registering an odd
range (here ``[0, 3)`` of the tiny Llama's 4 layers, where the others end at 2 or
4) was "skipped: no other node could replay this hop" forever, on user routes.
Now any node whose layers *contain* the hop replays it, stopping inside its shard
(``effective_end`` in the replay's ticket, docs/wire.md#route-tickets), and a hop
no other node can replay is left out of user routes while a route without it
exists.

Real node processes (tests/tracker_service/node_process.py) on loopback, the real
tracker app; the liar perturbs every reply (``MESHNET_TEST_LIE_RATE=1``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.support.lies.rate import LIE_RATE_ENV
from tests.tracker_service.audit_network import (
    every_step_auditor,
    fast_settings,
    generate,
    join_processes,
    node_view,
)
from tests.tracker_service.node_process import NodeProcess, start_node_process
from tracker_service.app import create_app
from tracker_service.domain.route_formation import PURPOSE_SERVE
from tracker_service.errors import RouteFailure

pytestmark = pytest.mark.slow

ROUTES = 30  # serve routes asked for: with an even choice the liar would get some


def test_an_odd_range_liar_serves_no_one_unaudited_and_is_caught_once_replayable(
    tmp_path: Path, tiny_model: Path, processes: list[NodeProcess]
) -> None:
    # Starting node processes on a busy machine takes a while: a long live window.
    app = create_app(fast_settings(tmp_path, background_tasks=False, heartbeat_interval_s=300))
    routing = app.state.routing
    head, tail = (start_node_process(tiny_model, s, e, 1) for s, e in [(0, 2), (2, 4)])
    processes += [head, tail]
    with TestClient(app) as client:
        join_processes(client, routing, head, tail)
        [attempt] = asyncio.run(routing.certifier.run_pass())
        assert attempt.certified, attempt.message
        liar = start_node_process(tiny_model, 0, 3, 1, **{LIE_RATE_ENV: "1"})
        processes.append(liar)
        join_processes(client, routing, liar)
        assert node_view(client, liar)["reachability"] == "reachable"
        key = liar.fingerprint
        auditor = every_step_auditor(app, 3, disputes=True)

        # No node contains [0, 3): the liar's hop is beyond audit, so no user route
        # takes it while the honest route exists.
        for _ in range(ROUTES):
            plan = routing.planner.plan(key, purpose=PURPOSE_SERVE)
            assert liar.node_id not in {h.node_id for h in plan.hops}

        # Two honest nodes serving all 4 layers join: each contains [0, 3) and replays
        # the liar's hop, stopping at layer 3 inside its shard. The first route through
        # the liar is audited inline (it is on probation) and it is quarantined.
        wholes = [start_node_process(tiny_model, 0, 4, 1) for _ in range(2)]
        processes += wholes
        join_processes(client, routing, *wholes)
        through = routing.planner.plan(
            key, purpose=PURPOSE_SERVE, exclude=[head.node_id, *(w.node_id for w in wholes)]
        )
        assert liar.node_id in {h.node_id for h in through.hops}
        with pytest.raises(RouteFailure) as caught:
            asyncio.run(generate(through, auditor))
        assert (caught.value.reason, caught.value.node_id) == ("quarantined", liar.node_id)
        shown = node_view(client, liar)
        assert shown["state"] == "quarantined"
        evidence = shown["quarantine_evidence"]
        assert evidence["layers"] == [0, 3]
        assert set(evidence["majority"]) == {w.node_id for w in wholes}
        for node in (head, tail, *wholes):
            assert node_view(client, node)["state"] == "active"  # no honest node quarantined
        for _ in range(10):  # and no answer through the liar from now on
            plan = routing.planner.plan(key, purpose=PURPOSE_SERVE)
            assert liar.node_id not in {h.node_id for h in plan.hops}
    app.state.tracker.database.dispose()
