"""Registrations that never became reachable, and what they leave, are pruned on a schedule.

Registration is an open door; rows nothing ever removed let one address grow the
node and recipe tables without bound. Nodes register through the real API, time
passes (their ``live_until`` and the recipes' ``first_seen_at`` set back), and the
tracker's own pruning loop runs; /metrics counts what it pruned.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from tests.tracker_service.conftest import make_settings, register
from tests.tracker_service.helpers import FakeNode, identity_block
from tracker_service.app import create_app
from tracker_service.store.tables import (
    NODE_QUARANTINED,
    REACH_REACHABLE,
    REACH_UNREACHABLE,
    Node,
    Recipe,
)

HOUR = 3600.0
DAY = 86400.0
POLL_S = 60.0


@pytest.fixture
def tracker(tmp_path: Path) -> Iterator[tuple[TestClient, Any]]:
    settings = make_settings(
        tmp_path,
        background_tasks=False,
        prune_interval_s=0.05,
        prune_unreachable_after_s=HOUR,
        prune_dead_after_s=7 * DAY,
    )
    app = create_app(settings)
    with TestClient(app) as client:
        yield client, app
    app.state.tracker.database.dispose()


def _age(app: Any, node: FakeNode, *, quiet_s: float, **values: Any) -> None:
    """Time passes for `node`: silent for `quiet_s`, with `values` set."""
    with app.state.tracker.database.sessions.begin() as session:
        session.execute(
            update(Node)
            .where(Node.node_id == node.node_id)
            .values(live_until=time.time() - quiet_s, **values)
        )


def test_dead_registrations_nodes_and_recipes_are_pruned(tracker: Any) -> None:
    client, app = tracker
    ghost_recipe = identity_block(backend_id="ghost-backend")
    nodes = {name: FakeNode() for name in ("ghost", "gone", "quarantined", "live")}
    for name, node in nodes.items():
        identity = ghost_recipe if name == "ghost" else None
        assert register(client, node, identity).status_code == 200, name
    database = app.state.tracker.database
    with database.sessions.begin() as session:
        assert session.execute(select(Recipe)).scalars().all()  # two fingerprints seen
        session.execute(update(Recipe).values(first_seen_at=time.time() - 30 * DAY))
    # Never reachable, silent two hours; reachable once, silent eight days; caught
    # lying and silent a month (kept: re-registering must not lift a quarantine).
    _age(app, nodes["ghost"], quiet_s=2 * HOUR, reachability=REACH_UNREACHABLE)
    _age(app, nodes["gone"], quiet_s=8 * DAY, reachability=REACH_REACHABLE)
    _age(app, nodes["quarantined"], quiet_s=30 * DAY, state=NODE_QUARANTINED)

    pruner = app.state.routing.pruner

    async def run_the_schedule() -> None:
        await pruner.start()
        try:
            deadline = asyncio.get_running_loop().time() + POLL_S
            while _pruned(client).get("recipes", 0) < 1:
                assert asyncio.get_running_loop().time() < deadline, _pruned(client)
                await asyncio.sleep(0.05)
        finally:
            await pruner.stop()

    asyncio.run(run_the_schedule())

    with database.session() as session:
        left = set(session.execute(select(Node.node_id)).scalars())
        recipes = session.execute(select(Recipe.runtime_recipe_digest)).scalars().all()
    assert left == {nodes["quarantined"].node_id, nodes["live"].node_id}
    assert len(recipes) == 1  # the ghost's fingerprint went with it; the live one stays
    assert _pruned(client) == {"registrations": 1, "nodes": 1, "recipes": 1}


def _pruned(client: TestClient) -> dict[str, int]:
    """meshnet_tracker_pruned_total by what, as /metrics shows it."""
    counts: dict[str, int] = {}
    for line in client.get("/metrics").text.splitlines():
        if line.startswith("meshnet_tracker_pruned_total{"):
            what = line.split('what="', 1)[1].split('"', 1)[0]
            counts[what] = int(float(line.rsplit(" ", 1)[1]))
    return counts
