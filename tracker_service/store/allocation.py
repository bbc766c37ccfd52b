"""Queries allocation reads: the live ranges of one model, grouped by fingerprint.

Plain functions over a Session; callers own the transaction. Allocation counts
every active, live node that is not known to be unreachable: a node that just
registered (reachability still unchecked) already holds its layers, and a
second newcomer must not be sent to the same ones.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from tracker_service.domain.allocation import Slot
from tracker_service.store.tables import NODE_ACTIVE, REACH_UNREACHABLE, Node

Key = tuple[str, str]


@dataclass(frozen=True)
class ServingGroup:
    """The live nodes of one fingerprint (they can form routes together)."""

    key: Key
    artifact_id: str
    recipe_id: str
    layer_count: int
    slots: tuple[Slot, ...]


def serving_groups(
    session: Session, *, now: float, artifact_id: str | None = None, recipe_id: str | None = None
) -> list[ServingGroup]:
    """Live nodes per fingerprint, optionally of one model (and one recipe)."""
    query = select(
        Node.model_artifact_digest,
        Node.runtime_recipe_digest,
        Node.artifact_id,
        Node.recipe_id,
        Node.layer_count,
        Node.node_id,
        Node.shard_start,
        Node.shard_end,
        Node.throughput,
        Node.open_sessions,
    ).where(
        Node.state == NODE_ACTIVE,
        Node.live_until >= now,
        Node.reachability != REACH_UNREACHABLE,
    )
    if artifact_id is not None:
        query = query.where(Node.artifact_id == artifact_id)
    if recipe_id is not None:
        query = query.where(Node.recipe_id == recipe_id)
    rows: dict[Key, list[tuple[str, str, int, Slot]]] = defaultdict(list)
    for row in session.execute(query):
        slot = Slot(
            row.node_id, row.shard_start, row.shard_end, float(row.throughput), row.open_sessions
        )
        key = (row.model_artifact_digest, row.runtime_recipe_digest)
        rows[key].append((row.artifact_id, row.recipe_id, row.layer_count, slot))
    return [
        ServingGroup(
            key=key,
            artifact_id=entries[0][0],
            recipe_id=entries[0][1],
            layer_count=entries[0][2],
            slots=tuple(sorted((e[3] for e in entries), key=lambda s: s.node_id)),
        )
        for key, entries in sorted(rows.items())
    ]
