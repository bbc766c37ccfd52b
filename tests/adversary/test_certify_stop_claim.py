"""Issue 35 follow-up: a certify hop stopped early must sign exactly the stop it was asked.

Two nodes that each hold the whole model certify as A over ``[0, k)`` (its ticket's
``effective_end``) and B from ``k`` on. A liar first hop that signs a receipt claiming
another stop than its ticket asked (here one layer further) must not certify the
recipe: the receipt does not match its ticket, the attempt fails naming the liar, and
no evidence is stored.

Real node processes (tests/tracker_service/node_process.py) of the tiny Llama (4
layers) on loopback, the real tracker app; the liar is tests/support/lies/stop_claim.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.tracker_service.audit_network import fast_settings, join_processes
from tests.tracker_service.node_process import NodeProcess, start_node_process
from tracker_service.app import create_app
from tracker_service.store.tables import CertificationEvidence

pytestmark = pytest.mark.slow


def test_a_first_hop_claiming_another_stop_than_its_ticket_certifies_nothing(
    tmp_path: Path, tiny_model: Path, processes: list[NodeProcess]
) -> None:
    app = create_app(fast_settings(tmp_path, background_tasks=False, heartbeat_interval_s=300))
    routing = app.state.routing
    # The liar alone holds layer 0, so it is the hop that stops early: [0, 1) of [0, 4).
    liar = start_node_process(tiny_model, 0, 4, 1, MESHNET_TEST_LIE_MODULE="stop_claim")
    honest = start_node_process(tiny_model, 1, 4, 1)
    processes += [liar, honest]
    with TestClient(app) as client:
        join_processes(client, routing, liar, honest)
        [attempt] = asyncio.run(routing.certifier.run_pass())
        assert not attempt.certified
        assert attempt.failed_node == liar.node_id, attempt.message
        assert attempt.reason == "bad-receipt", attempt.message
        state = client.get("/api/v1/state").json()
        assert [r["status"] for r in state["recipes"]] == ["dark"]
    with app.state.tracker.database.session() as session:
        assert session.execute(select(CertificationEvidence)).scalars().all() == []
    app.state.tracker.database.dispose()
