"""Spent nonces: one cheap INSERT per signed request, purged once stale.

A nonce only needs remembering while its timestamp is inside the freshness
window; after that the timestamp check refuses the replay on its own.
"""

from __future__ import annotations

from sqlalchemy import delete
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from tracker_service.store.tables import SpentNonce


def spend_nonce(session: Session, node_id: str, nonce: str, *, expires_at: float) -> bool:
    """Record the nonce; False when this node already spent it (a replay)."""
    values = {"node_id": node_id, "nonce": nonce, "expires_at": expires_at}
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = (
        insert(SpentNonce).values(**values).on_conflict_do_nothing().returning(SpentNonce.nonce)
    )
    # RETURNING, not rowcount: psycopg reports -1 for INSERT .. ON CONFLICT here.
    return session.connection().execute(statement).first() is not None


def purge_spent_nonces(session: Session, *, now: float) -> int:
    result = session.execute(delete(SpentNonce).where(SpentNonce.expires_at < now))
    return int(result.rowcount)  # type: ignore[attr-defined]
