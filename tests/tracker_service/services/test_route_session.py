"""The tracker's route client against REAL node data planes on loopback: two hops
(overlapping, so the second starts at effective_start) reproduce a single-process
generation of the same model, and every receipt verifies against the node key."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from core.dataplane.hop import HopSession
from core.dataplane.receipts import receipt_message
from core.dataplane.wire import b64encode
from core.runtime.generate import generate_local
from core.runtime.sampling import SamplingParams
from core.runtime.shard import Shard
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
from tracker_service.security.endpoint_policy import resolve_endpoint
from tracker_service.services.route_planner import plan_for
from tracker_service.services.route_receipts import reply_output_digest
from tracker_service.services.route_session import (
    DEFAULT_MAX_REPLY_BYTES,
    RouteSession,
)
from tracker_service.services.session_plan import GeneratedToken, RoutePlan, Sampling

PROMPT = [5, 17, 99, 3, 250, 41]
TRACKER = TrackerKey.from_seed(b"\x07" * 32)


@pytest.fixture(scope="module")
def nodes(tiny_model: Path) -> Iterator[tuple[RealNode, RealNode]]:
    """Node A serves layers [0, 2), node B [1, 4): the route starts B at layer 2."""
    a = start_real_node(tiny_model, 0, 2, tracker_public_key=TRACKER.public_key_raw)
    b = start_real_node(tiny_model, 1, 4, tracker_public_key=TRACKER.public_key_raw)
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()


def candidate(node: RealNode) -> Candidate:
    start, end = node.shard.start, node.shard.end
    return Candidate(node.node_id, node.endpoint, node.public_key, start, end, 10.0)


def plan_over(a: RealNode, b: RealNode, key: TrackerKey = TRACKER) -> RoutePlan:
    route = form_route([candidate(a), candidate(b)], NUM_LAYERS, min_nodes=2)
    return plan_for(route, a.fingerprint, key, ttl_s=60.0)


async def run_route(
    plan: RoutePlan, new_tokens: int, sampling: Sampling
) -> tuple[list[GeneratedToken], list[HopReceipt]]:
    async with RouteSession(plan, open_timeout_s=10, step_timeout_s=30) as session:
        await session.open(len(PROMPT) + new_tokens, sampling)
        tokens = [token async for token in session.generate(PROMPT, new_tokens)]
        receipts = await session.close()
    return tokens, receipts


@pytest.mark.parametrize(
    "sampling",
    [
        Sampling(temperature=0.0, logprobs=3),
        Sampling(0.9, top_k=40, top_p=0.95, seed=1234, logprobs=2),
    ],
    ids=["greedy", "seeded-sampling"],
)
def test_two_real_hops_reproduce_single_process_generation(
    nodes: tuple[RealNode, RealNode], tiny_model: Path, sampling: Sampling
) -> None:
    a, b = nodes
    plan = plan_over(a, b)
    assert [(h.start, h.effective_start, h.end) for h in plan.hops] == [(0, 0, 2), (1, 2, 4)]
    tokens, _ = asyncio.run(run_route(plan, 8, sampling))
    reference = [a.shard, Shard.load(tiny_model, 2, 4)]
    local = list(
        generate_local(reference, PROMPT, 8, SamplingParams(**dataclasses.asdict(sampling)))
    )
    assert [t.token_id for t in tokens] == local
    assert all(len(t.top_ids) == sampling.logprobs == len(t.top_logprobs) for t in tokens)
    assert [t.position for t in tokens] == [0, *range(len(PROMPT), len(PROMPT) + 7)]


def test_receipts_verify_against_node_keys_and_count_the_work(
    nodes: tuple[RealNode, RealNode],
) -> None:
    a, b = nodes
    plan = plan_over(a, b)
    _, receipts = asyncio.run(run_route(plan, 5, Sampling()))
    assert [(r.node_id, r.start, r.end) for r in receipts] == [
        (a.node_id, 0, 2),
        (b.node_id, 2, 4),
    ]
    for receipt in receipts:
        assert receipt.route_session_id == plan.route_session_id
        assert receipt.steps == 5
        assert receipt.tokens == len(PROMPT) + 4
    assert a.sessions.open_count == 0 and b.sessions.open_count == 0


def test_tokens_stream_as_produced_and_an_early_close_still_gets_receipts(
    nodes: tuple[RealNode, RealNode],
) -> None:
    a, b = nodes

    async def two_then_stop() -> tuple[list[int], list[HopReceipt]]:
        seen: list[int] = []
        async with RouteSession(plan_over(a, b)) as session:
            await session.open(len(PROMPT) + 16)
            async for token in session.generate(PROMPT, 16):
                seen.append(token.token_id)
                if len(seen) == 2:
                    break
            return seen, await session.close()

    seen, receipts = asyncio.run(two_then_stop())
    assert len(seen) == 2
    assert [r.steps for r in receipts] == [2, 2]


def test_a_ticket_not_signed_by_the_tracker_is_refused_by_the_first_hop(
    nodes: tuple[RealNode, RealNode],
) -> None:
    a, b = nodes
    forged = plan_over(a, b, TrackerKey.from_seed(os.urandom(32)))
    with pytest.raises(RouteFailure) as failure:
        asyncio.run(run_route(forged, 2, Sampling()))
    assert (failure.value.reason, failure.value.hop_index) == ("bad-ticket", 0)
    assert failure.value.node_id == a.node_id


def test_a_receipt_that_does_not_verify_with_the_registered_key_fails_the_route(
    nodes: tuple[RealNode, RealNode],
) -> None:
    a, b = nodes
    plan = plan_over(a, b)
    wrong = dataclasses.replace(plan.hops[1], public_key=a.public_key)
    tampered = dataclasses.replace(plan, hops=(plan.hops[0], wrong))
    with pytest.raises(RouteFailure) as failure:
        asyncio.run(run_route(tampered, 2, Sampling()))
    assert (failure.value.reason, failure.value.hop_index) == ("bad-receipt", 1)
    assert_sessions_freed(a, b)  # the failed route dropped its connections without a close


def test_an_unreachable_hop_is_reported_as_such(nodes: tuple[RealNode, RealNode]) -> None:
    a, b = nodes
    plan = plan_over(a, b)
    dead = dataclasses.replace(plan.hops[1], endpoint="ws://127.0.0.1:9")
    with pytest.raises(RouteFailure) as failure:
        asyncio.run(run_route(dataclasses.replace(plan, hops=(plan.hops[0], dead)), 2, Sampling()))
    assert (failure.value.reason, failure.value.hop_index) == ("unreachable", 1)


def test_the_plan_survives_its_json_form(nodes: tuple[RealNode, RealNode]) -> None:
    a, b = nodes
    plan = plan_over(a, b)
    assert RoutePlan.from_json(plan.to_json()) == plan


def test_a_hop_by_name_is_dialled_at_its_resolved_address(
    nodes: tuple[RealNode, RealNode],
) -> None:
    """``localhost`` is resolved once and the session opened at that address."""
    if resolve_endpoint("ws://localhost:1", allow_private=True).address != "127.0.0.1":
        pytest.skip("localhost resolves to IPv6 first here; the nodes listen on 127.0.0.1")
    a, b = nodes
    plan = plan_over(a, b)
    named = [
        dataclasses.replace(h, endpoint=h.endpoint.replace("127.0.0.1", "localhost"))
        for h in plan.hops
    ]
    tokens, _ = asyncio.run(run_route(dataclasses.replace(plan, hops=tuple(named)), 2, Sampling()))
    assert len(tokens) == 2


def test_a_private_hop_is_not_dialled_when_private_endpoints_are_not_allowed(
    nodes: tuple[RealNode, RealNode],
) -> None:
    a, b = nodes
    plan = plan_over(a, b)

    async def go() -> None:
        async with RouteSession(plan, open_timeout_s=10, allow_private_endpoints=False) as s:
            await s.open(8, Sampling())

    with pytest.raises(RouteFailure) as failure:
        asyncio.run(go())
    assert failure.value.reason == "unreachable" and "loopback" in failure.value.message
    assert a.sessions.open_count == 0


class BlockingAuditor:
    """Audits one node's steps, each replay waiting on ``release``; convicts it if told."""

    def __init__(self, *node_ids: str, convict: bool) -> None:
        self.node_ids = set(node_ids)
        self.convict = convict
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        self.calls: list[tuple[int, int, bytes]] = []  # hop index, frames, observed reply
        self.bound: dict[str, Any] | None = None
        self.cancelled = False

    def policy_for(self, node_id: str) -> tuple[float, bool]:
        return (1.0 if node_id in self.node_ids else 0.0), False  # in the background

    def sample(self, rate: float) -> bool:
        return rate > 0

    def withdrawn(self, node_id: str) -> bool:
        return False

    async def audit(
        self,
        plan: RoutePlan,
        hop_index: int,
        frames: Sequence[bytes],
        observed: bytes,
        *,
        bind: Callable[[], Awaitable[dict[str, Any] | None]] | None = None,
    ) -> SimpleNamespace:
        self.calls.append((hop_index, len(frames), observed))
        self.started.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        accused = plan.hops[hop_index].node_id
        if not self.convict:
            return SimpleNamespace(outcome="agreed", quarantined=[], withdrawn=[])
        assert bind is not None
        self.bound = await bind()
        return SimpleNamespace(quarantined=[accused], withdrawn=[])


