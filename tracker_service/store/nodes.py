"""Node registry: registration, heartbeats, expiry, and the routing query.

Plain functions over a Session; callers own the transaction (commit/rollback).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

from sqlalchemy import Connection, Dialect, Row, Table, bindparam, func, select, update
from sqlalchemy.orm import Session

from tracker_service.domain.recipe_identity import PresentedIdentity
from tracker_service.store.db import PreparedStatement
from tracker_service.store.node_caps import cap_host
from tracker_service.store.routing_version import (
    bump_routing_version,
    bump_routing_version_of_node,
)
from tracker_service.store.tables import (
    ARCH_TEXT_LEN,
    ID_TEXT_LEN,
    INT32_MAX,
    NODE_ACTIVE,
    NODE_BANNED,
    NODE_DEREGISTERED,
    NODE_QUARANTINED,
    NODE_REMOVED,
    REACH_REACHABLE,
    REACH_UNCHECKED,
    REACH_UNREACHABLE,
    VERSION_TEXT_LEN,
    Node,
)


@dataclass(frozen=True)
class Liveness:
    """How long a node stays routable without a heartbeat, and its session's length."""

    live_window_s: float
    session_ttl_s: float


@dataclass(frozen=True)
class Registration:
    node: Node
    # True when the node id was known with other bytes (a new admission, not a swap).
    rebound: bool
    previous_binding: str | None


def storage_problem(identity: PresentedIdentity) -> str | None:
    """Why `identity` cannot be stored as declared (a field wider than its column).

    PostgreSQL would refuse the row with an error; the tracker refuses the
    registration first, with the numbers, and never truncates an identity.
    """
    widths = {
        "artifact.artifact_id": (identity.artifact_id, ID_TEXT_LEN),
        "artifact.revision": (identity.revision, ID_TEXT_LEN),
        "artifact.architecture": (identity.architecture, ARCH_TEXT_LEN),
        "recipe.recipe_id": (identity.recipe_id, ID_TEXT_LEN),
        "recipe.recipe_version": (identity.recipe_version, VERSION_TEXT_LEN),
        "recipe.catalogue_version": (identity.catalogue_version, VERSION_TEXT_LEN),
    }
    for name, (value, limit) in widths.items():
        if "\x00" in value:
            return f"{name!r} contains a NUL character, which no text column can store"
        if len(value) > limit:
            return f"{name!r} has {len(value)} characters; this tracker stores at most {limit}"
    if identity.layer_count > INT32_MAX:
        return f"'artifact.layer_count' is {identity.layer_count}; at most {INT32_MAX} is stored"
    return None


def get_node(session: Session, node_id: str) -> Node | None:
    return session.get(Node, node_id)


def public_key_of(session: Session, node_id: str) -> bytes | None:
    return session.execute(
        select(Node.public_key).where(Node.node_id == node_id)
    ).scalar_one_or_none()


def public_keys_of(connection: Connection, node_ids: Sequence[str]) -> dict[str, bytes]:
    """node_id -> registered public key, for those of `node_ids` the store knows."""
    rows = connection.execute(
        select(Node.node_id, Node.public_key).where(Node.node_id.in_(node_ids))
    )
    return {node_id: bytes(key) for node_id, key in rows}


def register_node(
    session: Session,
    *,
    node_id: str,
    public_key: bytes,
    endpoint: str,
    identity: PresentedIdentity,
    capability: dict[str, Any],
    throughput: float,
    now: float,
    liveness: Liveness,
    relay_reason: str = "",
    relayed_from: str = "",
    tls_pin: str = "",
    resolved_address: str = "",
) -> Registration:
    """Admit (or re-admit) a node. Every registration starts a fresh session.

    A node id seen before with a different shard-binding digest is re-admitted
    as a new registration: new session, reachability unchecked again, never an
    in-place swap of the bytes it was routed on.
    """
    row = session.get(Node, node_id, with_for_update=True)
    binding = identity.shard_binding_digest
    previous = None if row is None else row.shard_binding_digest
    if row is not None and _routable(row, now):
        # It leaves its (maybe other) fingerprint's candidates until dialled again.
        bump_routing_version(session, (row.model_artifact_digest, row.runtime_recipe_digest))
    fields: dict[str, Any] = {
        "public_key": public_key,
        "endpoint": endpoint,
        "state": NODE_ACTIVE,
        "state_reason": "",
        "model_artifact_digest": identity.model_artifact_digest,
        "runtime_recipe_digest": identity.runtime_recipe_digest,
        "shard_binding_digest": binding,
        "artifact_id": identity.artifact_id,
        "recipe_id": identity.recipe_id,
        "recipe_version": identity.recipe_version,
        "layer_count": identity.layer_count,
        "shard_start": identity.shard_start,
        "shard_end": identity.shard_end,
        "identity": identity.identity_block(),
        "capability": capability,
        "throughput": throughput,
        "load": 0.0,
        "open_sessions": 0,
        "session_id": secrets.token_hex(16),
        "session_expires_at": now + liveness.session_ttl_s,
        "registered_at": now,
        "last_heartbeat_at": now,
        "live_until": now + liveness.live_window_s,
        "reachability": REACH_UNCHECKED,
        "reachability_reason": "not dialled yet",
        "reachability_checked_at": None,
        "relay_reason": relay_reason,
        "relayed_from": relayed_from,
        "cap_host": cap_host(endpoint, relayed_from, resolved_address),
        "tls_pin": tls_pin,
    }
    if row is None:
        row = Node(node_id=node_id, registrations=1, tokens_served=0, **fields)
        session.add(row)
    else:
        for name, value in fields.items():
            setattr(row, name, value)
        row.registrations += 1
    session.flush()
    return Registration(row, rebound=previous not in (None, binding), previous_binding=previous)


