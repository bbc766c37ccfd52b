"""Certification end to end: a real tracker app, two real node data planes that
register with signed requests, are dialled, and get their recipe certified by a
real distributed forward; a node that drops the session leaves it dark with the
reason in /api/v1/state."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.support.waiting import wait_until
from tests.tracker_service.audit_network import fast_settings, join, recipe_of
from tests.tracker_service.conftest import register
from tests.tracker_service.real_nodes import RealNode, start_real_node
from tracker_service.app import create_app
from tracker_service.domain.recipe_identity import DARK_DETAIL
from tracker_service.services.certifier import Certifier, check_receipts
from tracker_service.store.quarantine import quarantine_node
from tracker_service.store.tables import CertificationEvidence


def test_two_registered_nodes_get_their_dark_recipe_certified_within_seconds(
    tmp_path: Path, tiny_model: Path, nodes: list[RealNode]
) -> None:
    app = create_app(fast_settings(tmp_path))
    certifier: Certifier = app.state.routing.certifier
    nodes += [start_real_node(tiny_model, 0, 2), start_real_node(tiny_model, 1, 4)]
    with TestClient(app) as client:
        join(client, nodes[0])
        assert recipe_of(client, nodes[0])["status"] == "dark"
        began = time.monotonic()
        join(client, nodes[1])
        wait_until(lambda: recipe_of(client, nodes[0])["status"] == "certified")
        took = time.monotonic() - began
        recipe = recipe_of(client, nodes[0])
        assert recipe["certified_node_count"] == 2
        assert recipe["last_certification_failure"] is None
        assert recipe["certified_route_session"] in recipe["detail"]
        # The ledger says certified as the attempt's evidence lands; the certifier keeps the
        # attempt itself a moment later, once the attempt returns.
        wait_until(lambda: nodes[0].fingerprint in certifier.last_attempts)
        attempt = certifier.last_attempts[nodes[0].fingerprint]
        assert attempt.certified and attempt.prompt_source == "tokenizer"
        assert len(attempt.token_ids) == app.state.tracker.settings.certify_new_tokens
        served = client.post(
            "/api/v1/routes",
            json=dict(
                zip(
                    ("model_artifact_digest", "runtime_recipe_digest"),
                    nodes[0].fingerprint,
                    strict=True,
                )
            ),
        )
        assert served.status_code == 200  # certified: now routable for users
    with app.state.tracker.database.session() as session:
        evidence = session.execute(select(CertificationEvidence)).scalars().one()
        assert set(evidence.node_ids) == {nodes[0].node_id, nodes[1].node_id}
        # What each hop's signed receipt says it computed: the overlap is skipped.
        assert evidence.shard_ranges == [[0, 2], [2, 4]]
        assert evidence.synthetic is False
        assert evidence.tokens_generated == len(attempt.token_ids)
    app.state.tracker.database.dispose()
    print(f"\ndark -> certified {took:.2f} s after the second node registered")


def test_a_node_that_drops_the_session_leaves_the_recipe_dark_with_the_reason(
    tmp_path: Path, tiny_model: Path, nodes: list[RealNode]
) -> None:
    app = create_app(fast_settings(tmp_path))
    # Node B answers the challenge but has no room for a session: it refuses at open.
    nodes += [
        start_real_node(tiny_model, 0, 2),
        start_real_node(tiny_model, 2, 4, kv_budget_bytes=1),
    ]
    with TestClient(app) as client:
        join(client, nodes[0])
        join(client, nodes[1])
        wait_until(lambda: bool(recipe_of(client, nodes[0])["last_certification_failure"]))
        recipe = recipe_of(client, nodes[0])
        assert recipe["status"] == "dark"
        assert recipe["detail"] == DARK_DETAIL  # the seed's sentence; the why has its own field
        failure = recipe["last_certification_failure"]
        assert "certification attempt failed" in failure and "[no-capacity]" in failure
        assert nodes[1].node_id[:12] in failure
        page = client.get("/").text
        assert "no-capacity" in page
        body = {
            "model_artifact_digest": nodes[0].fingerprint[0],
            "runtime_recipe_digest": nodes[0].fingerprint[1],
        }
        assert client.post("/api/v1/routes", json=body).status_code == 409
    with app.state.tracker.database.session() as session:
        assert session.execute(select(CertificationEvidence)).first() is None
    app.state.tracker.database.dispose()


def test_a_single_node_serving_every_layer_is_never_attempted(
    tmp_path: Path, tiny_model: Path, nodes: list[RealNode]
) -> None:
    app = create_app(fast_settings(tmp_path, background_tasks=False))
    certifier: Certifier = app.state.routing.certifier
    nodes.append(start_real_node(tiny_model, 0, 4))
    with TestClient(app) as client:
        join(client, nodes[0])
        asyncio.run(app.state.routing.monitor.check_due())
        assert asyncio.run(certifier.run_pass()) == []
        assert recipe_of(client, nodes[0])["status"] == "dark"
    app.state.tracker.database.dispose()


def test_a_failed_recipe_backs_off_until_its_reachable_nodes_change(
    tmp_path: Path, tiny_model: Path, nodes: list[RealNode]
) -> None:
    app = create_app(fast_settings(tmp_path, background_tasks=False))
    routing = app.state.routing
    nodes += [start_real_node(tiny_model, 0, 2), start_real_node(tiny_model, 2, 4)]
    with TestClient(app) as client:
        join(client, nodes[0])
        # Node B registers but never learns the tracker key: it refuses every ticket.
        response = register(client, nodes[1].as_fake_node(), nodes[1].identity)
        assert response.status_code == 200
        asyncio.run(routing.monitor.check_due())
        first = asyncio.run(routing.certifier.run_pass())
        assert [(a.reason, a.failed_node) for a in first] == [("bad-ticket", nodes[1].node_id)]
        assert asyncio.run(routing.certifier.run_pass()) == []  # backing off
        nodes.append(start_real_node(tiny_model, 2, 4))  # a new node changes the set
        join(client, nodes[2])
        asyncio.run(routing.monitor.check_due())
        again = asyncio.run(routing.certifier.run_pass())
        # The back-off is lifted at once for a changed node set, and the node that
        # failed last time is avoided while another covers its layers.
        assert [a.certified for a in again] == [True]
        assert nodes[1].node_id not in again[0].node_ids
    app.state.tracker.database.dispose()


def test_receipts_that_do_not_tile_the_model_are_refused() -> None:
    from tracker_service.domain.tickets import HopReceipt
    from tracker_service.errors import CertificationFailed
    from tracker_service.services.session_plan import PlannedHop, RoutePlan

    hops = (
        PlannedHop("a", 0, 2, 0, "ws://a:1", b"k" * 32),
        PlannedHop("b", 1, 4, 2, "ws://b:1", b"k" * 32),
    )
    plan = RoutePlan("rs", 1, 0.0, ("x", "y"), 4, hops, {})
    good = [HopReceipt("rs", 1, "a", 0, 2, 3, 9, {}), HopReceipt("rs", 1, "b", 2, 4, 3, 9, {})]
    check_receipts(plan, good, steps=3)
    short = [good[0], HopReceipt("rs", 1, "b", 1, 4, 3, 9, {})]
    with pytest.raises(CertificationFailed, match="over layers 2-4"):
        check_receipts(plan, short, steps=3)
    lazy = [good[0], HopReceipt("rs", 1, "b", 2, 4, 2, 8, {})]
    with pytest.raises(CertificationFailed, match="different work"):
        check_receipts(plan, lazy, steps=3)


def test_an_early_ended_hop_must_sign_exactly_the_stop_its_ticket_asked() -> None:
    """Two whole-model nodes: A stops at layer 2 (its ticket's effective_end), B runs on."""
    from tracker_service.domain.tickets import HopReceipt
    from tracker_service.errors import CertificationFailed
    from tracker_service.services.session_plan import PlannedHop, RoutePlan

    hops = (
        PlannedHop("a", 0, 2, 0, "ws://a:1", b"k" * 32),  # end: where the ticket stops it
        PlannedHop("b", 0, 4, 2, "ws://b:1", b"k" * 32),
    )
    plan = RoutePlan("rs", 1, 0.0, ("x", "y"), 4, hops, {})
    good = [HopReceipt("rs", 1, "a", 0, 2, 3, 9, {}), HopReceipt("rs", 1, "b", 2, 4, 3, 9, {})]
    check_receipts(plan, good, steps=3)
    # A liar's receipt claims another stop than its ticket asked, the next hop agreeing:
    # the layers still tile the model, but neither receipt is what was asked.
    moved = [HopReceipt("rs", 1, "a", 0, 3, 3, 9, {}), HopReceipt("rs", 1, "b", 3, 4, 3, 9, {})]
    with pytest.raises(CertificationFailed, match="needed node a over layers 0-2"):
        check_receipts(plan, moved, steps=3)
    whole = [HopReceipt("rs", 1, "a", 0, 4, 3, 9, {}), good[1]]
    with pytest.raises(CertificationFailed, match="needed node a over layers 0-2"):
        check_receipts(plan, whole, steps=3)


def test_two_whole_model_nodes_certify_with_the_first_hop_stopping_early(
    tmp_path: Path, tiny_model: Path, nodes: list[RealNode]
) -> None:
    """Real nodes honour the ticket's effective_end in a certify session."""
    app = create_app(fast_settings(tmp_path))
    nodes += [start_real_node(tiny_model, 0, 4), start_real_node(tiny_model, 0, 4)]
    with TestClient(app) as client:
        join(client, nodes[0])
        join(client, nodes[1])
        wait_until(lambda: recipe_of(client, nodes[0])["status"] == "certified")
        assert recipe_of(client, nodes[0])["certified_node_count"] == 2
    with app.state.tracker.database.session() as session:
        evidence = session.execute(select(CertificationEvidence)).scalars().one()
        assert set(evidence.node_ids) == {nodes[0].node_id, nodes[1].node_id}
        assert evidence.shard_ranges == [[0, 1], [1, 4]]  # the first stopped inside its shard
    app.state.tracker.database.dispose()


ADMIN = {"Authorization": "Bearer s3cret-admin"}


def _fingerprint_body(node: RealNode, reason: str) -> dict[str, str]:
    artifact, recipe = node.fingerprint
    return {"model_artifact_digest": artifact, "runtime_recipe_digest": recipe, "reason": reason}


def test_a_revoked_recipe_is_not_certified_again_until_the_operator_lifts_it(
    tmp_path: Path, tiny_model: Path, nodes: list[RealNode]
) -> None:
    app = create_app(fast_settings(tmp_path, background_tasks=False))
    routing = app.state.routing
    nodes += [start_real_node(tiny_model, 0, 2), start_real_node(tiny_model, 2, 4)]
    with TestClient(app) as client:
        join(client, nodes[0])
        join(client, nodes[1])
        asyncio.run(routing.monitor.check_due())
        assert [a.certified for a in asyncio.run(routing.certifier.run_pass())] == [True]
        revoke = client.post(
            "/api/v1/admin/recipes/revoke", json=_fingerprint_body(nodes[0], "bad"), headers=ADMIN
        )
        assert revoke.status_code == 200, revoke.text
        for _ in range(2):  # the same reachable nodes, pass after pass: never attempted
            assert asyncio.run(routing.certifier.run_pass()) == []
            recipe = recipe_of(client, nodes[0])
            assert (recipe["status"], recipe["revoked"]) == ("dark", True)
        lift = client.post(
            "/api/v1/admin/recipes/unrevoke", json=_fingerprint_body(nodes[0], "ok"), headers=ADMIN
        )
        assert lift.status_code == 200, lift.text
        assert recipe_of(client, nodes[0])["status"] == "dark"
        assert [a.certified for a in asyncio.run(routing.certifier.run_pass())] == [True]
        assert recipe_of(client, nodes[0])["revoked"] is False
    app.state.tracker.database.dispose()


def _quarantine(app: Any, node_id: str) -> None:
    with app.state.tracker.database.sessions.begin() as session:
        assert quarantine_node(session, node_id, reason="lied at hop 1", evidence={})


def test_a_quarantined_certifying_node_has_the_recipe_verified_again_without_it(
    tmp_path: Path, tiny_model: Path, nodes: list[RealNode]
) -> None:
    app = create_app(fast_settings(tmp_path, background_tasks=False))
    routing = app.state.routing
    nodes += [
        start_real_node(tiny_model, 0, 2),
        start_real_node(tiny_model, 2, 4),
        start_real_node(tiny_model, 2, 4),
    ]
    with TestClient(app) as client:
        for node in nodes:
            join(client, node)
        asyncio.run(routing.monitor.check_due())
        [first] = asyncio.run(routing.certifier.run_pass())
        assert first.certified
        [liar] = [n for n in first.node_ids if n != nodes[0].node_id]
        [other] = [n.node_id for n in nodes[1:] if n.node_id != liar]

        _quarantine(app, liar)
        marked = recipe_of(client, nodes[0])
        assert marked["status"] == "certified" and liar in marked["reverify_reason"]
        [again] = asyncio.run(routing.certifier.run_pass())
        assert again.certified and liar not in again.node_ids and other in again.node_ids
        recipe = recipe_of(client, nodes[0])
        assert recipe["status"] == "certified" and recipe["reverify_reason"] is None
        assert recipe["certified_route_session"] == again.route_session_id

        # Now the last node of layers 2-4 is caught too: no route is left without it.
        _quarantine(app, other)
        [failed] = asyncio.run(routing.certifier.run_pass())
        assert not failed.certified
        recipe = recipe_of(client, nodes[0])
        assert recipe["status"] == "dark" and recipe["reverify_reason"] is None
        failure = recipe["last_certification_failure"]
        assert other in failure and "quarantined" in failure and "no route without it" in failure
    with app.state.tracker.database.session() as session:
        rows = session.execute(select(CertificationEvidence)).scalars().all()
        assert all(row.revoked_at is not None for row in rows)  # dark: no live evidence
        assert any(liar in row.revoked_reason for row in rows)
    app.state.tracker.database.dispose()
