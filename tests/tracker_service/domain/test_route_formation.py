"""Route formation: coverage without holes, overlaps resolved by effective_start,
fingerprint partitioning, the ledger gate, preference and load spreading."""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.tracker_service.conftest import make_settings
from tests.tracker_service.routing_fixtures import (
    LAYERS,
    add_nodes,
    node_row,
    open_database,
    register_recipe_of,
)
from tracker_service.app import create_app
from tracker_service.domain.keys import TrackerKey
from tracker_service.domain.recipe_identity import coverage_gap
from tracker_service.domain.route_formation import (
    Candidate,
    RecentAssignments,
    RouteHop,
    RoutingPolicy,
    form_route,
)
from tracker_service.errors import NoRoute, RouteRefused
from tracker_service.services.route_planner import RoutePlanner
from tracker_service.store.db import Database
from tracker_service.store.tables import (
    NODE_BANNED,
    REACH_UNCHECKED,
    REACH_UNREACHABLE,
    Recipe,
)

BF16 = {"compute_dtype": "bfloat16"}
INT8 = {"weight_quantization": "int8-per-channel", "recipe_id": "llama-int8"}


def node(
    name: str, start: int, end: int, throughput: float = 50.0, open_sessions: int = 0
) -> Candidate:
    return Candidate(
        name, f"ws://{name}:1", b"k" * 32, start, end, throughput, open_sessions=open_sessions
    )


def spans(route_hops: tuple[RouteHop, ...]) -> list[tuple[str, int, int, int]]:
    return [
        (h.candidate.node_id, h.candidate.start, h.effective_start, h.candidate.end)
        for h in route_hops
    ]


# -- pure formation ---------------------------------------------------------------------------


def test_route_covers_every_layer_in_order_without_a_hole() -> None:
    route = form_route([node("b", 10, 20), node("c", 20, 30), node("a", 0, 10)], LAYERS)
    assert spans(route.hops) == [("a", 0, 0, 10), ("b", 10, 10, 20), ("c", 20, 20, 30)]
    assert coverage_gap([(h.effective_start, h.candidate.end) for h in route.hops], LAYERS) is None


def test_overlapping_hop_starts_where_the_previous_one_stopped() -> None:
    route = form_route([node("a", 0, 16), node("b", 12, 30)], LAYERS)
    assert spans(route.hops) == [("a", 0, 0, 16), ("b", 12, 16, 30)]
    assert [h.ticket_hop.effective_start for h in route.hops] == [0, 16]


def test_a_hole_in_coverage_is_refused_naming_the_missing_layers() -> None:
    with pytest.raises(NoRoute, match="layers 10–12"):
        form_route([node("a", 0, 10), node("b", 12, 30)], LAYERS)


def test_no_candidates_at_all_is_no_route() -> None:
    with pytest.raises(NoRoute):
        form_route([], LAYERS)


def test_excluded_nodes_are_left_out() -> None:
    candidates = [node("a", 0, 15), node("b", 0, 15), node("c", 15, 30)]
    for _ in range(20):
        route = form_route(candidates, LAYERS, exclude={"a"})
        assert "a" not in route.node_ids
    with pytest.raises(NoRoute):
        form_route(candidates, LAYERS, exclude={"c"})


def test_certification_needs_two_distinct_nodes_even_when_one_serves_everything() -> None:
    candidates = [node("whole", 0, 30, throughput=1000.0), node("a", 0, 15), node("b", 15, 30)]
    assert form_route(candidates, LAYERS).node_ids == ("whole",)
    route = form_route(candidates, LAYERS, min_nodes=2)
    assert len(set(route.node_ids)) == 2 and route.node_ids[0] == "a"
    assert route.hops[1].effective_start == 15
    with pytest.raises(NoRoute, match="2 or more distinct nodes"):
        form_route([node("x", 0, 30), node("y", 0, 30)], LAYERS, min_nodes=2)


