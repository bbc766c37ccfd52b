"""Hop audits with real data-plane nodes on loopback: a lying node is caught, honest ones not.

The nodes are real ``DataPlaneServer``s over the tiny Llama (4 layers); the
liar is a real node whose hop context perturbs its replies (tests/support/lies/rate.py,
what ``MESHNET_TEST_LIE_RATE`` switches on in a node process). Audits run at
rate 1 here so each test is short; the rates themselves are the auditor's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.support.lies.rate import Lie
from tests.support.waiting import wait_until
from tests.tracker_service.audit_network import (
    PROMPT,
    every_step_auditor,
    fast_settings,
    generate,
    join,
    make_liar,
    node_view,
    reachable,
    recipe_of,
)
from tests.tracker_service.conftest import beat, register
from tests.tracker_service.real_nodes import RealNode, start_real_node
from tracker_service.app import create_app
from tracker_service.domain.route_formation import PURPOSE_CERTIFY
from tracker_service.domain.tickets import verify_receipt
from tracker_service.errors import RouteFailure
from tracker_service.services.hop_audit import Auditor
from tracker_service.services.route_session import RouteSession
from tracker_service.services.session_plan import Sampling


async def _generate_speculatively(
    plan: Any, auditor: Auditor, after_prefill: Callable[[], None], *, chain: bool = False
) -> list[int]:
    """A prefill, then verify steps whose drafts repeat the last token (mostly rejected,
    so the next frame rewinds): every hop's frames carry the speculative flags."""
    async with RouteSession(plan, auditor=auditor, chain=chain) as session:
        await session.open(len(PROMPT) + 16, Sampling(temperature=0.0))
        assert session.speculative and session.chained == chain
        tokens = [(await session.step(PROMPT)).token_id]
        after_prefill()
        for _ in range(3):
            draft = [tokens[-1]] * 2
            answer = await session.verify([tokens[-1], *draft], draft)
            session.rewind(session.position - (len(draft) - (len(answer) - 1)))
            tokens += answer
        await session.close()
    return tokens


@pytest.mark.slow
@pytest.mark.parametrize(
    ("lying_hop", "speculative", "chain"),
    [
        ("last", False, False),
        ("first", False, False),
        ("last", True, False),
        ("first", False, True),
        ("last", True, True),
    ],
)
def test_a_lying_node_is_quarantined_by_a_majority_and_routes_avoid_it(
    tmp_path: Path,
    tiny_model: Path,
    nodes: list[RealNode],
    lying_hop: str,
    speculative: bool,
    chain: bool,
) -> None:
    """``speculative``: the route runs verify and rewind steps, which the honest replicas
    replay as they came; the liar's verify reply is convicted by its own receipt.
    ``chain``: the hops pass their outputs to each other (docs/wire.md#chained-hops), and
    the audit replays what the liar's predecessor passed it, checked by digest."""
    app = create_app(fast_settings(tmp_path))
    head, tail = (0, 2), (2, 4)
    lying_range, other_range = (tail, head) if lying_hop == "last" else (head, tail)
    liar = start_real_node(tiny_model, *lying_range)
    honest_peers = [start_real_node(tiny_model, *lying_range) for _ in range(2)]
    other = start_real_node(tiny_model, *other_range)
    nodes += [liar, *honest_peers, other]
    if not speculative:
        make_liar(liar)
    with TestClient(app) as client:
        for node in nodes:
            join(client, node)
        wait_until(lambda: reachable(client, 4))
        planner = app.state.routing.planner
        auditor = every_step_auditor(app, 1)
        exclude = [n.node_id for n in honest_peers]
        plan = planner.plan(liar.fingerprint, purpose=PURPOSE_CERTIFY, exclude=exclude)
        assert liar.node_id in {h.node_id for h in plan.hops}
        with pytest.raises(RouteFailure) as caught:
            if speculative:  # honest through the prefill: the lie is in a verify step
                asyncio.run(
                    _generate_speculatively(plan, auditor, lambda: make_liar(liar), chain=chain)
                )
            else:
                asyncio.run(generate(plan, auditor, chain=chain))
        assert (caught.value.reason, caught.value.node_id) == ("quarantined", liar.node_id)

        shown = node_view(client, liar)
        assert shown["state"] == "quarantined" and not shown["live"]
        evidence = shown["quarantine_evidence"]
        assert evidence["accused"] == liar.node_id
        assert set(evidence["majority"]) == {n.node_id for n in honest_peers}
        # Every opinion, the accused's included, is bound by that node's own signed
        # receipt: its output_sha256 is the digest of the output the node sent.
        for node in [liar, *honest_peers]:
            opinion = evidence["opinions"][node.node_id]
            assert opinion["bound_by_receipt"], node.node_id
            signed = opinion["receipt"]
            assert signed["receipt"]["node_id"] == node.node_id
            assert signed["receipt"]["output_sha256"] == opinion["output_sha256"]
            verify_receipt(signed, node.public_key)
        assert evidence["accused_bound_by_receipt"]
        liar_digest = evidence["opinions"][liar.node_id]["output_sha256"]
        assert all(
            evidence["opinions"][n.node_id]["output_sha256"] != liar_digest for n in honest_peers
        )
        assert "quarantined" in client.get("/").text
        for peer in honest_peers:
            assert node_view(client, peer)["state"] == "active"

        heartbeat = beat(client, liar.as_fake_node())
        assert (heartbeat.status_code, heartbeat.json()["reason"]) == (403, "quarantined")
        again = register(client, liar.as_fake_node(), liar.identity)
        assert (again.status_code, again.json()["reason"]) == (403, "quarantined")
        for _ in range(10):  # routes avoid it from now on
            other_plan = planner.plan(liar.fingerprint, purpose=PURPOSE_CERTIFY)
            assert liar.node_id not in {h.node_id for h in other_plan.hops}
        # The honest route still answers, and agrees with itself under audit.
        assert asyncio.run(generate(other_plan, auditor))
    app.state.tracker.database.dispose()


