"""Queries of the data-plane features: route candidates, dial schedule, certification.

Plain functions over a Session; callers own the transaction. Route candidates
select only the columns route formation reads (not the JSON identity and
capability documents), so forming a route over 10,000 live nodes stays one
cheap index range scan.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Dialect, Table, and_, bindparam, or_, select, update
from sqlalchemy.orm import Session

from tracker_service.domain.recipe_identity import STATUS_DARK
from tracker_service.domain.route_formation import Candidate
from tracker_service.store.db import PreparedStatement
from tracker_service.store.reverify import recipes_to_reverify
from tracker_service.store.routing_version import (
    bump_routing_version,
    bump_routing_version_of_node,
)
from tracker_service.store.tables import (
    NODE_ACTIVE,
    REACH_REACHABLE,
    REACH_UNCHECKED,
    REACH_UNREACHABLE,
    Node,
    Recipe,
)

Key = tuple[str, str]

# Prefix of a dark recipe's detail after a failed attempt; the status page and
# /api/v1/state show the detail, so the reason is visible without a new column.
CERTIFICATION_FAILED = "the last certification attempt failed"


def route_candidates(session: Session, key: Key, *, now: float) -> list[Candidate]:
    """Live, reachable, active (so not banned) nodes of exactly this fingerprint."""
    query = select(
        Node.node_id,
        Node.endpoint,
        Node.public_key,
        Node.shard_start,
        Node.shard_end,
        Node.throughput,
        Node.load,
        Node.open_sessions,
        Node.tls_pin,
    ).where(
        Node.model_artifact_digest == key[0],
        Node.runtime_recipe_digest == key[1],
        Node.state == NODE_ACTIVE,
        Node.live_until >= now,
        Node.reachability == REACH_REACHABLE,
    )
    # Columns are selected in Candidate's field order: one tuple per row, no per-field work.
    return [Candidate._make(row) for row in session.execute(query)]


_NODES = cast(Table, Node.__table__)
_CANDIDATE_COLUMNS = (
    "node_id",
    "endpoint",
    "public_key",
    "shard_start",
    "shard_end",
    "throughput",
    "load",
    "open_sessions",
    "tls_pin",
)
_TIMED_QUERIES: dict[str, PreparedStatement] = {}


def _timed_query(dialect: Dialect) -> PreparedStatement:
    prepared = _TIMED_QUERIES.get(dialect.name)
    if prepared is None:
        query = select(*(_NODES.c[name] for name in _CANDIDATE_COLUMNS), _NODES.c.live_until).where(
            _NODES.c.model_artifact_digest == bindparam("artifact"),
            _NODES.c.runtime_recipe_digest == bindparam("recipe"),
            _NODES.c.state == NODE_ACTIVE,
            _NODES.c.live_until >= bindparam("now"),
            _NODES.c.reachability == REACH_REACHABLE,
        )
        prepared = PreparedStatement(query.compile(dialect=dialect))
        _TIMED_QUERIES[dialect.name] = prepared
    return prepared


def route_candidates_until(
    session: Session, key: Key, *, now: float
) -> tuple[list[Candidate], float]:
    """:func:`route_candidates` and the earliest ``live_until`` among them (inf if none).

    For the planner's cache: the list stays exact, without another query, until
    that moment (heartbeats only move windows later). Run on the driver cursor,
    as the heartbeat path is, because this fills a cache at 10,000 candidates.
    """
    connection = session.connection()
    prepared = _timed_query(connection.dialect)
    cursor = connection.connection.cursor()
    try:
        values = {"artifact": key[0], "recipe": key[1], "now": now}
        cursor.execute(prepared.sql, prepared.params(values))
        rows = cursor.fetchall()
    finally:
        cursor.close()
    make = Candidate._make
    candidates = [make(row[:-1]) for row in rows]
    earliest = min((row[-1] for row in rows), default=math.inf)
    return candidates, earliest


@dataclass(frozen=True)
class DialTarget:
    node_id: str
    endpoint: str
    public_key: bytes
    registered_at: float
    reachability: str
    fingerprint: Key
    tls_pin: str = ""


def nodes_due_for_dial(
    session: Session, *, now: float, recheck_s: float, retry_s: float, limit: int
) -> list[DialTarget]:
    """Live nodes never dialled, or whose last verdict is older than its re-check period."""
    due = or_(
        Node.reachability == REACH_UNCHECKED,
        Node.reachability_checked_at.is_(None),
        and_(Node.reachability == REACH_REACHABLE, Node.reachability_checked_at < now - recheck_s),
        and_(Node.reachability == REACH_UNREACHABLE, Node.reachability_checked_at < now - retry_s),
    )
    query = (
        select(
            Node.node_id,
            Node.endpoint,
            Node.public_key,
            Node.registered_at,
            Node.reachability,
            Node.model_artifact_digest,
            Node.runtime_recipe_digest,
            Node.tls_pin,
        )
        .where(Node.state == NODE_ACTIVE, Node.live_until >= now, due)
        .order_by(Node.reachability_checked_at.is_not(None), Node.reachability_checked_at)
        .limit(limit)
    )
    return [
        DialTarget(
            node_id=row.node_id,
            endpoint=row.endpoint,
            public_key=bytes(row.public_key),
            registered_at=row.registered_at,
            reachability=row.reachability,
            fingerprint=(row.model_artifact_digest, row.runtime_recipe_digest),
            tls_pin=row.tls_pin or "",
        )
        for row in session.execute(query)
    ]


def record_dial(
    session: Session, target: DialTarget, *, status: str, reason: str, now: float
) -> bool:
    """Store a verdict, unless the node re-registered (new endpoint or key) meanwhile.

    A verdict that flips the node's reachability bumps its fingerprint's routing
    version; a re-check that confirms it (every node, every recheck period) does not.
    """
    same_registration = (
        Node.node_id == target.node_id,
        Node.endpoint == target.endpoint,
        Node.registered_at == target.registered_at,
    )
    flipped = session.execute(
        update(Node)
        .where(*same_registration, Node.reachability != status)
        .values(reachability=status, reachability_reason=reason, reachability_checked_at=now)
        .execution_options(synchronize_session=False)
    )
    if flipped.rowcount == 1:  # type: ignore[attr-defined]
        bump_routing_version(session, target.fingerprint)
        return True
    result = session.execute(
        update(Node)
        .where(*same_registration)
        .values(reachability_reason=reason, reachability_checked_at=now)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount == 1)  # type: ignore[attr-defined]


def request_redial(session: Session, node_id: str) -> None:
    """Make a node due for dialling at once (a hop failed on it); it stays listed as is."""
    session.execute(
        update(Node)
        .where(Node.node_id == node_id)
        .values(reachability_checked_at=None)
        .execution_options(synchronize_session=False)
    )


def mark_unreachable(session: Session, node_id: str, reason: str, *, now: float) -> None:
    result = session.execute(
        update(Node)
        .where(Node.node_id == node_id)
        .values(
            reachability=REACH_UNREACHABLE, reachability_reason=reason, reachability_checked_at=now
        )
        .execution_options(synchronize_session=False)
    )
    if result.rowcount == 1:  # type: ignore[attr-defined]
        bump_routing_version_of_node(session, node_id)


@dataclass(frozen=True)
class RecipeInfo:
    key: Key
    status: str
    layer_count: int
    axes: dict[str, Any]
    artifact_id: str
    recipe_id: str
    chat_template_sha256: str | None = None
    # Moves when the fingerprint's routable node set changed (store/routing_version.py).
    routing_version: int = 0


def _info(row: Recipe) -> RecipeInfo:
    return RecipeInfo(
        key=(row.model_artifact_digest, row.runtime_recipe_digest),
        status=row.status,
        layer_count=row.layer_count,
        axes=dict(row.axes or {}),
        artifact_id=row.artifact_id,
        recipe_id=row.recipe_id,
        chat_template_sha256=row.chat_template_sha256,
        routing_version=row.routing_version or 0,
    )


def pin_chat_template(session: Session, key: Key, digest: str) -> bool:
    """Record the chat template's digest once; a pin, once set, is never replaced."""
    result = session.execute(
        update(Recipe)
        .where(
            Recipe.model_artifact_digest == key[0],
            Recipe.runtime_recipe_digest == key[1],
            Recipe.chat_template_sha256.is_(None),
        )
        .values(chat_template_sha256=digest)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount == 1)  # type: ignore[attr-defined]


