"""Queries allocation reads: the live ranges of one model, grouped by fingerprint.

Plain functions over a Session; callers own the transaction. Allocation counts
every active, live node that is not known to be unreachable: a node that just
registered (reachability still unchecked) already holds its layers, and a
second newcomer must not be sent to the same ones. A node's rate is what the
tracker measured of it, as route formation weighs it (domain/measured_speed.py):
a claimed speed moves no layers.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import NamedTuple

from sqlalchemy import select
from sqlalchemy.orm import Session

from tracker_service.domain.allocation import Slot
from tracker_service.domain.measured_speed import MeasuredSpeed, SpeedPolicy, estimated_throughputs
from tracker_service.store.node_speeds import measured_speeds
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
    measured: dict[str, dict[str, MeasuredSpeed]] = {}
    groups = []
    for key, entries in sorted(rows.items()):
        if key[0] not in measured:
            measured[key[0]] = measured_speeds(session, key[0])
        slots = _measured_slots([e[3] for e in entries], measured[key[0]])
        groups.append(
            ServingGroup(
                key=key,
                artifact_id=entries[0][0],
                recipe_id=entries[0][1],
                layer_count=entries[0][2],
                slots=tuple(sorted(slots, key=lambda s: s.node_id)),
            )
        )
    return groups


def _measured_slots(slots: list[Slot], measured: dict[str, MeasuredSpeed]) -> list[Slot]:
    """Each slot's rate as route formation estimates it (0 stays "unknown")."""
    # A Slot's claimed rate is its claim; the estimate reads it as `throughput`.
    shards = [_Shard(s.node_id, s.start, s.end, s.rate) for s in slots]
    rates = estimated_throughputs(shards, measured, min_steps=SpeedPolicy().min_steps, unknown=0.0)
    return [s._replace(rate=rate) for s, rate in zip(slots, rates, strict=True)]


class _Shard(NamedTuple):
    node_id: str
    start: int
    end: int
    throughput: float