def _routable(row: Node, now: float) -> bool:
    return (
        row.state == NODE_ACTIVE and row.live_until >= now and row.reachability == REACH_REACHABLE
    )


_NODES = cast(Table, Node.__table__)


def record_heartbeat(
    connection: Connection,
    node_id: str,
    *,
    now: float,
    liveness: Liveness,
    load: float,
    open_sessions: int,
    tokens_served: int,
    throughput: float | None,
) -> float | None:
    """One indexed UPDATE (Core, no ORM); returns the new session expiry, or None.

    None means refused: unknown, not active, or already past its live window;
    the caller asks :func:`heartbeat_refusal` why.
    """
    values: dict[str, Any] = {
        "last_heartbeat_at": now,
        "live_until": now + liveness.live_window_s,
        "session_expires_at": now + liveness.session_ttl_s,
        "load": load,
        "open_sessions": open_sessions,
        "tokens_served": tokens_served,
    }
    if throughput is not None:
        values["throughput"] = throughput
    result = connection.execute(
        update(_NODES)
        .where(
            _NODES.c.node_id == node_id,
            _NODES.c.state == NODE_ACTIVE,
            _NODES.c.live_until >= now,
        )
        .values(**values)
    )
    return values["session_expires_at"] if result.rowcount == 1 else None


def heartbeat_refusal(connection: Connection, node_id: str, now: float) -> tuple[str, str]:
    """(state, sentence) for a heartbeat :func:`record_heartbeat` refused."""
    row = connection.execute(
        select(
            _NODES.c.state, _NODES.c.state_reason, _NODES.c.last_heartbeat_at, _NODES.c.live_until
        ).where(_NODES.c.node_id == node_id)
    ).first()
    if row is None:
        return "unknown", "this tracker has no registration for the node; register again"
    if row.state == NODE_BANNED:
        return NODE_BANNED, f"the node was banned by the operator: {row.state_reason}"
    if row.state == NODE_QUARANTINED:
        return NODE_QUARANTINED, f"the node is quarantined: {row.state_reason}"
    if row.state != NODE_ACTIVE:
        return row.state, f"the node's registration ended ({row.state}); register again"
    silent = now - row.last_heartbeat_at
    return (
        "expired",
        f"no heartbeat for {silent:.0f}s (limit {row.live_until - row.last_heartbeat_at:.0f}s); "
        "the node left routing; register again",
    )


def end_registration(session: Session, node_id: str, state: str, reason: str) -> bool:
    """Take a node out of routing (deregistered, removed or banned); True if it existed."""
    if state not in (NODE_DEREGISTERED, NODE_REMOVED, NODE_BANNED):
        raise ValueError(f"unknown end state {state!r}")
    result = session.execute(
        update(Node)
        .where(Node.node_id == node_id, Node.state != NODE_QUARANTINED)  # never lifted here
        .values(state=state, state_reason=reason, live_until=0.0)
        .execution_options(synchronize_session=False)
    )
    ended = bool(result.rowcount == 1)  # type: ignore[attr-defined]
    if ended:
        bump_routing_version_of_node(session, node_id)
    return ended


def set_reachability(
    session: Session, node_id: str, *, status: str, reason: str, now: float
) -> bool:
    """Record the dialer's verdict on a node's data plane."""
    flipped = session.execute(
        update(Node)
        .where(Node.node_id == node_id, Node.reachability != status)
        .values(reachability=status, reachability_reason=reason, reachability_checked_at=now)
        .execution_options(synchronize_session=False)
    )
    if flipped.rowcount == 1:  # type: ignore[attr-defined]
        bump_routing_version_of_node(session, node_id)
        return True
    result = session.execute(
        update(Node)
        .where(Node.node_id == node_id)
        .values(reachability_reason=reason, reachability_checked_at=now)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount == 1)  # type: ignore[attr-defined]


class LiveNode(NamedTuple):
    """What route formation reads of a node: columns of the covering route index."""

    node_id: str
    endpoint: str
    shard_start: int
    shard_end: int
    throughput: float
    load: float
    open_sessions: int
    reachability: str


