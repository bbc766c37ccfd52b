"""A fingerprint's routing version: the signal that its cached candidate list is stale.

Route planners cache each fingerprint's live, reachable, active nodes in memory
(tracker_service/services/candidate_cache.py) and compare the recipe row's
``routing_version`` on every route request. Each change that can add a node to
that set or take one out (a registration replacing a routable node, a clean
stop, removal, ban, quarantine, a reachability verdict that flips, a ledger
change) bumps the number in the same transaction as the change, so every
worker process sharing the database sees it at commit. Heartbeats do not bump
it: they only extend a node's window, and the cache expires an entry no later
than its earliest cached ``live_until`` (liveness expiry needs no write).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event, select, update
from sqlalchemy.orm import Session

from tracker_service.store.tables import Node, Recipe

Key = tuple[str, str]

_PENDING = "meshnet_routing_bumps"


def bump_routing_version(session: Session, key: Key) -> None:
    """The routable node set of `key` changed (or may have): planners re-read it.

    Written when the transaction commits, after everything else it did: a
    transaction then locks its node rows before any recipe row, in every writer,
    so a registration and a batch of dial verdicts cannot deadlock on PostgreSQL.
    """
    pending: set[Key] = session.info.setdefault(_PENDING, set())
    pending.add(key)


def bump_routing_version_of_node(session: Session, node_id: str) -> None:
    """As :func:`bump_routing_version`, for the fingerprint `node_id` is registered with."""
    row = session.execute(
        select(Node.model_artifact_digest, Node.runtime_recipe_digest).where(
            Node.node_id == node_id
        )
    ).first()
    if row is not None:
        bump_routing_version(session, (row[0], row[1]))


@event.listens_for(Session, "before_commit")
def _write_bumps(session: Session) -> None:
    for key in sorted(session.info.pop(_PENDING, ())):  # sorted: one lock order for all
        session.execute(
            update(Recipe)
            .where(Recipe.model_artifact_digest == key[0], Recipe.runtime_recipe_digest == key[1])
            .values(routing_version=Recipe.routing_version + 1)
            .execution_options(synchronize_session=False)
        )


@event.listens_for(Session, "after_rollback")
def _drop_bumps(session: Session, *_: Any) -> None:
    session.info.pop(_PENDING, None)


def routing_version(session: Session, key: Key) -> int | None:
    """The current version of `key`, or None when no node registered the fingerprint."""
    value = session.execute(
        select(Recipe.routing_version).where(
            Recipe.model_artifact_digest == key[0], Recipe.runtime_recipe_digest == key[1]
        )
    ).scalar_one_or_none()
    return None if value is None else int(value)