def test_every_reply_comes_with_a_step_receipt_that_binds_it(
    nodes: tuple[RealNode, RealNode],
) -> None:
    a, b = nodes
    seen: list[tuple[int, dict[str, Any] | None, bytes | None]] = []

    async def go() -> None:
        async with RouteSession(plan_over(a, b)) as session:
            await session.open(len(PROMPT) + 3, Sampling(temperature=0.0))
            feed = PROMPT
            for _ in range(3):
                feed = [(await session.step(feed)).token_id]
                seen.extend((h.index, h.step_receipt, h.last_reply) for h in session._hops)
            await session.close()

    asyncio.run(go())
    assert len(seen) == 6
    for step, (index, signed, reply) in enumerate(seen):
        assert signed is not None and reply is not None
        body = signed["receipt"]
        assert body["node_id"] == (a, b)[index].node_id and body["steps"] == step // 2 + 1
        assert body["output_sha256"] == reply_output_digest(
            reply, last_hop=index == 1, max_bytes=DEFAULT_MAX_REPLY_BYTES
        )


def test_a_step_receipt_that_signs_another_output_fails_the_route_at_that_step(
    nodes: tuple[RealNode, RealNode], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = nodes
    honest = HopSession._signed_receipt

    def misbinding(self: HopSession) -> dict[str, Any]:
        body = dict(honest(self)["receipt"], output_sha256="0" * 64)
        return {"receipt": body, "signature": b64encode(self._ctx.sign(receipt_message(body)))}

    monkeypatch.setattr(HopSession, "_signed_receipt", misbinding)
    with pytest.raises(RouteFailure) as failure:
        asyncio.run(run_route(plan_over(a, b), 2, Sampling()))
    assert (failure.value.reason, failure.value.hop_index) == ("bad-receipt", 0)
    assert "signed output" in failure.value.message
    assert_sessions_freed(a, b)


def test_a_sampled_step_returns_before_its_audit_and_the_conviction_fails_the_next_step(
    nodes: tuple[RealNode, RealNode],
) -> None:
    a, b = nodes
    auditor = BlockingAuditor(b.node_id, convict=True)

    async def go() -> tuple[list[int], RouteFailure]:
        async with RouteSession(plan_over(a, b), auditor=auditor) as session:
            await session.open(len(PROMPT) + 8, Sampling(temperature=0.0))
            first = await session.step(PROMPT)
            await auditor.started.wait()
            second = await session.step([first.token_id])  # the audit still blocks
            assert not auditor.release.is_set()
            assert [(i, n) for i, n, _ in auditor.calls] == [(1, 1)]  # one per hop in flight
            auditor.release.set()
            await session.wait_audits()
            with pytest.raises(RouteFailure) as caught:
                await session.step([second.token_id])
            return [first.token_id, second.token_id], caught.value

    tokens, failure = asyncio.run(go())
    assert len(tokens) == 2
    assert (failure.reason, failure.hop_index, failure.node_id) == ("quarantined", 1, b.node_id)
    # The evidence binds the audited step: the hop's receipt signed right after it.
    assert auditor.bound is not None
    signed = auditor.bound["receipt"]
    observed = auditor.calls[0][2]
    assert signed["node_id"] == b.node_id and signed["steps"] == 1
    assert signed["output_sha256"] == reply_output_digest(
        observed, last_hop=True, max_bytes=DEFAULT_MAX_REPLY_BYTES
    )
    assert_sessions_freed(a, b)


def test_close_awaits_a_pending_audit_and_fails_on_its_conviction(
    nodes: tuple[RealNode, RealNode],
) -> None:
    a, b = nodes
    auditor = BlockingAuditor(a.node_id, convict=True)

    async def go() -> None:
        async with RouteSession(plan_over(a, b), auditor=auditor) as session:
            await session.open(len(PROMPT) + 2, Sampling(temperature=0.0))
            await session.step(PROMPT)
            await auditor.started.wait()
            asyncio.get_running_loop().call_soon(auditor.release.set)
            await session.close()

    with pytest.raises(RouteFailure) as caught:
        asyncio.run(go())
    assert (caught.value.reason, caught.value.node_id) == ("quarantined", a.node_id)
    assert auditor.bound is not None and auditor.bound["receipt"]["steps"] == 1


def test_an_honest_audit_in_the_background_leaves_the_route_and_its_receipts_alone(
    nodes: tuple[RealNode, RealNode],
) -> None:
    a, b = nodes
    auditor = BlockingAuditor(b.node_id, convict=False)

    async def go() -> list[HopReceipt]:
        async with RouteSession(plan_over(a, b), auditor=auditor) as session:
            await session.open(len(PROMPT) + 4, Sampling(temperature=0.0))
            feed = list(PROMPT)
            for _ in range(3):
                feed = [(await session.step(feed)).token_id]
            auditor.release.set()
            return await session.close()

    receipts = asyncio.run(go())
    assert [r.steps for r in receipts] == [3, 3]
    assert auditor.calls and all(i == 1 for i, _, _ in auditor.calls)


def test_leaving_a_session_cancels_its_pending_audits(nodes: tuple[RealNode, RealNode]) -> None:
    a, b = nodes
    auditor = BlockingAuditor(b.node_id, convict=True)

    async def go() -> int:
        async with RouteSession(plan_over(a, b), auditor=auditor) as session:
            await session.open(len(PROMPT) + 2, Sampling(temperature=0.0))
            await session.step(PROMPT)
            await auditor.started.wait()
        current = asyncio.current_task()
        return len([t for t in asyncio.all_tasks() if t is not current])

    assert asyncio.run(go()) == 0
    assert auditor.cancelled and auditor.bound is None
    assert_sessions_freed(a, b)


@pytest.mark.parametrize("limit", [1, 2])
def test_audits_in_flight_are_bounded_per_session_and_per_hop(
    nodes: tuple[RealNode, RealNode], limit: int
) -> None:
    a, b = nodes
    auditor = BlockingAuditor(a.node_id, b.node_id, convict=False)

    async def go() -> list[HopReceipt]:
        async with RouteSession(
            plan_over(a, b), auditor=auditor, max_audits_in_flight=limit
        ) as session:
            await session.open(len(PROMPT) + 4, Sampling(temperature=0.0))
            feed = list(PROMPT)
            for _ in range(3):  # every step of both hops would be sampled
                feed = [(await session.step(feed)).token_id]
            assert [(i, n) for i, n, _ in auditor.calls] == [(0, 1), (1, 1)][:limit]
            auditor.release.set()
            return await session.close()

    assert [r.steps for r in asyncio.run(go())] == [3, 3]


class ProbationAuditor(BlockingAuditor):
    """The same auditor, for whom the audited node is still on probation."""

    def policy_for(self, node_id: str) -> tuple[float, bool]:
        return (1.0, True) if node_id in self.node_ids else (0.0, False)


def test_a_node_on_probation_is_audited_inline_and_its_lie_never_leaves_the_step(
    nodes: tuple[RealNode, RealNode],
) -> None:
    a, b = nodes
    auditor = ProbationAuditor(b.node_id, convict=True)

    async def go() -> RouteFailure:
        async with RouteSession(plan_over(a, b), auditor=auditor) as session:
            await session.open(len(PROMPT) + 8, Sampling(temperature=0.0))
            step = asyncio.ensure_future(session.step(PROMPT))
            await auditor.started.wait()
            for _ in range(20):
                await asyncio.sleep(0)
            assert not step.done()  # the step waits for its verdict
            auditor.release.set()
            with pytest.raises(RouteFailure) as caught:
                await step
            return caught.value

    failure = asyncio.run(go())
    assert (failure.reason, failure.node_id) == ("quarantined", b.node_id)
    assert auditor.bound is not None and auditor.bound["receipt"]["node_id"] == b.node_id
