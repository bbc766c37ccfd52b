"""Issue 35: an inline audit no replayer answers let a new node's step through.

A node on probation is audited inline: its sampled step waits for the verdict. When
no other node able to replay the hop answered (all busy, gone, or not live for a
moment), the audit ended ``skipped`` and the step was served as if checked: a
liar that was new and lucky (its replayer had just gone) answered users. Now an
inline audit that does not find the step right withholds it: the route fails at
that hop (``unchecked``) and the gateway fails over without the node.

Real node processes (tests/tracker_service/node_process.py) of the tiny Llama on
loopback, the real tracker app; the liar perturbs every reply.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.support.lies.rate import LIE_RATE_ENV
from tests.tracker_service.audit_network import PROMPT, fast_settings, join_processes, node_view
from tests.tracker_service.node_process import NodeProcess, start_node_process
from tracker_service.app import create_app
from tracker_service.domain.route_formation import PURPOSE_SERVE
from tracker_service.errors import RouteFailure
from tracker_service.services.hop_audit import Auditor
from tracker_service.services.route_session import RouteSession
from tracker_service.services.session_plan import RoutePlan, Sampling

pytestmark = pytest.mark.slow


async def _answer(plan: RoutePlan, auditor: Auditor, served: list[int]) -> None:
    """A user's answer: each token the route gives goes to the user at once."""
    async with RouteSession(plan, auditor=auditor) as session:
        await session.open(len(PROMPT) + 6, Sampling(temperature=0.0))
        async for token in session.generate(PROMPT, 6):
            served.append(token.token_id)
        await session.close()


def test_a_new_node_whose_replayer_is_gone_serves_no_unchecked_step(
    tmp_path: Path, tiny_model: Path, processes: list[NodeProcess]
) -> None:
    app = create_app(
        fast_settings(
            tmp_path,
            background_tasks=False,
            heartbeat_interval_s=300,  # the stopped replayer still looks live
            audit_rate=1.0,
            audit_probation_rate=1.0,  # every step of a newcomer, inline
        )
    )
    routing = app.state.routing
    honest = start_node_process(tiny_model, 0, 2, 1)
    tails = [start_node_process(tiny_model, 2, 4, 1) for _ in range(2)]
    processes += [honest, *tails]
    with TestClient(app) as client:
        join_processes(client, routing, honest, *tails)
        [attempt] = asyncio.run(routing.certifier.run_pass())
        assert attempt.certified, attempt.message
        liar = start_node_process(tiny_model, 0, 2, 1, **{LIE_RATE_ENV: "1"})
        processes.append(liar)
        join_processes(client, routing, liar)
        # The only node that could replay the liar goes away, not yet noticed.
        honest.stop()
        plan = routing.planner.plan(
            liar.fingerprint, purpose=PURPOSE_SERVE, exclude=[honest.node_id]
        )
        assert liar.node_id in {h.node_id for h in plan.hops}

        served: list[int] = []
        with pytest.raises(RouteFailure) as withheld:
            asyncio.run(_answer(plan, routing.auditor, served))
        assert (withheld.value.reason, withheld.value.node_id) == ("unchecked", liar.node_id)
        assert served == []  # not one of the liar's steps reached the user
        assert routing.auditor.outcomes["skipped"] >= 1
        # Nothing is decided about either node: no replay, no verdict.
        assert node_view(client, liar)["state"] == "active"
        for node in tails:
            assert node_view(client, node)["state"] == "active"
    app.state.tracker.database.dispose()
