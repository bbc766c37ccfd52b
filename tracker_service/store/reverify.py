"""Certifications a quarantined node took part in are verified again.

A recipe is certified by a real forward through a route of nodes. When one of
those nodes is later caught lying (quarantined by a hop audit), the forward that
certified the recipe rests on its word, so the certification is no longer proof.
The rule (docs/wire.md#certification-and-quarantine): every certified recipe whose
live evidence names the node is marked for re-verification in the quarantine's
own transaction; the certifier then runs a fresh certifying forward by routes
without it (a quarantined node is never routed) and the recipe goes dark with
the reason if none passes. Until then it keeps serving through the routes that
remain, none of which can include the quarantined node.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from tracker_service.domain.recipe_identity import STATUS_CERTIFIED
from tracker_service.store.tables import CertificationEvidence, Recipe


def flag_recipes_certified_by(session: Session, node_id: str, reason: str) -> list[Recipe]:
    """Mark every certified recipe whose live evidence names ``node_id``; returns them."""
    query = (
        select(Recipe, CertificationEvidence.node_ids)
        .join(CertificationEvidence, CertificationEvidence.recipe_pk == Recipe.id)
        .where(Recipe.status == STATUS_CERTIFIED, CertificationEvidence.revoked_at.is_(None))
    )
    flagged: dict[int, Recipe] = {}
    for recipe, node_ids in session.execute(query).all():
        if isinstance(node_ids, list) and node_id in node_ids and recipe.id not in flagged:
            recipe.reverify_reason = (
                f"node {node_id} helped certify this recipe and was quarantined ({reason}); "
                "it is verified again by routes without that node"
            )
            flagged[recipe.id] = recipe
    session.flush()
    return list(flagged.values())


def recipes_to_reverify(session: Session) -> list[Recipe]:
    query = (
        select(Recipe)
        .where(Recipe.status == STATUS_CERTIFIED, Recipe.reverify_reason != "")
        .order_by(Recipe.id)
    )
    return list(session.execute(query).scalars())
