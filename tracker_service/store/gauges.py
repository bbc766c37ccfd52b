"""The counts the metrics endpoint reads at each scrape (api/metrics.py)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tracker_service.store.tables import NODE_ACTIVE, Node, Recipe


def live_node_count(session: Session, *, now: float) -> int:
    """Nodes inside their live window."""
    return int(
        session.execute(
            select(func.count()).where(Node.state == NODE_ACTIVE, Node.live_until >= now)
        ).scalar_one()
    )


def recipes_by_status(session: Session) -> list[tuple[str, int]]:
    """How many ledger recipes each status has."""
    rows = session.execute(select(Recipe.status, func.count()).group_by(Recipe.status)).all()
    return [(str(status), int(count)) for status, count in rows]
