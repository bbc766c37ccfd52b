"""The planner's cached candidate lists: reused while valid, re-read after every change.

Thousands of live nodes, on SQLite and a real PostgreSQL (MESHNET_TEST_POSTGRES_URL).
One node of each world, the "star", is far faster than its peers, so every route
that may use it does (the cost model's slack band holds it alone): a route
without it after a change proves the change reached the planner's cache.
Two planners stand for two tracker worker processes with caches of their own.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from tests.tracker_service.helpers import capability, identity_block
from tests.tracker_service.routing_fixtures import (
    add_measured,
    add_nodes,
    node_row,
    register_recipe_of,
)
from tests.tracker_service.store_backends import (
    BACKENDS,
    fresh_database,
)
from tracker_service.domain.keys import TrackerKey
from tracker_service.domain.recipe_identity import parse_identity
from tracker_service.errors import RouteRefused
from tracker_service.services.route_planner import RoutePlanner
from tracker_service.store.db import Database
from tracker_service.store.ledger import revoke_certification
from tracker_service.store.nodes import Liveness, end_registration, register_node, set_reachability
from tracker_service.store.quarantine import quarantine_node
from tracker_service.store.route_candidates import DialTarget, record_dial
from tracker_service.store.routing_version import routing_version
from tracker_service.store.tables import (
    NODE_BANNED,
    NODE_DEREGISTERED,
    NODE_REMOVED,
    REACH_REACHABLE,
    REACH_UNCHECKED,
    REACH_UNREACHABLE,
    Recipe,
)

LIVENESS = Liveness(live_window_s=30.0, session_ttl_s=900.0)
LONG = 3600.0


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    db = fresh_database(request.param, tmp_path, "tracker.db")
    yield db
    db.dispose()


@dataclass
class World:
    database: Database
    key: tuple[str, str]
    star: str
    workers: tuple[RoutePlanner, RoutePlanner]
    size: int


def make_world(database: Database, size: int) -> World:
    key = register_recipe_of(database)
    with database.sessions.begin() as session:
        session.query(Recipe).filter_by(model_artifact_digest=key[0]).one().status = "certified"
    # Windows far longer than the test: only the expiry test lets one end.
    peers = [
        node_row(0, 15, throughput=40.0 + i % 7, live_for_s=LONG)
        if i % 2
        else node_row(15, 30, throughput=40.0, live_for_s=LONG)
        for i in range(size - 1)
    ]
    [star] = add_nodes(database, [node_row(0, 15, throughput=1e9, live_for_s=LONG)])
    add_nodes(database, peers)
    # Routes weigh measured speed: the star is measured as fast as it claims.
    add_measured(database, key[0], {star: 1e9}, layers=15)
    seed = TrackerKey.from_seed(b"\x05" * 32)
    # No age limit inside a test: what is asserted is invalidation, not the clock.
    workers = (
        RoutePlanner(database, seed, ticket_ttl_s=60.0, candidate_max_age_s=3600.0),
        RoutePlanner(database, seed, ticket_ttl_s=60.0, candidate_max_age_s=3600.0),
    )
    return World(database, key, star, workers, size)


def routed(planner: RoutePlanner, key: tuple[str, str], times: int = 4) -> set[str]:
    return {hop.node_id for _ in range(times) for hop in planner.plan(key).hops}


def listed(planner: RoutePlanner, key: tuple[str, str], now: float | None = None) -> set[str]:
    return {c.node_id for c in planner.candidates(key, now=now)[1]}


def _warm(world: World) -> None:
    for planner in world.workers:
        assert world.star in routed(planner, world.key)
        assert len(listed(planner, world.key)) == world.size


def _register_again(session: Any, node_id: str, now: float) -> None:
    identity = parse_identity(identity_block(0, 15))
    register_node(
        session,
        node_id=node_id,
        public_key=os.urandom(32),
        endpoint="ws://127.0.0.1:9",
        identity=identity,
        capability=capability(identity_block(0, 15)),
        throughput=1e9,
        now=now,
        liveness=LIVENESS,
    )


CHANGES = {
    "deregistered": lambda s, n, now: end_registration(s, n, NODE_DEREGISTERED, "stopped"),
    "removed": lambda s, n, now: end_registration(s, n, NODE_REMOVED, "operator"),
    "banned": lambda s, n, now: end_registration(s, n, NODE_BANNED, "operator"),
    "quarantined": lambda s, n, now: quarantine_node(s, n, reason="lied", evidence={"hop": 0}),
    "unreachable": lambda s, n, now: set_reachability(
        s, n, status=REACH_UNREACHABLE, reason="dial failed", now=now
    ),
    # A new registration is dialled before it routes again.
    "re-registered": _register_again,
}


def _change_and_check(world: World, change: str) -> None:
    before = routing_version_of(world)
    with world.database.sessions.begin() as session:
        CHANGES[change](session, world.star, time.time())
    assert routing_version_of(world) > before
    for planner in world.workers:
        fills = planner.cache.stats.fills
        for _ in range(3):
            assert world.star not in listed(planner, world.key)
            assert world.star not in routed(planner, world.key)
        assert planner.cache.stats.fills == fills + 1  # read again once, then reused
        assert len(listed(planner, world.key)) == world.size - 1


def routing_version_of(world: World) -> int:
    with world.database.session() as session:
        version = routing_version(session, world.key)
    assert version is not None
    return version


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_node_that_leaves_routing_is_never_routed_again(database: Database, change: str) -> None:
    world = make_world(database, 2_000)
    _warm(world)
    _change_and_check(world, change)


def test_the_list_is_reused_and_heartbeats_do_not_invalidate_it(database: Database) -> None:
    world = make_world(database, 2_000)
    planner = world.workers[0]
    routed(planner, world.key, times=5)
    assert (planner.cache.stats.fills, planner.cache.stats.hits) == (1, 4)
    version = routing_version_of(world)
    now = time.time()
    with database.sessions.begin() as session:  # what HeartbeatWriter writes
        session.execute(
            text("UPDATE nodes SET live_until=:until, last_heartbeat_at=:now, load=0.5"),
            {"until": now + LIVENESS.live_window_s, "now": now},
        )
    assert routing_version_of(world) == version
    routed(planner, world.key, times=3)
    assert planner.cache.stats.fills == 1


def test_an_expired_node_leaves_the_list_when_its_window_ends(database: Database) -> None:
    world = make_world(database, 2_000)
    now = time.time()
    [brief] = add_nodes(database, [node_row(0, 15, throughput=1e9, live_for_s=20.0)])
    planner = world.workers[0]
    assert brief in listed(planner, world.key, now=now)
    assert brief in listed(planner, world.key, now=now + 1)  # still its window: reused
    assert planner.cache.stats.fills == 1
    later = listed(planner, world.key, now=now + 30)  # past its window, within the others'
    assert brief not in later and len(later) == world.size
    assert planner.cache.stats.fills == 2


def test_a_new_node_becomes_routable_once_dialled(database: Database) -> None:
    world = make_world(database, 2_000)
    _warm(world)
    now = time.time()
    [fresh] = add_nodes(database, [node_row(15, 30, throughput=1e9, reachability=REACH_UNCHECKED)])
    add_measured(database, world.key[0], {fresh: 1e9}, layers=15)
    for planner in world.workers:
        assert fresh not in listed(planner, world.key)  # registered, not yet dialled
    with database.sessions.begin() as session:
        registered_at = session.execute(
            text("SELECT registered_at FROM nodes WHERE node_id=:n"), {"n": fresh}
        ).scalar_one()
        dialled = DialTarget(
            fresh, "ws://127.0.0.1:9", b"", registered_at, REACH_UNCHECKED, world.key
        )
        assert record_dial(session, dialled, status=REACH_REACHABLE, reason="ok", now=now)
    for planner in world.workers:
        assert fresh in routed(planner, world.key)
    # A re-check that confirms the verdict changes nothing: the lists stay cached.
    version = routing_version_of(world)
    with database.sessions.begin() as session:
        assert record_dial(session, dialled, status=REACH_REACHABLE, reason="ok", now=now)
    assert routing_version_of(world) == version


def test_a_ledger_change_is_seen_at_once(database: Database) -> None:
    world = make_world(database, 2_000)
    _warm(world)
    before = routing_version_of(world)
    with database.sessions.begin() as session:
        assert revoke_certification(session, world.key, reason="bad evidence", now=time.time())
    assert routing_version_of(world) > before
    for planner in world.workers:
        with pytest.raises(RouteRefused) as refused:
            planner.plan(world.key)
        assert refused.value.reason == "recipe-dark"


# Not marked slow: about 6 s per store on an idle machine (the marker is for real
# models and processes), under a minute on a loaded one.
def test_ten_thousand_nodes_every_change_reaches_both_workers(database: Database) -> None:
    """The issue's scale: 10,000 live nodes, each kind of change in turn."""
    world = make_world(database, 10_000)
    _warm(world)
    for change in sorted(CHANGES):
        with database.sessions.begin() as session:  # the star back, routable, as dialled
            session.execute(
                text(
                    "UPDATE nodes SET state='active', live_until=:until, reachability='reachable' "
                    "WHERE node_id=:n"
                ),
                {"until": time.time() + LONG, "n": world.star},
            )
            session.execute(text("UPDATE recipes SET routing_version=routing_version+1"))
        _warm(world)
        _change_and_check(world, change)
