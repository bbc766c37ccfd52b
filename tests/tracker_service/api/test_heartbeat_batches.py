"""A batch of heartbeats in one commit: the same outcomes on SQLite and PostgreSQL.

PostgreSQL runs a batch pipelined, one statement per heartbeat (store/heartbeats.py),
the refreshed node's view coming back from it; SQLite runs two statements per
heartbeat and a third, the view, for a refreshed node. A repeated nonce, an unknown node and
an expired one must come out the same, and a failing batch must leave nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from tests.tracker_service.helpers import FakeNode, identity_block
from tests.tracker_service.store_backends import (
    BACKENDS,
    fresh_database,
)
from tests.tracker_service.store_rows import heartbeat_values, register_in_store
from tracker_service.domain.recipe_identity import parse_identity
from tracker_service.store.db import Database
from tracker_service.store.heartbeats import HeartbeatWriter
from tracker_service.store.ledger import register_recipe
from tracker_service.store.tables import (
    REACH_REACHABLE,
    REACH_UNCHECKED,
    Node,
    Recipe,
    SpentNonce,
)


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    db = fresh_database(request.param, tmp_path, "tracker.db")
    yield db
    db.dispose()


def test_a_batch_spends_each_nonce_once_and_refreshes_only_live_nodes(database: Database) -> None:
    now = time.time()
    alive, other, lapsed = FakeNode(), FakeNode(), FakeNode()
    register_in_store(database, alive, now)
    register_in_store(database, other, now)
    register_in_store(database, lapsed, now - 100)  # its 30 s window ended long ago
    writer = HeartbeatWriter(database)
    outcomes = writer.beat_many(
        [
            heartbeat_values(alive.node_id, "a1" * 16, now, throughput=55.0),
            heartbeat_values(other.node_id, "b1" * 16, now),
            heartbeat_values(alive.node_id, "a1" * 16, now),  # a replay inside the batch
            heartbeat_values("f" * 32, "c1" * 16, now),  # no such node
            heartbeat_values(lapsed.node_id, "d1" * 16, now),
            heartbeat_values(alive.node_id, "a2" * 16, now + 1, tokens_served=120),
        ]
    )
    assert outcomes == [
        (True, True),
        (True, True),
        (False, False),
        (True, False),
        (True, False),
        (True, True),
    ]
    with database.session() as session:
        row = session.get(Node, alive.node_id)
        assert row is not None
        assert (row.throughput, row.tokens_served, row.last_heartbeat_at) == (55.0, 120, now + 1)
        assert row.live_until == now + 1 + 30  # the last beat's window
        assert session.execute(select(func.count()).select_from(SpentNonce)).scalar_one() == 5
    # Committed: the same nonces in a later batch are replays.
    assert writer.beat_many([heartbeat_values(other.node_id, "b1" * 16, now + 2)]) == [
        (False, False)
    ]


def test_a_batch_that_fails_leaves_nothing_behind(database: Database) -> None:
    now = time.time()
    node = FakeNode()
    register_in_store(database, node, now)
    writer = HeartbeatWriter(database)
    with pytest.raises(Exception):  # noqa: B017 - each store's driver names the error its own way
        writer.beat_many(
            [
                heartbeat_values(node.node_id, "e1" * 16, now + 1),
                heartbeat_values(
                    node.node_id, "e2" * 16, now + 2, nonce_expires_at=None
                ),  # NOT NULL
            ]
        )
    with database.session() as session:
        row = session.get(Node, node.node_id)
        assert row is not None and row.last_heartbeat_at == now
        assert session.execute(select(func.count()).select_from(SpentNonce)).scalar_one() == 0
    assert writer.beat_many([heartbeat_values(node.node_id, "e1" * 16, now + 3)]) == [(True, True)]


def _view_read_apart(db: Database, node_id: str) -> tuple[str, str, str, str]:
    """The node's view read on its own, as the reply used to after the commit."""
    with db.session() as session:
        node = session.get(Node, node_id)
        assert node is not None
        recipe = session.execute(
            select(Recipe).where(
                Recipe.model_artifact_digest == node.model_artifact_digest,
                Recipe.runtime_recipe_digest == node.runtime_recipe_digest,
            )
        ).scalar_one_or_none()
        if recipe is None:
            return (node.reachability, node.reachability_reason, "unknown", "")
        return (node.reachability, node.reachability_reason, recipe.status, recipe.detail)


def test_a_batch_returns_each_refreshed_nodes_view_from_the_same_commit(
    database: Database,
) -> None:
    now = time.time()
    probed, recipeless, lapsed = FakeNode(), FakeNode(), FakeNode()
    register_in_store(database, probed, now)
    register_in_store(database, recipeless, now)
    register_in_store(database, lapsed, now - 100)
    with database.session() as session, session.begin():
        register_recipe(session, parse_identity(identity_block()), now=now)  # as registration does
        session.flush()
        row = session.get(Node, probed.node_id)
        assert row is not None
        row.reachability, row.reachability_reason = REACH_REACHABLE, "answered a probe"
        session.execute(
            update(Recipe)
            .where(Recipe.model_artifact_digest == row.model_artifact_digest)
            .values(status="certified", detail="two nodes agreed")
        )
        # A fingerprint the ledger has no entry for: the view says "unknown".
        gone = session.get(Node, recipeless.node_id)
        assert gone is not None
        gone.runtime_recipe_digest = "0" * 64
    writer = HeartbeatWriter(database)
    outcomes = writer.beat_many_viewed(
        [
            heartbeat_values(probed.node_id, "a1" * 16, now),
            heartbeat_values(probed.node_id, "a1" * 16, now),  # a replay: no view
            heartbeat_values("f" * 32, "c1" * 16, now),  # no such node: no view
            heartbeat_values(lapsed.node_id, "d1" * 16, now),  # expired: no view
            heartbeat_values(recipeless.node_id, "b1" * 16, now),
        ]
    )
    probed_view = _view_read_apart(database, probed.node_id)
    recipeless_view = _view_read_apart(database, recipeless.node_id)
    assert probed_view == (REACH_REACHABLE, "answered a probe", "certified", "two nodes agreed")
    assert (recipeless_view[0], recipeless_view[2:]) == (REACH_UNCHECKED, ("unknown", ""))
    assert outcomes == [
        (True, True, probed_view),
        (False, False, None),
        (True, False, None),
        (True, False, None),
        (True, True, recipeless_view),
    ]
    # beat_many is the same batch without the views.
    assert writer.beat_many([heartbeat_values(probed.node_id, "a2" * 16, now + 1)]) == [
        (True, True)
    ]
