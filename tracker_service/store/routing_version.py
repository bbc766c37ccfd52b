"""A fingerprint's routing version: the signal that its cached candidate list is stale.

Route planners cache each fingerprint's live, reachable, active nodes in memory
(tracker_service/candidate_cache.py) and compare the recipe row's
``routing_version`` on every route request. Each change that can add a node to
that set or take one out (a registration replacing a routable node, a clean
stop, removal, ban, quarantine, a reachability verdict that flips, a ledger
change) bumps the number in the same transaction as the change, so every
worker process sharing the database sees it at commit. Heartbeats do not bump
it: they only extend a node's window, and the cache expires an entry no later
than its earliest cached ``live_until`` (liveness expiry needs no write).
"""

from __future__ import annotations

from sqlalchemy import exists, select, update
from sqlalchemy.orm import Session

from tracker_service.store.tables import Node, Recipe

Key = tuple[str, str]


def bump_routing_version(session: Session, key: Key) -> None:
    """The routable node set of `key` changed (or may have): planners re-read it."""
    session.execute(
        update(Recipe)
        .where(Recipe.model_artifact_digest == key[0], Recipe.runtime_recipe_digest == key[1])
        .values(routing_version=Recipe.routing_version + 1)
        .execution_options(synchronize_session=False)
    )


def bump_routing_version_of_node(session: Session, node_id: str) -> None:
    """As :func:`bump_routing_version`, for the fingerprint `node_id` is registered with."""
    of_node = exists().where(
        Node.node_id == node_id,
        Node.model_artifact_digest == Recipe.model_artifact_digest,
        Node.runtime_recipe_digest == Recipe.runtime_recipe_digest,
    )
    session.execute(
        update(Recipe)
        .where(of_node)
        .values(routing_version=Recipe.routing_version + 1)
        .execution_options(synchronize_session=False)
    )


def routing_version(session: Session, key: Key) -> int | None:
    """The current version of `key`, or None when no node registered the fingerprint."""
    value = session.execute(
        select(Recipe.routing_version).where(
            Recipe.model_artifact_digest == key[0], Recipe.runtime_recipe_digest == key[1]
        )
    ).scalar_one_or_none()
    return None if value is None else int(value)
