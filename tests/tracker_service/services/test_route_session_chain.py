"""Chained hops (docs/wire.md#chained-hops) through REAL node data planes on loopback: the
tracker's route client sends each step to the first hop only, each hop passes its output
to the next over a link it dials itself, and the answer equals the star route's. The
links are bound by the ticket: a node that is not a hop's predecessor is refused, and a
ticket that names no successor offers no chain."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from core.dataplane import chain, wire
from core.dataplane.tickets import RouteTicket, TicketGrant
from tests.tracker_service.real_nodes import (
    NUM_LAYERS,
    RealNode,
    assert_sessions_freed,
    start_real_node,
)
from tracker_service.domain.keys import TrackerKey
from tracker_service.domain.route_formation import Candidate, form_route
from tracker_service.domain.tickets import HopReceipt
from tracker_service.errors import RouteFailure
from tracker_service.services.route_planner import plan_for
from tracker_service.services.route_session import RouteSession
from tracker_service.services.session_plan import RoutePlan, Sampling

PROMPT = [5, 17, 99, 3, 250, 41]
TRACKER = TrackerKey.from_seed(b"\x09" * 32)


@pytest.fixture(scope="module")
def nodes(tiny_model: Path) -> Iterator[tuple[RealNode, RealNode, RealNode]]:
    """Three hops over the four layers, the first two over TLS with pins, as nodes run."""
    a = start_real_node(tiny_model, 0, 2, tracker_public_key=TRACKER.public_key_raw, tls=True)
    b = start_real_node(tiny_model, 1, 3, tracker_public_key=TRACKER.public_key_raw, tls=True)
    c = start_real_node(tiny_model, 3, 4, tracker_public_key=TRACKER.public_key_raw)
    try:
        yield a, b, c
    finally:
        for node in (a, b, c):
            node.stop()


def candidate(node: RealNode) -> Candidate:
    pin = node.server.tls.pin if node.server.tls is not None else ""
    start, end = node.shard.start, node.shard.end
    return Candidate(node.node_id, node.endpoint, node.public_key, start, end, 10.0, tls_pin=pin)


def plan_over(*hops: RealNode) -> RoutePlan:
    route = form_route([candidate(n) for n in hops], NUM_LAYERS, min_nodes=len(hops))
    return plan_for(route, hops[0].fingerprint, TRACKER, ttl_s=60.0)


async def generate(
    plan: RoutePlan, new_tokens: int, *, chain: bool, sampling: Sampling | None = None
) -> tuple[list[int], list[HopReceipt], bool]:
    async with RouteSession(plan, open_timeout_s=10, step_timeout_s=30, chain=chain) as session:
        await session.open(len(PROMPT) + new_tokens, sampling)
        tokens = [t.token_id async for t in session.generate(PROMPT, new_tokens)]
        receipts = await session.close()
        return tokens, receipts, session.chained


def test_the_ticket_names_each_hops_successor(nodes: tuple[RealNode, RealNode, RealNode]) -> None:
    a, b, c = nodes
    plan = plan_over(a, b, c)
    hops = plan.signed_ticket["ticket"]["hops"]
    assert plan.chain_offered
    assert hops[0]["next"] == {"endpoint": b.endpoint, "tls_pin": b.server.tls.pin}  # type: ignore[union-attr]
    assert hops[1]["next"] == {"endpoint": c.endpoint, "tls_pin": ""}
    assert "next" not in hops[2]


def test_a_chain_gives_the_star_routes_tokens_and_receipts(
    nodes: tuple[RealNode, RealNode, RealNode],
) -> None:
    a, b, c = nodes
    star, star_receipts, star_chained = asyncio.run(generate(plan_over(a, b, c), 10, chain=False))
    chained, receipts, was_chained = asyncio.run(generate(plan_over(a, b, c), 10, chain=True))
    assert not star_chained and was_chained
    assert chained == star
    assert [(r.steps, r.tokens) for r in receipts] == [(r.steps, r.tokens) for r in star_receipts]
    sampled = Sampling(temperature=0.8, top_k=20, seed=7)
    assert (
        asyncio.run(generate(plan_over(a, b, c), 8, chain=True, sampling=sampled))[0]
        == asyncio.run(generate(plan_over(a, b, c), 8, chain=False, sampling=sampled))[0]
    )
    assert all(n.sessions.open_count == 0 for n in (a, b, c))


def test_verify_and_rewind_steps_pass_along_the_chain(
    nodes: tuple[RealNode, RealNode, RealNode],
) -> None:
    a, b, c = nodes
    star, _, _ = asyncio.run(generate(plan_over(a, b, c), 8, chain=False))

    async def speculate() -> list[int]:
        async with RouteSession(plan_over(a, b, c), chain=True) as session:
            await session.open(len(PROMPT) + 16)
            first = await session.step(PROMPT)
            got = [first.token_id]
            # two right drafts and a wrong one: the last hop keeps two and answers a third
            draft = [star[1], star[2], (star[3] + 1) % 256]
            answer = await session.verify([first.token_id, *draft], draft)
            assert answer[:2] == draft[:2]
            session.rewind(session.position - (len(draft) - (len(answer) - 1)))
            got += answer
            token = await session.step([answer[-1]])
            got.append(token.token_id)
            await session.close()
            return got

    assert asyncio.run(speculate()) == star[:5]


def test_a_route_whose_ticket_offers_no_chain_runs_as_a_star(
    nodes: tuple[RealNode, RealNode, RealNode],
) -> None:
    a, b, c = nodes
    plan = plan_over(a, b, c)
    ticket = dict(plan.signed_ticket["ticket"])
    ticket["hops"] = [{k: v for k, v in h.items() if k != "next"} for h in ticket["hops"]]
    bare = RoutePlan(
        **{**plan.__dict__, "signed_ticket": {"ticket": ticket, "signature": "x"}}  # type: ignore[arg-type]
    )
    assert not bare.chain_offered


def test_a_node_that_is_not_the_hops_predecessor_is_refused(
    nodes: tuple[RealNode, RealNode, RealNode],
) -> None:
    """Node A links straight to node C, skipping B: C's ticket puts B before it. And B's
    name with A's key is refused too: a node id is derived from the key."""
    a, b, c = nodes
    plan = plan_over(a, b, c)
    ticket = RouteTicket.from_json(plan.signed_ticket["ticket"])
    skip = TicketGrant(ticket, ticket.hops[1], 1)  # what A signs to pass steps to hop 2

    async def link_to_c(message: str) -> dict[str, object]:
        async with connect(c.endpoint + wire.SESSION_PATH) as ws:
            await ws.send(message)
            answer: dict[str, object] = json.loads(await ws.recv())
            return answer

    from_a = chain.link_message(
        plan.signed_ticket, skip, node_id=a.node_id, public_key=a.public_key, sign=a.key.sign
    )
    answer = asyncio.run(link_to_c(from_a))
    assert answer["type"] == "error" and answer["reason"] == wire.CHAIN_REFUSED
    assert b.node_id in str(answer["message"])
    forged = json.loads(from_a) | {"from": b.node_id}
    answer = asyncio.run(link_to_c(json.dumps(forged)))
    assert answer["reason"] == wire.CHAIN_REFUSED
    assert "key" in str(answer["message"])


def test_a_chain_open_fails_over_cleanly_when_a_link_cannot_be_made(
    nodes: tuple[RealNode, RealNode, RealNode], tiny_model: Path
) -> None:
    """B is gone after the plan was made: the route fails naming a chain or B, no node
    keeps a session."""
    a, _, c = nodes
    gone = start_real_node(tiny_model, 1, 3, tracker_public_key=TRACKER.public_key_raw)
    plan = plan_over(a, gone, c)
    gone.stop()

    async def go() -> RouteFailure:
        async with RouteSession(plan, open_timeout_s=10, chain=True) as session:
            with pytest.raises(RouteFailure) as failed:
                await session.open(len(PROMPT) + 4)
            return failed.value

    failure = asyncio.run(go())
    assert failure.node_id == gone.node_id or failure.reason.startswith("chain-")
    assert_sessions_freed(a, c)
