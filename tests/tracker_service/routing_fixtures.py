"""Node rows written straight into a tracker store, for route-formation tests.

Registering 10,000 nodes over HTTP would test registration, not routing; these
rows carry exactly the columns the registry writes.
"""

from __future__ import annotations

import functools
import hashlib
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sqlalchemy import insert

from tests.tracker_service.helpers import identity_block
from tracker_service.domain.recipe_identity import parse_identity
from tracker_service.store.db import Database
from tracker_service.store.ledger import register_recipe
from tracker_service.store.node_speeds import TimedSteps, record_steps
from tracker_service.store.tables import NODE_ACTIVE, REACH_REACHABLE, Node

LAYERS = 30


def open_database(folder: Path) -> Database:
    database = Database(f"sqlite:///{folder / 'tracker.db'}")
    database.migrate()
    return database


def fingerprint_of(**recipe: Any) -> tuple[str, str]:
    return parse_identity(identity_block(**recipe)).key


def register_recipe_of(database: Database, **recipe: Any) -> tuple[str, str]:
    identity = parse_identity(identity_block(**recipe))
    with database.sessions.begin() as session:
        register_recipe(session, identity, now=time.time())
    return identity.key


@functools.lru_cache(maxsize=256)
def _identity(start: int, end: int, recipe: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    """The identity columns of a row (digests derived once per shape, not per row)."""
    identity = parse_identity(identity_block(start, end, **dict(recipe)))
    return {
        "model_artifact_digest": identity.model_artifact_digest,
        "runtime_recipe_digest": identity.runtime_recipe_digest,
        "shard_binding_digest": identity.shard_binding_digest,
        "artifact_id": identity.artifact_id,
        "recipe_id": identity.recipe_id,
        "recipe_version": identity.recipe_version,
        "layer_count": identity.layer_count,
        "identity": identity.identity_block(),
    }


def node_row(
    start: int,
    end: int,
    *,
    recipe: dict[str, Any] | None = None,
    throughput: float = 50.0,
    reachability: str = REACH_REACHABLE,
    state: str = NODE_ACTIVE,
    live_for_s: float = 60.0,
    node_id: str | None = None,
) -> Node:
    identity = _identity(start, end, tuple(sorted((recipe or {}).items())))
    now = time.time()
    public_key = os.urandom(32)
    return Node(
        node_id=node_id or hashlib.sha256(public_key).hexdigest()[:32],
        public_key=public_key,
        endpoint="ws://127.0.0.1:9",
        state=state,
        state_reason="",
        **identity,
        shard_start=start,
        shard_end=end,
        capability={},
        throughput=throughput,
        load=0.0,
        open_sessions=0,
        tokens_served=0,
        session_id=os.urandom(16).hex(),
        session_expires_at=now + 900,
        registered_at=now,
        registrations=1,
        last_heartbeat_at=now,
        live_until=now + live_for_s,
        reachability=reachability,
        reachability_reason="test row",
        reachability_checked_at=now,
    )


def add_nodes(database: Database, rows: Iterable[Node]) -> list[str]:
    """One bulk INSERT (ORM unit-of-work for 10,000 rows would dominate the test)."""
    values = [{c.key: getattr(row, c.key) for c in Node.__table__.columns} for row in rows]
    with database.sessions.begin() as session:
        session.execute(insert(Node), values)
    return [v["node_id"] for v in values]


def add_measured(
    database: Database, artifact: str, speeds: dict[str, float], *, layers: int, steps: int = 16
) -> None:
    """Store what the tracker measured of nodes: node_id -> tokens/s through `layers`
    layers, as that many timed decode steps (store/node_speeds.py)."""
    batches = [
        TimedSteps(node_id, artifact, 1000.0 / (rate * layers), steps)
        for node_id, rate in speeds.items()
    ]
    with database.sessions.begin() as session:
        record_steps(session, batches, alpha=1.0, now=time.time())