def test_faster_nodes_are_preferred() -> None:
    candidates = [
        node("slow-head", 0, 15, throughput=5.0),
        node("fast-head", 0, 15, throughput=200.0),
        node("tail", 15, 30),
    ]
    picks = Counter(form_route(candidates, LAYERS).node_ids[0] for _ in range(50))
    assert picks == {"fast-head": 50}


def test_lower_latency_is_preferred_between_equal_throughput() -> None:
    candidates = [node("far", 0, 15), node("near", 0, 15), node("tail", 15, 30)]
    latency = {"far": 400.0, "near": 2.0}
    picks = Counter(
        form_route(candidates, LAYERS, latency_ms=latency.get).node_ids[0] for _ in range(50)
    )
    assert picks == {"near": 50}


def test_fewer_hops_win_when_nodes_are_equally_fast() -> None:
    candidates = [node("a", 0, 10), node("b", 10, 20), node("c", 20, 30), node("d", 0, 30)]
    assert form_route(candidates, LAYERS).node_ids == ("d",)


def test_busy_nodes_are_avoided() -> None:
    candidates = [node("busy", 0, 15, open_sessions=12), node("idle", 0, 15), node("t", 15, 30)]
    picks = Counter(form_route(candidates, LAYERS).node_ids[0] for _ in range(30))
    assert picks == {"idle": 30}


def test_load_is_spread_over_equivalent_nodes() -> None:
    heads = [node(f"h{i}", 0, 15) for i in range(4)]
    tails = [node(f"t{i}", 15, 30) for i in range(4)]
    rng = random.Random(7)
    used = Counter(
        n for _ in range(400) for n in form_route(heads + tails, LAYERS, rng=rng).node_ids
    )
    assert set(used) == {c.node_id for c in heads + tails}
    assert min(used.values()) > 50  # ~100 each if spread evenly


def test_recent_assignments_steer_a_burst_away_from_the_same_node() -> None:
    """Without a slack band the best node always wins; the routes handed out since
    the last heartbeat make the less used one best, so a burst stays balanced."""
    candidates = [node("x", 0, 15), node("y", 0, 15), node("t", 15, 30, throughput=1e6)]
    strict = RoutingPolicy(slack=0.0)
    recent = RecentAssignments(window_s=60.0)
    firsts = []
    for _ in range(20):
        route = form_route(candidates, LAYERS, recent=recent.snapshot(), policy=strict)
        recent.add(route.node_ids)
        firsts.append(route.node_ids[0])
    for count in range(1, len(firsts) + 1):
        assert abs(firsts[:count].count("x") - firsts[:count].count("y")) <= 1


# -- the store: partitioning, liveness, the ledger gate ---------------------------------------


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    db = open_database(tmp_path)
    yield db
    db.dispose()


def planner(database: Database) -> RoutePlanner:
    return RoutePlanner(database, TrackerKey.from_seed(b"\x01" * 32), ticket_ttl_s=60.0)


def certify_directly(database: Database, key: tuple[str, str]) -> None:
    with database.sessions.begin() as session:
        row = session.query(Recipe).filter_by(model_artifact_digest=key[0]).one()
        row.status = "certified"


def test_candidates_are_partitioned_by_exact_fingerprint(database: Database) -> None:
    key = register_recipe_of(database)
    other = register_recipe_of(database, **BF16)
    assert key != other
    mine = add_nodes(database, [node_row(0, 15), node_row(15, 30)])
    add_nodes(database, [node_row(0, 30, recipe=BF16, throughput=1e6)])
    for _ in range(10):
        plan = planner(database).plan(key, purpose="certify")
        assert [h.node_id for h in plan.hops] == mine
        assert plan.fingerprint == key
        assert plan.signed_ticket["ticket"]["fingerprint"]["runtime_recipe_digest"] == key[1]


