"""An audited route session never lets a node draw (issue 35): a sampled answer is drawn
at the gateway from a greedy last hop's top log-probs, so the audit can replay it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tracker_service.gateway.generation import Generation, GenerationSettings
from tracker_service.gateway.sampler import WIRE_TOP_K
from tracker_service.services.route_session import RouteSession
from tracker_service.services.session_plan import PlannedHop, RoutePlan, Sampling

PLAN = RoutePlan(
    route_session_id="rs-sampling",
    epoch=1,
    expires_at=1893456000.0,
    fingerprint=("a" * 64, "b" * 64),
    layer_count=4,
    hops=(PlannedHop("n" * 32, 0, 4, 0, "ws://127.0.0.1:9", b"\0" * 32),),
    signed_ticket={"ticket": {}, "signature": ""},
)


class NoAudits:
    """An auditor that is there (so the session is audited) and samples nothing."""

    def policy_for(self, node_id: str) -> tuple[float, bool]:
        return 0.0, False

    def withdrawn(self, node_id: str) -> bool:
        return False

    def sample(self, rate: float) -> bool:
        return False

    async def convict(self, *args: Any) -> None: ...

    async def audit(self, *args: Any, **kwargs: Any) -> Any: ...


def test_an_audited_session_refuses_to_let_the_last_hop_draw() -> None:
    session = RouteSession(PLAN, auditor=NoAudits())
    with pytest.raises(ValueError, match="greedy"):
        asyncio.run(session.open(8, Sampling(temperature=0.7, seed=1)))


def test_a_sampled_generation_opens_the_last_hop_greedy_and_draws_itself() -> None:
    def no_route(*args: Any) -> RoutePlan:
        raise AssertionError("not planned here")

    sampled = Sampling(temperature=0.7, top_p=0.9, seed=5)
    generation = Generation(PLAN.fingerprint, no_route, sampled, GenerationSettings())
    assert generation._sampling == Sampling(temperature=0.0, logprobs=WIRE_TOP_K)
    assert generation._pick is not None
    greedy = Generation(PLAN.fingerprint, no_route, Sampling(), GenerationSettings())
    assert greedy._sampling == Sampling() and greedy._pick is None