@pytest.mark.slow
def test_a_node_lying_on_one_step_in_ten_is_quarantined_too(
    tmp_path: Path, tiny_model: Path, nodes: list[RealNode]
) -> None:
    app = create_app(fast_settings(tmp_path))
    liar = start_real_node(tiny_model, 2, 4)
    nodes += [liar, start_real_node(tiny_model, 2, 4), start_real_node(tiny_model, 2, 4)]
    nodes.append(start_real_node(tiny_model, 0, 2))
    make_liar(liar, rate=0.1)
    with TestClient(app) as client:
        for node in nodes:
            join(client, node)
        wait_until(lambda: reachable(client, 4))
        auditor = every_step_auditor(app, 3)
        exclude = [n.node_id for n in nodes[1:3]]
        for _ in range(60):
            plan = app.state.routing.planner.plan(
                liar.fingerprint, purpose=PURPOSE_CERTIFY, exclude=exclude
            )
            try:
                asyncio.run(generate(plan, auditor, new_tokens=8))
            except RouteFailure as exc:
                assert (exc.reason, exc.node_id) == ("quarantined", liar.node_id)
                break
        assert node_view(client, liar)["state"] == "quarantined"
        assert all(node_view(client, n)["state"] == "active" for n in nodes[1:])
    app.state.tracker.database.dispose()


def test_the_lie_is_off_unless_the_test_variable_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.lies.rate import LIE_RATE_ENV

    monkeypatch.delenv(LIE_RATE_ENV, raising=False)
    assert Lie.from_env() is None
    monkeypatch.setenv(LIE_RATE_ENV, "0")
    assert Lie.from_env() is None
    monkeypatch.setenv(LIE_RATE_ENV, "0.1")
    lie = Lie.from_env()
    assert lie is not None and lie.rate == 0.1


@pytest.mark.slow
def test_certification_needs_a_second_disjoint_route_to_agree(
    tmp_path: Path, tiny_model: Path, nodes: list[RealNode]
) -> None:
    app = create_app(fast_settings(tmp_path, background_tasks=False))
    routing = app.state.routing
    liar = start_real_node(tiny_model, 2, 4)
    nodes += [start_real_node(tiny_model, 0, 2), start_real_node(tiny_model, 0, 2)]
    nodes += [start_real_node(tiny_model, 2, 4), liar]
    make_liar(liar)
    with TestClient(app) as client:
        for node in nodes:
            join(client, node)
        asyncio.run(routing.monitor.check_due())
        assert reachable(client, 4)
        [attempt] = asyncio.run(routing.certifier.run_pass())
        assert not attempt.certified and attempt.reason == "routes-disagree"
        shown = recipe_of(client, liar)
        assert shown["status"] == "dark"
        assert "[routes-disagree]" in shown["last_certification_failure"]
        # An honest node in the liar's place: the two disjoint routes agree, and certify.
        path = f"/api/v1/nodes/{liar.node_id}/deregister"
        headers = liar.as_fake_node().headers("POST", path, b"")
        assert client.post(path, content=b"", headers=headers).status_code == 200
        nodes.append(start_real_node(tiny_model, 2, 4))
        join(client, nodes[-1])
        asyncio.run(routing.monitor.check_due())
        [attempt] = asyncio.run(routing.certifier.run_pass())
        assert attempt.certified, attempt.message
        assert recipe_of(client, liar)["status"] == "certified"
    app.state.tracker.database.dispose()
