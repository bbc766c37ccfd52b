"""Reads the API answers with: what is live, what a request may mean, one node, one invite.

Each opens its own read session; the route shapes the answer. A view that must read
its rows while the session is open takes a ``shape`` callable and returns its result.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from tracker_service.domain.measured_speed import MeasuredSpeed
from tracker_service.store.allocation import ServingGroup, serving_groups
from tracker_service.store.db import Database
from tracker_service.store.gauges import live_node_count, recipes_by_status
from tracker_service.store.invites import find_invite, invite_state
from tracker_service.store.node_speeds import speeds_of
from tracker_service.store.nodes import get_node
from tracker_service.store.route_candidates import Key, recipes_matching
from tracker_service.store.tables import Node

T = TypeVar("T")

__all__ = ["Database", "Key", "Node", "ServingGroup"]


def live_groups(
    database: Database, *, artifact_id: str, recipe_id: str | None
) -> list[ServingGroup]:
    """Live nodes per fingerprint of one model (and one recipe), now."""
    with database.session() as session:
        return serving_groups(
            session, now=time.time(), artifact_id=artifact_id, recipe_id=recipe_id
        )


def recipe_keys(database: Database, *, artifact_id: str, recipe_id: str | None) -> list[Key]:
    """The fingerprints of a model's recipes, certified first: a serve request is
    answered by the first recipe that routes."""
    with database.session() as session:
        found = recipes_matching(session, artifact_id=artifact_id, recipe_id=recipe_id)
    return [info.key for info in sorted(found, key=lambda i: i.status != "certified")]


def node_view(
    database: Database, node_id: str, shape: Callable[[Node, float, MeasuredSpeed | None], T]
) -> T | None:
    """One registered node with its measured speed, shaped while its row is read."""
    with database.session() as session:
        node = get_node(session, node_id)
        if node is None:
            return None
        speed = speeds_of(session, [node_id]).get((node_id, node.model_artifact_digest))
        return shape(node, time.time(), speed)


def invite_state_of(database: Database, code: str) -> str | None:
    """An invite code's state (active, revoked, expired, used-up); None: no such code."""
    with database.session() as session:
        invite = find_invite(session, code) if len(code) <= 64 else None
        return None if invite is None else invite_state(invite, time.time())


def gauges(database: Database, *, now: float) -> tuple[int, list[tuple[str, int]]]:
    """Live nodes, and recipes per status: what every replica reports at a scrape."""
    with database.session() as session:
        return live_node_count(session, now=now), recipes_by_status(session)