def recipe_info(session: Session, key: Key) -> RecipeInfo | None:
    row = session.execute(
        select(Recipe).where(
            Recipe.model_artifact_digest == key[0], Recipe.runtime_recipe_digest == key[1]
        )
    ).scalar_one_or_none()
    return None if row is None else _info(row)


def recipes_matching(
    session: Session, *, artifact_id: str, recipe_id: str | None = None
) -> list[RecipeInfo]:
    query = select(Recipe).where(Recipe.artifact_id == artifact_id)
    if recipe_id is not None:
        query = query.where(Recipe.recipe_id == recipe_id)
    return [_info(row) for row in session.execute(query.order_by(Recipe.id)).scalars()]


def dark_recipes(session: Session) -> list[RecipeInfo]:
    """Dark recipes the certifier may promote: a revoked one waits for the operator."""
    query = (
        select(Recipe)
        .where(Recipe.status == STATUS_DARK, Recipe.revoked_at.is_(None))
        .order_by(Recipe.id)
    )
    return [_info(row) for row in session.execute(query).scalars()]


def recipes_to_reverify_info(session: Session) -> list[RecipeInfo]:
    """Certified recipes a quarantine marked for verification again (store/reverify.py)."""
    return [_info(row) for row in recipes_to_reverify(session)]


def identity_blocks(session: Session, node_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The identity blocks nodes registered with, to re-parse for evidence."""
    ids = list(node_ids)
    query = select(Node.node_id, Node.identity).where(Node.node_id.in_(ids))
    return {row.node_id: dict(row.identity) for row in session.execute(query)}


def record_certification_failure(session: Session, key: Key, reason: str, *, now: float) -> bool:
    """Write why the last attempt failed into a dark recipe's failure field (still dark)."""
    stamp = time_text(now)
    result = session.execute(
        update(Recipe)
        .where(
            Recipe.model_artifact_digest == key[0],
            Recipe.runtime_recipe_digest == key[1],
            Recipe.status == STATUS_DARK,
        )
        .values(last_failure=f"{CERTIFICATION_FAILED} at {stamp}: {reason}")
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount == 1)  # type: ignore[attr-defined]


def time_text(now: float) -> str:
    return datetime.datetime.fromtimestamp(now, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
