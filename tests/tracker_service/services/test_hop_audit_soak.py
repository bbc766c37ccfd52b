"""The audits' soak: honest nodes are never quarantined over 2,000 audited steps.

Four real node processes of the tiny Llama (two per range), one of each range
with ``torch.set_num_threads(1)`` and the other with 2, so the two honest
answers to every audited hop come from differently threaded matmuls: close,
not necessarily equal, which is what the recipe's tolerance is for. Every
hop step is audited (rate 1) and every verdict must be "agreed".
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.support.waiting import wait_until
from tests.tracker_service.audit_network import every_step_auditor, fast_settings
from tests.tracker_service.conftest import beat, register
from tests.tracker_service.node_process import NodeProcess, start_node_process
from tracker_service.app import create_app
from tracker_service.domain.route_formation import PURPOSE_CERTIFY
from tracker_service.services.hop_audit import Auditor
from tracker_service.services.route_session import RouteSession
from tracker_service.services.session_plan import Sampling

pytestmark = pytest.mark.slow

PROMPT = [1, 2, 3, 4, 5]
NEW_TOKENS = 8
SOAK_STEPS = int(os.environ.get("MESHNET_AUDIT_SOAK_STEPS", "2000"))


@pytest.fixture
def node_processes(tiny_model: Path) -> Iterator[list[NodeProcess]]:
    started: list[NodeProcess] = []
    try:
        for start, end in ((0, 2), (2, 4)):
            for threads in (1, 2):
                started.append(start_node_process(tiny_model, start, end, threads))
        yield started
    finally:
        for node in started:
            node.stop()


async def _generate(plan: Any, auditor: Auditor) -> None:
    async with RouteSession(plan, auditor=auditor) as session:
        await session.open(len(PROMPT) + NEW_TOKENS, Sampling(temperature=0.0))
        async for _token in session.generate(PROMPT, NEW_TOKENS):
            pass
        await session.close()


def test_honest_nodes_with_different_thread_counts_agree_on_2000_audited_steps(
    tmp_path: Path, node_processes: list[NodeProcess]
) -> None:
    by_range: dict[int, set[int]] = {}
    for node in node_processes:
        by_range.setdefault(node.start, set()).add(node.threads)
    assert by_range == {0: {1, 2}, 2: {1, 2}}  # each range: one node per thread count
    app = create_app(fast_settings(tmp_path))
    with TestClient(app) as client:
        for node in node_processes:
            response = register(client, node.fake, node.identity)
            assert response.status_code == 200, response.text
            node.trust(response.json()["tracker_public_key"])

        def reachable() -> bool:
            state = client.get("/api/v1/state").json()
            return sum(n["reachability"] == "reachable" for n in state["nodes"]) == 4

        wait_until(reachable)
        auditor = every_step_auditor(app, 2)
        planner = app.state.routing.planner
        beaten = time.monotonic()
        while auditor.audits < SOAK_STEPS:
            if time.monotonic() - beaten > 2.0:  # the nodes' heartbeats, which keep them live
                for node in node_processes:
                    assert beat(client, node.fake).status_code == 200
                beaten = time.monotonic()
            plan = planner.plan(node_processes[0].fingerprint, purpose=PURPOSE_CERTIFY)
            asyncio.run(_generate(plan, auditor))
        assert auditor.audits >= SOAK_STEPS
        assert dict(auditor.outcomes) == {"agreed": auditor.audits}
        for node in node_processes:
            shown = client.get(f"/api/v1/nodes/{node.node_id}").json()
            assert (shown["state"], shown["audits_passed"] > 0) == ("active", True)
    app.state.tracker.database.dispose()
