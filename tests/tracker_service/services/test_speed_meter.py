"""The tracker's own measure of node speed: a real route session times each hop's
decode steps (not its prefill), and the meter writes them behind into the store."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tracker_service.real_nodes import (
    NUM_LAYERS,
    RealNode,
    build_tiny_model,
    start_real_node,
)
from tests.tracker_service.routing_fixtures import open_database
from tracker_service.domain.keys import TrackerKey
from tracker_service.domain.measured_speed import MeasuredSpeed
from tracker_service.domain.route_formation import Candidate, form_route
from tracker_service.services.route_planner import plan_for
from tracker_service.services.route_session import RouteSession
from tracker_service.services.session_plan import PlannedHop, Sampling
from tracker_service.services.speed_meter import SpeedMeter
from tracker_service.store.db import Database
from tracker_service.store.node_speeds import TimedSteps, measured_speeds, record_steps

TRACKER = TrackerKey.from_seed(b"\x0b" * 32)
PROMPT = [5, 17, 99, 3, 250, 41]
ARTIFACT = "a" * 64


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RealNode, RealNode]]:
    model = build_tiny_model(tmp_path_factory.mktemp("speed-meter-tiny-llama"))
    a = start_real_node(model, 0, 2, tracker_public_key=TRACKER.public_key_raw)
    b = start_real_node(model, 1, 4, tracker_public_key=TRACKER.public_key_raw)
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    db = open_database(tmp_path)
    yield db
    db.dispose()


@pytest.mark.parametrize("chain", [False, True], ids=["star", "chain"])
def test_a_star_route_times_every_hop_of_every_decode_step_a_chain_none(
    nodes: tuple[RealNode, RealNode], chain: bool
) -> None:
    a, b = nodes
    candidates = [
        Candidate(n.node_id, n.endpoint, n.public_key, n.shard.start, n.shard.end, 10.0)
        for n in nodes
    ]
    route = form_route(candidates, NUM_LAYERS, min_nodes=2)
    timed: list[tuple[str, int, float]] = []

    def timer(hop: PlannedHop, seconds: float) -> None:
        timed.append((hop.node_id, hop.effective_start, seconds))

    plan = dataclasses.replace(plan_for(route, a.fingerprint, TRACKER, ttl_s=60.0), on_step=timer)
    new_tokens = 5

    async def run() -> None:
        async with RouteSession(plan, open_timeout_s=10, step_timeout_s=30, chain=chain) as s:
            await s.open(len(PROMPT) + new_tokens, Sampling(temperature=0.0))
            assert s.chained is chain
            _ = [token async for token in s.generate(PROMPT, new_tokens)]
            await s.close()

    asyncio.run(run())
    if chain:
        # A chained hop's time would run from its predecessor's reply, which that
        # predecessor can delay or hurry: a chain gives no per-hop sample to shift.
        assert timed == []
        return
    # The prefill is not timed (its positions run at once); each decode step is, per hop.
    steps = new_tokens - 1
    assert [node_id for node_id, _, _ in timed] == [a.node_id, b.node_id] * steps
    assert all(seconds > 0 for _, _, seconds in timed)
    assert {start for node_id, start, _ in timed if node_id == b.node_id} == {2}


def test_the_store_keeps_a_moving_mean_per_node_and_model(database: Database) -> None:
    with database.sessions.begin() as session:
        record_steps(
            session,
            [TimedSteps("n1", ARTIFACT, 10.0, 4), TimedSteps("n1", ARTIFACT, 20.0, 4)],
            alpha=0.5,
            now=time.time(),
        )
        record_steps(session, [TimedSteps("n1", "b" * 64, 99.0, 1)], alpha=0.5, now=time.time())
    with database.session() as session:
        assert measured_speeds(session, ARTIFACT) == {"n1": MeasuredSpeed(15.0, 8)}
    with database.sessions.begin() as session:
        record_steps(session, [TimedSteps("n1", ARTIFACT, 5.0, 1)], alpha=0.5, now=time.time())
    with database.session() as session:
        assert measured_speeds(session, ARTIFACT) == {"n1": MeasuredSpeed(10.0, 9)}
        assert measured_speeds(session, "b" * 64) == {"n1": MeasuredSpeed(99.0, 1)}


def hop(node_id: str, start: int, end: int) -> PlannedHop:
    return PlannedHop(node_id, start, end, start, "ws://127.0.0.1:9", b"k" * 32)


def test_the_meter_writes_behind_without_blocking_the_session(database: Database) -> None:
    meter = SpeedMeter(database, alpha=1.0, flush_s=0.2)
    timer = meter.timer(ARTIFACT)

    async def session() -> None:
        for _ in range(4):
            timer(hop("n1", 0, 10), 0.05)  # 5 ms per layer
            timer(hop("n2", 10, 30), 0.2)  # 10 ms per layer
        assert meter.pending() == 8  # nothing written on the session's loop
        deadline = time.monotonic() + 10.0
        while meter.pending():
            assert time.monotonic() < deadline, "never written"
            await asyncio.sleep(0.02)

    asyncio.run(session())
    with database.session() as session_:
        got = measured_speeds(session_, ARTIFACT)
    assert got["n1"].ms_per_layer == pytest.approx(5.0) and got["n1"].steps == 4
    assert got["n2"].ms_per_layer == pytest.approx(10.0) and got["n2"].steps == 4


def test_a_failed_write_loses_a_few_steps_never_the_route(tmp_path: Path) -> None:
    database = open_database(tmp_path)
    meter = SpeedMeter(database)
    database.dispose()
    (tmp_path / "tracker.db").unlink()
    (tmp_path / "tracker.db").mkdir()  # no database there any more
    meter.observe(ARTIFACT, hop("n1", 0, 10), 0.05)  # outside a loop: written at once
    assert meter.pending() == 0


def test_steps_timed_while_a_write_runs_are_written_after_it(database: Database) -> None:
    meter = SpeedMeter(database, alpha=1.0, flush_s=0.0)
    timer = meter.timer(ARTIFACT)

    async def session() -> None:
        for i in range(200):  # many writes in flight, the last steps after the last start
            timer(hop(f"n{i % 3}", 0, 10), 0.05)
            if i % 50 == 0:
                await asyncio.sleep(0)
        deadline = time.monotonic() + 10.0
        while meter.pending():
            assert time.monotonic() < deadline, "steps stranded behind a write"
            await asyncio.sleep(0.02)

    asyncio.run(session())
    with database.session() as session_:
        got = measured_speeds(session_, ARTIFACT)
    assert sum(speed.steps for speed in got.values()) == 200
    # A later loop (the first one ended) still gets its steps written.
    asyncio.run(session())
    with database.session() as session_:
        assert sum(s.steps for s in measured_speeds(session_, ARTIFACT).values()) == 400
