"""Issue 35, "no hop is beyond audit": a node alone on a range served users unaudited.

A hop audit needs a second node whose layers contain the hop. The planner used to
keep a hop nobody else could replay on serve routes whenever no route could do
without it (a range one node alone holds): a newcomer that alone registers a range
answered users with whatever it liked, its audits "skipped: no other node could
replay this hop". Now such a range serves no user (the route request answers 503
``unreplayable`` with a sentence) until a second node holds it, unless the ledger
vouches for its node (it left probation); a tracker whose operator runs every node
says so with ``serve --trust-lone-ranges`` (not here: the public default).

The smallest networks still serve: two nodes that each hold the whole model replay
each other, as do two nodes on each range.

Real node processes (tests/tracker_service/node_process.py) of the tiny Llama (4
layers) on loopback, the real tracker app; the liar perturbs every reply.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.support.lies.rate import LIE_RATE_ENV
from tests.tracker_service.audit_network import fast_settings, generate, join_processes, node_view
from tests.tracker_service.node_process import NodeProcess, start_node_process
from tracker_service.app import create_app
from tracker_service.domain.route_formation import PURPOSE_SERVE
from tracker_service.errors import RouteFailure, Unreplayable
from tracker_service.store.route_candidates import mark_unreachable

pytestmark = pytest.mark.slow

ROUTES = 10


def _public_tracker(tmp_path: Path) -> Any:
    """The public default (no --trust-lone-ranges), every step of a newcomer audited
    inline, and minutes-old nodes allowed to judge (nobody here is an hour old)."""
    return create_app(
        fast_settings(
            tmp_path,
            background_tasks=False,
            heartbeat_interval_s=300,  # starting processes on a busy machine is slow
            trust_lone_ranges=False,
            audit_rate=1.0,
            audit_probation_rate=1.0,
            auditor_min_audits=0,
            auditor_min_age_s=0,
        )
    )


def test_a_newcomer_alone_on_a_range_serves_no_one_until_a_second_node_can_check_it(
    tmp_path: Path, tiny_model: Path, processes: list[NodeProcess]
) -> None:
    app = _public_tracker(tmp_path)
    routing = app.state.routing
    database = app.state.tracker.database
    heads = [start_node_process(tiny_model, 0, 2, 1) for _ in range(2)]
    first_tail = start_node_process(tiny_model, 2, 4, 1)
    processes += [*heads, first_tail]
    with TestClient(app) as client:
        join_processes(client, routing, *heads, first_tail)
        [attempt] = asyncio.run(routing.certifier.run_pass())
        assert attempt.certified, attempt.message
        key = first_tail.fingerprint
        # The certifying tail goes; a liar takes layers 2-4, alone.
        first_tail.stop()
        with database.sessions.begin() as session:
            mark_unreachable(session, first_tail.node_id, "stopped", now=time.time())
        liar = start_node_process(tiny_model, 2, 4, 1, **{LIE_RATE_ENV: "1"})
        processes.append(liar)
        join_processes(client, routing, liar)
        routing.planner.cache.forget()

        # Nobody else holds 2-4: no user is answered through the liar, and the refusal
        # says which layers wait for a second node.
        for _ in range(ROUTES):
            with pytest.raises(Unreplayable) as refused:
                routing.planner.plan(key, purpose=PURPOSE_SERVE)
            assert "layers 2-4" in refused.value.message
        digest, recipe = key
        asked = client.post(
            "/api/v1/routes",
            json={"model_artifact_digest": digest, "runtime_recipe_digest": recipe},
        )
        assert asked.status_code == 503, asked.text
        assert asked.json()["reason"] == "unreplayable"

        # Two honest nodes that contain 2-4 join: the liar's hop can be replayed, the
        # first route through it is audited inline (it is on probation), and it is caught.
        tail = start_node_process(tiny_model, 2, 4, 1)
        whole = start_node_process(tiny_model, 0, 4, 1)
        processes += [tail, whole]
        join_processes(client, routing, tail, whole)
        through = routing.planner.plan(
            key, purpose=PURPOSE_SERVE, exclude=[tail.node_id, whole.node_id]
        )
        assert liar.node_id in {h.node_id for h in through.hops}
        with pytest.raises(RouteFailure) as caught:
            asyncio.run(generate(through, routing.auditor))
        assert (caught.value.reason, caught.value.node_id) == ("quarantined", liar.node_id)
        assert node_view(client, liar)["state"] == "quarantined"
        for node in (*heads, tail, whole):
            assert node_view(client, node)["state"] == "active"  # no honest node quarantined
        for _ in range(ROUTES):  # users are answered again, never through the liar
            plan = routing.planner.plan(key, purpose=PURPOSE_SERVE)
            assert liar.node_id not in {h.node_id for h in plan.hops}
        assert asyncio.run(generate(plan, routing.auditor))
    database.dispose()


def test_two_nodes_that_each_hold_the_whole_model_serve_checking_each_other(
    tmp_path: Path, tiny_model: Path, processes: list[NodeProcess]
) -> None:
    app = _public_tracker(tmp_path)
    routing = app.state.routing
    database = app.state.tracker.database
    wholes = [start_node_process(tiny_model, 0, 4, 1) for _ in range(2)]
    # A recipe is certified by a forward across two or more nodes: two half nodes do
    # it, and leave.
    halves = [start_node_process(tiny_model, 0, 2, 1), start_node_process(tiny_model, 2, 4, 1)]
    processes += [*wholes, *halves]
    with TestClient(app) as client:
        join_processes(client, routing, *halves)
        [attempt] = asyncio.run(routing.certifier.run_pass())
        assert attempt.certified, attempt.message
        for half in halves:
            half.stop()
            with database.sessions.begin() as session:
                mark_unreachable(session, half.node_id, "stopped", now=time.time())
        join_processes(client, routing, *wholes)
        routing.planner.cache.forget()
        key = wholes[0].fingerprint
        for _ in range(2):
            plan = routing.planner.plan(key, purpose=PURPOSE_SERVE)
            assert len(plan.hops) == 1
            assert asyncio.run(generate(plan, routing.auditor))  # every step audited
        assert routing.auditor.outcomes["agreed"] >= 1
        assert routing.auditor.outcomes["skipped"] == 0
        for node in wholes:
            assert node_view(client, node)["state"] == "active"
    database.dispose()
