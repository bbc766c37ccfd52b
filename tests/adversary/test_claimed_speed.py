"""Attack 4 of issue 35: a node claims 1e12 tokens/s to capture the routes.

A real tracker app: ten nodes register the whole model over the API, nine claiming
the 20 tokens/s they serve at and one claiming 1e12. The tracker's own sessions
time every hop's decode steps (RoutePlan.on_step, called by the route session
exactly so), the claimant's steps as slow as the others'. Then 1,000 route requests
go through ``POST /api/v1/routes``: the claimant must get no more than its fair
share. Before the defence it got all 1,000.

What a user cares about: the routes (and the credit they earn) follow the speed a
node serves at, not the speed it says it has; a newcomer is neither favoured by a
big claim nor starved for having none; a node's own lower claim is honoured.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.tracker_service.conftest import beat, make_settings, register
from tests.tracker_service.helpers import LAYERS, FakeNode, identity_block
from tracker_service.app import create_app
from tracker_service.services.route_planner import RoutePlanner
from tracker_service.store.route_candidates import nodes_due_for_dial, record_dial
from tracker_service.store.tables import REACH_REACHABLE, Recipe

HONEST = 20.0  # tokens/s every node really serves at
CLAIM = 1e12
ROUTES = 1_000
SESSIONS = 60  # measured sessions before the route requests
STEPS = 4  # decode steps per measured session


@pytest.fixture
def tracker(tmp_path: Path) -> Iterator[tuple[TestClient, Any]]:
    # No background dialling of the fake endpoints: the test records the dial verdicts.
    app = create_app(make_settings(tmp_path, background_tasks=False))
    with TestClient(app) as client:
        yield client, app
    app.state.tracker.database.dispose()


def join(client: TestClient, app: Any, port: int, claim: float) -> FakeNode:
    node = FakeNode(endpoint=f"ws://127.0.0.1:{port}")
    response = register(client, node, identity_block(0, LAYERS), tokens_per_second=claim)
    assert response.status_code == 200, response.text
    assert beat(client, node, throughput=claim).status_code == 200
    _dial_all(app)
    return node


def _dial_all(app: Any) -> None:
    """The dial verdicts the reachability monitor would store: every endpoint answers."""
    database = app.state.tracker.database
    now = time.time()
    with database.sessions.begin() as session:
        for target in nodes_due_for_dial(session, now=now, recheck_s=3600, retry_s=3600, limit=100):
            record_dial(session, target, status=REACH_REACHABLE, reason="test dial", now=now)


def fingerprint(client: TestClient) -> dict[str, str]:
    [recipe] = client.get("/api/v1/state").json()["recipes"]
    return {k: recipe[k] for k in ("model_artifact_digest", "runtime_recipe_digest")}


def certify(app: Any, key: dict[str, str]) -> None:
    """Serve routes need a certified recipe; certification has its own tests."""
    with app.state.tracker.database.sessions.begin() as session:
        row = session.query(Recipe).filter_by(**key).one()
        row.status = "certified"
        row.routing_version = (row.routing_version or 0) + 1


def measure(app: Any, key: dict[str, str], seconds: dict[str, float]) -> None:
    """Run the tracker's own sessions as its route client times them: each hop's decode
    steps reported to the plan's step timer, taking `seconds[node_id]` each."""
    planner: RoutePlanner = app.state.routing.planner
    fp = (key["model_artifact_digest"], key["runtime_recipe_digest"])

    async def sessions() -> None:
        for _ in range(SESSIONS):
            plan = await asyncio.to_thread(planner.plan, fp)
            assert plan.on_step is not None, "the tracker's plans time their steps"
            for _ in range(STEPS):
                for hop in plan.hops:
                    plan.on_step(hop, seconds.get(hop.node_id, 1.0 / HONEST))
        deadline = time.monotonic() + 30.0
        while planner.speeds.pending():  # written behind, within a second
            assert time.monotonic() < deadline, "measured steps were never written"
            await asyncio.sleep(0.05)

    asyncio.run(sessions())
    # What the candidate cache does within its max age, at once.
    planner.cache.forget()


def routes(client: TestClient, key: dict[str, str], count: int = ROUTES) -> Counter[str]:
    served: Counter[str] = Counter()
    for _ in range(count):
        response = client.post("/api/v1/routes", json=key)
        assert response.status_code == 200, response.text
        served.update(hop["node_id"] for hop in response.json()["hops"])
    return served


def shown(client: TestClient, node: FakeNode) -> dict[str, Any]:
    state = client.get("/api/v1/state").json()
    return dict(next(n for n in state["nodes"] if n["node_id"] == node.node_id))


def network(client: TestClient, app: Any) -> tuple[list[FakeNode], FakeNode, dict[str, str]]:
    honest = [join(client, app, 9100 + i, HONEST) for i in range(9)]
    claimant = join(client, app, 9200, CLAIM)
    key = fingerprint(client)
    certify(app, key)
    # The claimant's steps are as slow as the others', a little slower even.
    measure(app, key, {claimant.node_id: 1.1 / HONEST})
    return honest, claimant, key


def test_a_node_claiming_1e12_tokens_per_s_gets_no_more_than_its_fair_share(
    tracker: tuple[TestClient, Any],
) -> None:
    client, app = tracker
    honest, claimant, key = network(client, app)
    served = routes(client, key)
    fair = ROUTES / 10
    assert served[claimant.node_id] <= 1.5 * fair, served
    # The routes went to the honest nodes instead, each its share.
    assert all(served[n.node_id] >= 0.5 * fair for n in honest), served
    # The status API says what routing weighs: the measurement, not the claim.
    view = shown(client, claimant)
    assert view["throughput"] == CLAIM
    assert view["measured_steps"] >= STEPS
    assert view["measured_throughput"] is not None and view["measured_throughput"] < HONEST
    assert "measured" in client.get("/").text


def test_a_newcomer_is_costed_at_the_median_until_measured(
    tracker: tuple[TestClient, Any],
) -> None:
    client, app = tracker
    _, claimant, key = network(client, app)
    newcomer = join(client, app, 9300, CLAIM)  # unmeasured, claiming the moon
    app.state.routing.planner.cache.forget()
    assert shown(client, newcomer)["measured_throughput"] is None
    served = routes(client, key)
    fair = ROUTES / 11
    # Neither captured by its claim nor starved for being new: the median's share.
    assert 0.5 * fair <= served[newcomer.node_id] <= 1.5 * fair, served
    assert served[claimant.node_id] <= 1.5 * fair, served


def test_a_claim_below_the_measurement_lowers_the_estimate(
    tracker: tuple[TestClient, Any],
) -> None:
    client, app = tracker
    honest, _, key = network(client, app)
    modest = honest[0]
    assert beat(client, modest, throughput=2.0).status_code == 200  # says it is slow
    app.state.routing.planner.cache.forget()
    view = shown(client, modest)
    assert view["measured_throughput"] == pytest.approx(2.0)
    # Costed at ten times the others' per token: none of the next 100 routes.
    assert routes(client, key, count=100)[modest.node_id] == 0