def test_int8_and_fp32_nodes_never_share_a_route(database: Database) -> None:
    fp32 = register_recipe_of(database)
    int8 = register_recipe_of(database, **INT8)
    assert fp32[0] == int8[0] and fp32[1] != int8[1]  # same weights, another recipe
    fp32_nodes = add_nodes(database, [node_row(0, 15)])
    int8_nodes = add_nodes(database, [node_row(15, 30, recipe=INT8)])
    for key in (fp32, int8):  # half a model of each: neither recipe has a whole route
        with pytest.raises(NoRoute):
            planner(database).plan(key, purpose="certify")
    fp32_nodes += add_nodes(database, [node_row(15, 30)])
    int8_nodes = add_nodes(database, [node_row(0, 15, recipe=INT8)]) + int8_nodes
    assert [h.node_id for h in planner(database).plan(fp32, purpose="certify").hops] == fp32_nodes
    assert [h.node_id for h in planner(database).plan(int8, purpose="certify").hops] == int8_nodes


def test_only_live_reachable_active_nodes_are_routed(database: Database) -> None:
    key = register_recipe_of(database)
    good = add_nodes(database, [node_row(0, 15), node_row(15, 30)])
    add_nodes(
        database,
        [
            node_row(0, 30, throughput=1e6, reachability=REACH_UNREACHABLE),
            node_row(0, 30, throughput=1e6, reachability=REACH_UNCHECKED),
            node_row(0, 30, throughput=1e6, state=NODE_BANNED),
            node_row(0, 30, throughput=1e6, live_for_s=-1.0),  # heartbeat stale
        ],
    )
    for _ in range(10):
        assert [h.node_id for h in planner(database).plan(key, purpose="certify").hops] == good


def test_a_dark_recipe_is_routed_only_to_certify_it(database: Database) -> None:
    key = register_recipe_of(database)
    add_nodes(database, [node_row(0, 15), node_row(15, 30)])
    with pytest.raises(RouteRefused) as refused:
        planner(database).plan(key, purpose="serve")
    assert refused.value.reason == "recipe-dark"
    assert len(planner(database).plan(key, purpose="certify", min_nodes=2).hops) == 2
    certify_directly(database, key)
    assert len(planner(database).plan(key, purpose="serve").hops) == 2


def test_a_planner_keeps_one_pool_per_candidate_list(database: Database) -> None:
    key = register_recipe_of(database)
    add_nodes(database, [node_row(0, 15), node_row(15, 30)])
    routes = planner(database)
    routes.plan(key, purpose="certify")
    _, listed = routes.cache.shared(key)
    pool = routes.pool(key, listed)
    routes.plan(key, purpose="certify")
    assert routes.pool(key, routes.cache.shared(key)[1]) is pool  # the list was not re-read
    routes.cache.forget(key)
    _, reread = routes.cache.shared(key)
    assert reread is not listed and reread == listed
    assert routes.pool(key, reread) is not pool  # a re-read list gets a pool of its own


def test_the_planners_latency_mapping_steers_its_routes(database: Database) -> None:
    key = register_recipe_of(database)
    near, far = add_nodes(database, [node_row(0, 15), node_row(0, 15)])
    add_nodes(database, [node_row(15, 30)])
    measured = {far: 400.0, near: 2.0}
    routes = RoutePlanner(
        database,
        TrackerKey.from_seed(b"\x01" * 32),
        ticket_ttl_s=60.0,
        latencies=lambda: measured,
    )
    heads = Counter(routes.plan(key, purpose="certify").hops[0].node_id for _ in range(20))
    assert heads == {near: 20}
    measured = {far: 2.0, near: 400.0}  # the next request weighs the new figures
    heads = Counter(routes.plan(key, purpose="certify").hops[0].node_id for _ in range(20))
    assert heads == {far: 20}


def test_an_unknown_recipe_is_refused(database: Database) -> None:
    with pytest.raises(RouteRefused) as refused:
        planner(database).plan(("c" * 64, "d" * 64), purpose="certify")
    assert refused.value.reason == "unknown-recipe"


