"""Spent nonces: one cheap INSERT per signed request, purged once stale.

A nonce only needs remembering while its timestamp is inside the freshness
window; after that the timestamp check refuses the replay on its own.
"""

from __future__ import annotations

from typing import cast

from sqlalchemy import Connection, Table, delete
from sqlalchemy.dialects import postgresql, sqlite

from tracker_service.store.tables import SpentNonce

_NONCES = cast(Table, SpentNonce.__table__)


def spend_nonce(connection: Connection, node_id: str, nonce: str, *, expires_at: float) -> bool:
    """Record the nonce; False when this node already spent it (a replay)."""
    values = {"node_id": node_id, "nonce": nonce, "expires_at": expires_at}
    dialect = connection.dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = insert(_NONCES).values(**values).on_conflict_do_nothing().returning(_NONCES.c.nonce)
    # RETURNING, not rowcount: psycopg reports -1 for INSERT .. ON CONFLICT here.
    return connection.execute(statement).first() is not None


def purge_spent_nonces(connection: Connection, *, now: float) -> int:
    return int(connection.execute(delete(_NONCES).where(_NONCES.c.expires_at < now)).rowcount)
