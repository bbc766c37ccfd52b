"""What the state answers read (``/api/v1/state``, the status page, ``/api/v1/network``).

Each function reads in the caller's session, so one answer is read from one
snapshot; api/status.py shapes the rows into the public schemas.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from sqlalchemy import Row
from sqlalchemy.orm import Session

from tracker_service.domain.measured_speed import MeasuredSpeed
from tracker_service.store.db import Database
from tracker_service.store.job_tables import Job
from tracker_service.store.jobs import list_jobs, task_counts
from tracker_service.store.ledger import list_recipes
from tracker_service.store.model_sources import (
    SOURCE_UNAPPROVED,
    allow_first_sources,
    served_statuses,
    status_of,
)
from tracker_service.store.node_speeds import speeds_of
from tracker_service.store.nodes import (
    count_live,
    count_nodes,
    live_shapes,
    nodes_after,
    recent_nodes,
)
from tracker_service.store.route_candidates import route_candidates
from tracker_service.store.tables import NODE_ACTIVE, NODE_ID_LEN, Node, Recipe

__all__ = [
    "NODE_ACTIVE",
    "NODE_ID_LEN",
    "SOURCE_UNAPPROVED",
    "Node",
    "Recipe",
    "status_of",
]

Shapes = list[tuple[int, int, int]]  # (start, end, live nodes serving exactly that range)
Fingerprint = tuple[str, str]


def trust_first_sources(database: Database, now: float) -> None:
    """Blocking: on a trust-first network, allow each undecided name's first source."""
    with database.sessions.begin() as session:
        allow_first_sources(session, now)


def source_statuses(session: Session, allowed_setting: str) -> dict[Fingerprint, str]:
    """The operator's word on each recipe's weights (store/model_sources.py)."""
    return served_statuses(session, allowed_setting)


def recipes_with_shapes(session: Session, *, now: float) -> list[tuple[Recipe, Shapes]]:
    """Every ledger recipe with its live shapes: one grouped covering-index scan per
    recipe, never loading node rows."""
    return [
        (row, live_shapes(session, (row.model_artifact_digest, row.runtime_recipe_digest), now=now))
        for row in list_recipes(session)
    ]


def node_page(
    session: Session, *, limit: int | None, after: str | None, most: int
) -> tuple[Sequence[Row[Any]], str | None]:
    """The nodes to list and the node id the next page starts after (None: no more).

    ``limit`` None: the ``most`` most recently heard from; else a keyset page by id."""
    if limit is None:
        return recent_nodes(session, limit=most), None
    # One more than asked: whether another page exists, without a count.
    shown = nodes_after(session, after=after, limit=limit + 1)
    if len(shown) > limit:
        shown = shown[:limit]
        return shown, shown[-1].node_id
    return shown, None


def node_speeds(session: Session, node_ids: list[str]) -> dict[tuple[str, str], MeasuredSpeed]:
    """What the tracker measured of each node, per (node id, model digest)."""
    return speeds_of(session, node_ids)


def node_counts(session: Session, *, now: float) -> tuple[int, int]:
    """(live nodes, registered nodes)."""
    return count_live(session, now=now), count_nodes(session)


def recent_jobs(session: Session, limit: int) -> list[tuple[Job, dict[str, int]]]:
    """The newest batch jobs with their tasks counted per state."""
    jobs = list_jobs(session, limit=limit)
    counts = task_counts(session, [j.job_id for j in jobs])
    return [(job, counts[job.job_id]) for job in jobs]


def live_ranges(
    session: Session, key: Fingerprint, *, now: float, without: AbstractSet[str]
) -> list[tuple[int, int]]:
    """The layer ranges live candidates of `key` serve, leaving out the nodes `without`."""
    return [
        (c.start, c.end)
        for c in route_candidates(session, key, now=now)
        if c.node_id not in without
    ]
