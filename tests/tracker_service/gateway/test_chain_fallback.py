"""How a generation chooses a route's shape (docs/wire.md#chained-hops): routes run as
chains unless the operator or the request says otherwise, and a route that fails *as a
chain* (a link refused or broken, a hop passing on other states than it showed) is
replaced by the same nodes as a star, none of them excluded; any other failure still
excludes the failed node."""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence
from typing import Any, ClassVar

import pytest

from tracker_service.errors import RouteFailure
from tracker_service.gateway import generation as generation_module
from tracker_service.gateway.chain_memory import ChainMemory
from tracker_service.gateway.generation import Generation, GenerationSettings
from tracker_service.services.session_plan import GeneratedToken, PlannedHop, RoutePlan, Sampling

NODES = ("a" * 32, "b" * 32)


class FakeSession:
    """Stands in for RouteSession: records how it was asked to run, fails as told."""

    opened: ClassVar[list[tuple[bool, tuple[str, ...]]]] = []
    failures: ClassVar[list[RouteFailure]] = []

    def __init__(self, plan: RoutePlan, *, chain: bool, **_: Any) -> None:
        self.plan = plan
        self.chain = chain
        self.position = 0
        self.speculative = False

    @property
    def chained(self) -> bool:
        return self.chain

    async def open(self, max_length: int, sampling: Sampling | None = None) -> None:
        FakeSession.opened.append((self.chain, tuple(h.node_id for h in self.plan.hops)))
        if FakeSession.failures:
            raise FakeSession.failures.pop(0)

    async def step(self, token_ids: Sequence[int]) -> GeneratedToken:
        self.position += len(token_ids)
        return GeneratedToken(token_id=7, top_ids=[], top_logprobs=[], position=0, compute_ms=())

    async def close(self) -> list[Any]:
        return []

    async def abort(self) -> None:
        return None

    async def abandon(self, failure: Any = None) -> list[int]:
        return []  # no step verified: nothing paid, nothing for the next route to skip

    async def settle_abandoned(self) -> None:
        return None


def plan(_key: Any, excluded: Collection[str], *_: Any) -> RoutePlan:
    hops = tuple(
        PlannedHop(n, 0, 1, 0, "ws://127.0.0.1:1", b"k" * 32) for n in NODES if n not in excluded
    )
    return RoutePlan("rs-1", 1, 0.0, ("f", "r"), 1, hops, {"ticket": {}, "signature": ""})


def run(
    failures: list[RouteFailure],
    *,
    request_chain: bool = True,
    mode: str = "auto",
    chains: ChainMemory | None = None,
) -> None:
    FakeSession.opened = []
    FakeSession.failures = list(failures)
    settings = GenerationSettings(chain=mode, speculative="off")

    async def go() -> list[int]:
        gen = Generation(("f", "r"), plan, Sampling(), settings, chain=request_chain, chains=chains)
        return [t async for t in gen.run([1, 2, 3], 3)]

    assert asyncio.run(go()) == [7, 7, 7]


@pytest.fixture(autouse=True)
def fake_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(generation_module, "RouteSession", FakeSession)


def test_routes_run_as_chains_unless_the_operator_or_the_request_says_star() -> None:
    run([])
    assert FakeSession.opened == [(True, NODES)]
    run([], request_chain=False)
    assert FakeSession.opened == [(False, NODES)]
    run([], mode="off")
    assert FakeSession.opened == [(False, NODES)]


@pytest.mark.parametrize("reason", ["chain-refused", "chain-broken", "chain-mismatch"])
def test_a_route_that_failed_as_a_chain_runs_again_as_a_star_over_the_same_nodes(
    reason: str,
) -> None:
    run([RouteFailure(reason, "no link", hop_index=0, node_id=NODES[0])])
    assert FakeSession.opened == [(True, NODES), (False, NODES)]


def test_any_other_failure_excludes_the_node_and_keeps_the_chain() -> None:
    run([RouteFailure("connection-closed", "gone", hop_index=1, node_id=NODES[1])])
    assert FakeSession.opened == [(True, NODES), (True, NODES[:1])]


def test_hops_that_could_not_link_run_as_stars_for_a_while_then_chain_again() -> None:
    now = [0.0]
    memory = ChainMemory(forget_after_s=600.0, clock=lambda: now[0])
    run([RouteFailure("chain-broken", "no link", hop_index=0, node_id=NODES[0])], chains=memory)
    assert FakeSession.opened == [(True, NODES), (False, NODES)]
    run([], chains=memory)  # the next request over the same hops opens as a star at once
    assert FakeSession.opened == [(False, NODES)]
    assert memory.can_chain(["c" * 32, *NODES[1:]])  # other pairs still chain
    now[0] = 601.0
    run([], chains=memory)
    assert FakeSession.opened == [(True, NODES)]