def test_route_api_refuses_dark_serves_certified_and_guards_certify(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, background_tasks=False)
    app = create_app(settings)
    database: Database = app.state.tracker.database
    key = register_recipe_of(database)
    add_nodes(database, [node_row(0, 16), node_row(12, 30)])
    body = {"model_artifact_digest": key[0], "runtime_recipe_digest": key[1]}
    with TestClient(app) as client:
        dark = client.post("/api/v1/routes", json=body)
        assert dark.status_code == 409 and dark.json()["reason"] == "recipe-dark"
        anonymous = client.post("/api/v1/routes", json={**body, "purpose": "certify"})
        assert anonymous.status_code == 401
        admin = {"Authorization": f"Bearer {settings.admin_token}"}
        certify = client.post("/api/v1/routes", json={**body, "purpose": "certify"}, headers=admin)
        assert certify.status_code == 200
        certify_directly(database, key)
        served = client.post("/api/v1/routes", json=body)
        assert served.status_code == 200
        route = served.json()
        assert [(h["start"], h["effective_start"], h["end"]) for h in route["hops"]] == [
            (0, 0, 16),
            (12, 16, 30),
        ]
        ticket_hops = route["ticket"]["ticket"]["hops"]
        assert [{k: h[k] for k in h if k != "next"} for h in ticket_hops] == [
            {k: h[k] for k in ("node_id", "start", "end", "effective_start")} for h in route["hops"]
        ]
        # each hop but the last names its successor: the route may run as a chain
        second = route["hops"][1]
        assert ticket_hops[0]["next"] == {
            "endpoint": second["endpoint"],
            "tls_pin": second["tls_pin"],
        }
        assert "next" not in ticket_hops[1]
        assert route["tracker_public_key"] == app.state.tracker.key.public_key_b64
        by_name = client.post("/api/v1/routes", json={"artifact_id": route_artifact()})
        assert by_name.status_code == 200
        excluded = client.post(
            "/api/v1/routes", json={**body, "exclude_nodes": [route["hops"][0]["node_id"]]}
        )
        assert excluded.status_code == 503 and excluded.json()["reason"] == "no-route"
    database.dispose()


def route_artifact() -> str:
    from tests.tracker_service.helpers import identity_block

    return str(identity_block()["artifact"]["artifact_id"])


def test_formation_over_ten_thousand_live_nodes(database: Database) -> None:
    """Measured, printed, not asserted: query + formation + signing for one route."""
    key = register_recipe_of(database)
    rng = random.Random(3)
    splits = [(0, 10), (10, 20), (20, 30), (0, 15), (15, 30), (0, 30), (5, 25), (8, 30)]
    rows = []
    for _ in range(10_000):
        start, end = rng.choice(splits)
        rows.append(node_row(start, end, throughput=rng.uniform(5, 100)))
    add_nodes(database, rows)
    add_nodes(database, [node_row(0, 30, recipe=BF16) for _ in range(500)])
    routes = planner(database)
    timings = []
    for _ in range(5):
        began = time.perf_counter()
        plan = routes.plan(key, purpose="certify")
        timings.append((time.perf_counter() - began) * 1000)
        assert coverage_gap([(h.effective_start, h.end) for h in plan.hops], LAYERS) is None
    began = time.perf_counter()
    _, candidates = routes.candidates(key)
    query_ms = (time.perf_counter() - began) * 1000
    began = time.perf_counter()
    form_route(candidates, LAYERS)
    form_ms = (time.perf_counter() - began) * 1000
    print(
        f"\nroute over {len(candidates)} live nodes: query {query_ms:.1f} ms, formation "
        f"{form_ms:.1f} ms, plan (query+formation+ticket) median "
        f"{sorted(timings)[len(timings) // 2]:.1f} ms"
    )
