"""Pruning what is dead: registrations that never became reachable, nodes long gone,
and dark recipes nothing refers to any more.

Registration is an open door (per address, rate-limited), so rows that nothing
ever removed let one address grow the node and recipe tables without bound. Kept
whatever their age: quarantined and banned nodes (re-registering must not lift
either), certified recipes, revoked ones, and any recipe with evidence or a node.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import and_, delete, exists, select
from sqlalchemy.engine import CursorResult
from sqlalchemy.orm import Session

from tracker_service.domain.recipe_identity import STATUS_DARK
from tracker_service.store.tables import (
    NODE_BANNED,
    NODE_QUARANTINED,
    REACH_REACHABLE,
    CertificationEvidence,
    Node,
    Recipe,
)

KEPT_NODE_STATES = (NODE_QUARANTINED, NODE_BANNED)


@dataclass(frozen=True)
class Pruned:
    registrations: int  # never reachable, and quiet past the short grace
    nodes: int  # quiet past the retention
    recipes: int  # dark, unreferenced, first seen before the retention

    def items(self) -> tuple[tuple[str, int], ...]:
        return (
            ("registrations", self.registrations),
            ("nodes", self.nodes),
            ("recipes", self.recipes),
        )


def _count(result: object) -> int:
    return int(result.rowcount) if isinstance(result, CursorResult) else 0


def prune_dead(
    session: Session, *, now: float, unreachable_after_s: float, dead_after_s: float
) -> Pruned:
    """Delete what is dead (see the module's note) in the caller's transaction."""
    prunable = Node.state.not_in(KEPT_NODE_STATES)
    registrations = _count(
        session.execute(
            delete(Node).where(
                prunable,
                Node.reachability != REACH_REACHABLE,
                Node.live_until < now - unreachable_after_s,
            )
        )
    )
    nodes = _count(
        session.execute(delete(Node).where(prunable, Node.live_until < now - dead_after_s))
    )
    has_node = exists(
        select(Node.node_id).where(
            and_(
                Node.model_artifact_digest == Recipe.model_artifact_digest,
                Node.runtime_recipe_digest == Recipe.runtime_recipe_digest,
            )
        )
    )
    has_evidence = exists(
        select(CertificationEvidence.id).where(CertificationEvidence.recipe_pk == Recipe.id)
    )
    recipes = _count(
        session.execute(
            delete(Recipe).where(
                Recipe.status == STATUS_DARK,
                Recipe.revoked_at.is_(None),
                Recipe.first_seen_at < now - dead_after_s,
                ~has_node,
                ~has_evidence,
            )
        )
    )
    return Pruned(registrations, nodes, recipes)