_LIVE_QUERIES: dict[tuple[str, bool], PreparedStatement] = {}


def _live_query(dialect: Dialect, reachable_only: bool) -> PreparedStatement:
    prepared = _LIVE_QUERIES.get((dialect.name, reachable_only))
    if prepared is None:
        query = select(*(_NODES.c[name] for name in LiveNode._fields)).where(
            _NODES.c.model_artifact_digest == bindparam("artifact"),
            _NODES.c.runtime_recipe_digest == bindparam("recipe"),
            _NODES.c.state == NODE_ACTIVE,
            _NODES.c.live_until >= bindparam("now"),
        )
        if reachable_only:
            query = query.where(_NODES.c.reachability == REACH_REACHABLE)
        prepared = PreparedStatement(query.compile(dialect=dialect))
        _LIVE_QUERIES[(dialect.name, reachable_only)] = prepared
    return prepared


def live_nodes_for_fingerprint(
    session: Session,
    model_artifact_digest: str,
    runtime_recipe_digest: str,
    *,
    now: float,
    reachable_only: bool = False,
) -> list[LiveNode]:
    """Live nodes of exactly one fingerprint: the candidates a route is formed from.

    One range scan of the covering ``ix_nodes_route`` index (SQLite reads no
    table row), run on the driver cursor of the session's connection, so
    10,000 candidates cost a few tens of milliseconds, not hundreds.
    """
    connection = session.connection()
    prepared = _live_query(connection.dialect, reachable_only)
    cursor = connection.connection.cursor()
    try:
        values = {"artifact": model_artifact_digest, "recipe": runtime_recipe_digest, "now": now}
        cursor.execute(prepared.sql, prepared.params(values))
        return list(map(LiveNode._make, cursor.fetchall()))
    finally:
        cursor.close()


def live_nodes(session: Session, *, now: float) -> Sequence[Node]:
    query = select(Node).where(Node.state == NODE_ACTIVE, Node.live_until >= now)
    return session.execute(query.order_by(Node.artifact_id, Node.shard_start)).scalars().all()


# What the status views show of a node: not the identity and capability documents,
# which are most of a row's bytes and would dominate a page of 1,000.
_PUBLIC_COLUMNS = (
    Node.node_id,
    Node.endpoint,
    Node.state,
    Node.live_until,
    Node.artifact_id,
    Node.recipe_id,
    Node.recipe_version,
    Node.model_artifact_digest,
    Node.runtime_recipe_digest,
    Node.shard_start,
    Node.shard_end,
    Node.throughput,
    Node.load,
    Node.open_sessions,
    Node.tokens_served,
    Node.last_heartbeat_at,
    Node.reachability,
    Node.reachability_reason,
    Node.state_reason,
    Node.audits_passed,
    Node.quarantine_evidence,
    Node.relay_reason,
    Node.tls_pin,
)


def recent_nodes(session: Session, *, limit: int) -> Sequence[Row[Any]]:
    """Nodes most recently heard from, live or not (for the status views)."""
    query = select(*_PUBLIC_COLUMNS).order_by(Node.last_heartbeat_at.desc()).limit(limit)
    return session.execute(query).all()


def nodes_after(session: Session, *, after: str | None, limit: int) -> Sequence[Row[Any]]:
    """Up to `limit` nodes by node id, those after `after`: a keyset page.

    Node ids never change, so walking pages sees every node present throughout
    exactly once, however heartbeats reorder the recent list meanwhile.
    """
    query = select(*_PUBLIC_COLUMNS).order_by(Node.node_id).limit(limit)
    if after is not None:
        query = query.where(Node.node_id > after)
    return session.execute(query).all()


def count_nodes(session: Session) -> int:
    """Node rows of any state: what pages of :func:`nodes_after` walk."""
    return int(session.execute(select(func.count()).select_from(Node)).scalar_one())


def live_shapes(
    session: Session, key: tuple[str, str], *, now: float
) -> list[tuple[int, int, int]]:
    """(shard start, end, live nodes) of one fingerprint, grouped in the database.

    A model's health needs only the ranges and a count; grouping on the covering
    route index returns a few rows instead of 10,000. A node the dialler found
    unreachable is left out, as routing leaves it out: killed, it still looks live
    until its heartbeats lapse, but it serves nobody.
    """
    query = (
        select(Node.shard_start, Node.shard_end, func.count())
        .where(
            Node.model_artifact_digest == key[0],
            Node.runtime_recipe_digest == key[1],
            Node.state == NODE_ACTIVE,
            Node.live_until >= now,
            Node.reachability != REACH_UNREACHABLE,
        )
        .group_by(Node.shard_start, Node.shard_end)
    )
    return [(int(start), int(end), int(count)) for start, end, count in session.execute(query)]


def count_live(session: Session, *, now: float) -> int:
    query = select(func.count()).where(Node.state == NODE_ACTIVE, Node.live_until >= now)
    return int(session.execute(query).scalar_one())
