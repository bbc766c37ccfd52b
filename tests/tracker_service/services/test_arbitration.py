"""A liar with no third opinion: both disputed nodes stop serving, an arbiter is recruited,
replays the disputed steps, and the liar is quarantined with its own signed receipt.

Real data-plane nodes over the tiny Llama (4 layers) on loopback: an honest node and a
liar serve layers 0-2, one node serves 2-4, as issue 28's three-node network does.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.tracker_service.audit_network import (
    every_step_auditor,
    fast_settings,
    generate,
    join,
    join_and_certify,
    make_liar,
    node_view,
)
from tests.tracker_service.real_nodes import RealNode, start_real_node
from tracker_service.app import create_app
from tracker_service.domain.route_formation import PURPOSE_CERTIFY
from tracker_service.domain.tickets import verify_receipt
from tracker_service.errors import NoRoute, RouteFailure
from tracker_service.services.disputes import Dispute, DisputeBoard


def _dispute(nodes: tuple[str, str], start: int = 0, end: int = 2) -> Dispute:
    return Dispute(
        fingerprint=("a" * 64, "b" * 64),
        layer_count=4,
        start=start,
        end=end,
        last_hop=False,
        frames=(b"x",),
        replies={nodes[0]: b"1", nodes[1]: b"2"},
        opinions={},
        detail="differ",
        difference=1.0,
        tolerance=1e-3,
        route_session_id="r",
    )


def test_the_board_withdraws_both_nodes_and_recruits_one_arbiter_at_a_time() -> None:
    now = [0.0]
    board = DisputeBoard(clock=lambda: now[0])
    dispute = _dispute(("honest", "liar"))
    assert board.add(dispute) and not board.add(_dispute(("liar", "honest")))
    key = dispute.fingerprint
    assert board.withdrawn(key) == {"honest", "liar"} and board.is_withdrawn("liar")
    assert board.withdrawn(("c" * 64, "d" * 64)) == frozenset()
    sentence = board.sentence(key)
    assert sentence is not None and "layers 0-2" in sentence and "third" in sentence
    assert board.recruit(key, "liar", 30) is None  # a disputed node never judges itself
    assert board.recruit(key, "small", 1) is None  # no room for both layers
    assert board.recruit(key, "arbiter", 30) == (0, 2)
    assert board.recruit(key, "second", 30) is None  # one arbiter on its way at a time
    assert board.recruit(key, "arbiter", 30) == (0, 2)  # the same one may ask again
    now[0] = 10_000.0  # it never came: the range is offered to the next newcomer
    assert board.recruit(key, "second", 30) == (0, 2)
    board.forget_node("liar")
    assert board.open() == [] and board.sentence(key) is None


@pytest.mark.slow
def test_a_dispute_withdraws_both_nodes_until_a_recruited_arbiter_convicts_the_liar(
    tmp_path: Path, tiny_model: Path, nodes: list[RealNode]
) -> None:
    app = create_app(fast_settings(tmp_path, background_tasks=False))
    routing = app.state.routing
    honest, liar, tail = (start_real_node(tiny_model, *r) for r in [(0, 2), (0, 2), (2, 4)])
    nodes += [honest, liar, tail]
    make_liar(liar)
    with TestClient(app) as client:
        join_and_certify(client, app, nodes)
        key = liar.fingerprint
        auditor = every_step_auditor(app, 1, disputes=True)
        routing.arbitration._auditor = auditor  # the same auditor settings for the replay
        # A route through the liar: its audit finds the honest node disagreeing, and no
        # third node exists. The route ends at that step; nothing through it is answered.
        plan = routing.planner.plan(key, purpose=PURPOSE_CERTIFY, exclude=[honest.node_id])
        with pytest.raises(RouteFailure) as caught:
            asyncio.run(generate(plan, auditor))
        assert (caught.value.reason, caught.value.node_id) == ("disputed", liar.node_id)
        assert routing.disputes.withdrawn(key) == {honest.node_id, liar.node_id}
        [dispute] = routing.disputes.open()
        assert (dispute.start, dispute.end) == (0, 2)
        # Both opinions are signed: the liar's route receipt, the honest node's replay.
        for node in (honest, liar):
            opinion = dispute.opinions[node.node_id]
            assert opinion["bound_by_receipt"], node.node_id
            verify_receipt(opinion["receipt"], node.public_key)

        # Neither serves users now, and no other route exists: unavailable, with why.
        with pytest.raises(NoRoute) as refused:
            routing.planner.plan(key)
        assert "no third node was there to decide" in refused.value.message
        model = next(
            m for m in client.get("/api/v1/state").json()["models"] if m["status"] != "healthy"
        )
        assert model["status"] == "disputed" and model["detail"].startswith("unavailable: ")
        # A route already open through a disputed node fails over at its next step.
        honest_plan = routing.planner.plan(key, purpose=PURPOSE_CERTIFY, exclude=[liar.node_id])
        with pytest.raises(RouteFailure) as stopped:
            asyncio.run(generate(honest_plan, auditor))
        assert (stopped.value.reason, stopped.value.node_id) == ("disputed", honest.node_id)

        # The next newcomer with the room is recruited for exactly the disputed range.
        arbiter = start_real_node(tiny_model, 0, 2)
        nodes.append(arbiter)
        asked = client.get(
            "/api/v1/allocation",
            params={"model": model["artifact_id"], "max_layers": 4, "node_id": arbiter.node_id},
        ).json()
        assert (asked["start"], asked["end"], asked["reason"]) == (0, 2, "arbiter")
        join(client, arbiter)
        asyncio.run(routing.monitor.check_due())
        assert asyncio.run(routing.arbitration.run_pass()) == [liar.node_id]

        shown = node_view(client, liar)
        assert shown["state"] == "quarantined"
        evidence: dict[str, Any] = shown["quarantine_evidence"]
        assert evidence["accused"] == liar.node_id and evidence["arbiter"] == arbiter.node_id
        assert set(evidence["majority"]) == {honest.node_id, arbiter.node_id}
        assert evidence["accused_bound_by_receipt"]
        assert node_view(client, honest)["state"] == "active"
        assert routing.disputes.open() == []
        # The honest node serves again, and the model is healthy.
        again = routing.planner.plan(key, exclude=[arbiter.node_id])
        assert honest.node_id in {h.node_id for h in again.hops}
        assert asyncio.run(generate(again, auditor))
        with pytest.raises(NoRoute):  # the liar is out for good
            routing.planner.plan(key, exclude=[arbiter.node_id, honest.node_id])
        assert all(m["status"] == "healthy" for m in client.get("/api/v1/state").json()["models"])
    app.state.tracker.database.dispose()


class _StubAuditor:
    """Replays answer what `answers` holds; equal bytes agree (tolerance ignored)."""

    def __init__(self, answers: dict[str, bytes]) -> None:
        self.answers = answers
        self.convicted: list[tuple[str, list[str], dict[str, Any]]] = []

    async def replay(self, *args: Any, **_: Any) -> tuple[bytes, dict[str, Any] | None]:
        node = args[3]
        return self.answers.get(node.node_id, b""), None

    def compare(self, a: bytes, b: bytes, last: bool, tolerance: float) -> Any:
        from tracker_service.domain.audit_compare import Comparison

        return Comparison(a == b, 0.0 if a == b else 1.0, tolerance, "stub")

    async def convict(
        self, liar: str, reason: str, evidence: dict[str, Any], majority: list[str]
    ) -> None:
        self.convicted.append((liar, majority, evidence))


def test_an_arbiter_that_sides_with_neither_decides_nothing_and_the_next_one_is_tried() -> None:
    from tracker_service.domain.route_formation import Candidate
    from tracker_service.services.arbitration import Arbitration

    board = DisputeBoard()
    dispute = _dispute(("honest", "liar"))
    board.add(dispute)
    stub = _StubAuditor({"odd": b"3", "silent": b"", "fair": b"1"})
    arbitration = Arbitration(None, stub, board)  # type: ignore[arg-type]
    able = [Candidate(n, "ws://x", b"k", 0, 2, 1.0) for n in ("silent", "odd", "fair")]
    arbitration._arbiters = lambda d: [c for c in able if c.node_id not in d.tried]  # type: ignore[method-assign]
    assert asyncio.run(arbitration.run_pass()) == ["liar"]
    assert dispute.tried == {"odd"}  # "silent" gave no answer: it may be asked again
    [(liar, majority, evidence)] = stub.convicted
    assert liar == "liar" and majority == ["honest", "fair"]
    assert evidence["arbiter"] == "fair" and evidence["dispute_id"] == dispute.dispute_id
    assert board.open() == []
