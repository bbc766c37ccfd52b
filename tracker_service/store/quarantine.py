"""Quarantine and probation in the database: what a hop audit decided about a node.

A quarantined node leaves routing at once (routes draw only active nodes), its
heartbeats are refused with reason ``quarantined``, and registering again under
the same identity does not lift it: the identity is what lied. The evidence is
kept on the row and shown by ``/api/v1/state`` and the status page. Probation
is the count of audits an identity has passed; a new identity starts at zero.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from tracker_service.store.reverify import flag_recipes_certified_by
from tracker_service.store.routing_version import bump_routing_version_of_node
from tracker_service.store.tables import NODE_QUARANTINED, Node

log = logging.getLogger(__name__)


def quarantine_node(
    session: Session, node_id: str, *, reason: str, evidence: dict[str, Any]
) -> bool:
    """Take a node out of routing for good; True when it was not quarantined before."""
    result = session.execute(
        update(Node)
        .where(Node.node_id == node_id, Node.state != NODE_QUARANTINED)
        .values(
            state=NODE_QUARANTINED,
            state_reason=reason,
            quarantine_evidence=evidence,
            live_until=0.0,
        )
        .execution_options(synchronize_session=False)
    )
    quarantined = bool(result.rowcount == 1)  # type: ignore[attr-defined]
    if quarantined:
        bump_routing_version_of_node(session, node_id)
        # What it helped certify is proof no longer: verified again without it.
        for recipe in flag_recipes_certified_by(session, node_id, reason):
            log.warning(
                "recipe %s: node %s, which helped certify it, is quarantined; verifying again",
                recipe.recipe_id,
                node_id,
            )
    return quarantined


def record_audit_passed(session: Session, node_ids: list[str]) -> None:
    session.execute(
        update(Node)
        .where(Node.node_id.in_(node_ids))
        .values(audits_passed=Node.audits_passed + 1)
        .execution_options(synchronize_session=False)
    )


def audits_passed(session: Session, node_id: str) -> int:
    value = session.execute(
        select(Node.audits_passed).where(Node.node_id == node_id)
    ).scalar_one_or_none()
    return int(value or 0)


def past_probation(session: Session, node_ids: list[str], probation_audits: int) -> set[str]:
    """The nodes among ``node_ids`` that have passed at least ``probation_audits`` audits."""
    rows = session.execute(
        select(Node.node_id).where(
            Node.node_id.in_(node_ids), Node.audits_passed >= probation_audits
        )
    )
    return {str(node_id) for node_id in rows.scalars()}


def is_quarantined(session: Session, node_id: str) -> bool:
    state = session.execute(select(Node.state).where(Node.node_id == node_id)).scalar_one_or_none()
    return state == NODE_QUARANTINED
