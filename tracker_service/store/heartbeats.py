"""The heartbeat hot path: spend the nonce and refresh the node in one commit.

At 1,000 heartbeats/s SQLAlchemy's per-statement execution machinery costs
several times the database work itself. So the two statements are built and
compiled once by SQLAlchemy, for the engine's dialect, and then executed on
the pooled driver connection directly. Same SQL, same tables, same indexes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Table, bindparam, exists, func, select, update
from sqlalchemy.dialects import postgresql, sqlite

from tracker_service.store.db import Database, PreparedStatement
from tracker_service.store.tables import NODE_ACTIVE, Node, SpentNonce

_NODES = cast(Table, Node.__table__)
_NONCES = cast(Table, SpentNonce.__table__)


class HeartbeatWriter:
    def __init__(self, database: Database) -> None:
        self._engine = database.engine
        dialect = self._engine.dialect
        insert = postgresql.insert if dialect.name == "postgresql" else sqlite.insert
        spend = (
            insert(_NONCES)
            .values(
                node_id=bindparam("node_id"),
                nonce=bindparam("nonce"),
                expires_at=bindparam("nonce_expires_at"),
            )
            .on_conflict_do_nothing()
            .returning(_NONCES.c.nonce)
        )
        refresh = (
            update(_NODES)
            .where(
                _NODES.c.node_id == bindparam("node_id"),
                _NODES.c.state == NODE_ACTIVE,
                _NODES.c.live_until >= bindparam("now"),
            )
            .values(
                last_heartbeat_at=bindparam("now"),
                live_until=bindparam("live_until"),
                session_expires_at=bindparam("session_expires_at"),
                load=bindparam("load"),
                open_sessions=bindparam("open_sessions"),
                tokens_served=bindparam("tokens_served"),
                throughput=func.coalesce(bindparam("throughput"), _NODES.c.throughput),
            )
        )
        self._spend = PreparedStatement(spend.compile(dialect=dialect))
        self._refresh = PreparedStatement(refresh.compile(dialect=dialect))
        self._pipelined: PreparedStatement | None = None
        if dialect.name == "postgresql":
            # Both statements in one, the refresh gated on the spend, so a batch can be
            # pipelined: one network round trip for all its heartbeats instead of two
            # per heartbeat (each a wait for a PostgreSQL backend to be scheduled).
            spent = spend.cte("spent")
            refreshed = (
                refresh.where(exists(select(spent.c.nonce)))
                .returning(_NODES.c.node_id)
                .cte("refreshed")
            )
            both = select(
                select(func.count()).select_from(spent).scalar_subquery(),
                select(func.count()).select_from(refreshed).scalar_subquery(),
            )
            self._pipelined = PreparedStatement(both.compile(dialect=dialect))

    def beat(self, values: dict[str, Any]) -> tuple[bool, bool]:
        """(nonce was fresh, node was refreshed), committed together.

        `values`: node_id, nonce, nonce_expires_at, now, live_until,
        session_expires_at, load, open_sessions, tokens_served, throughput (or None).
        A replayed nonce refreshes nothing.
        """
        [outcome] = self.beat_many([values])
        return outcome

    def beat_many(self, batch: Sequence[dict[str, Any]]) -> list[tuple[bool, bool]]:
        """:meth:`beat` for each of `batch`, in order, all in one transaction.

        A nonce repeated inside the batch is a replay like any other: the
        transaction sees its own earlier insert. Any error rolls back the whole batch.
        """
        if self._pipelined is not None:
            return self._beat_pipelined(batch, self._pipelined)
        connection = self._engine.raw_connection()
        try:
            cursor = connection.cursor()
            outcomes: list[tuple[bool, bool]] = []
            for values in batch:
                cursor.execute(self._spend.sql, self._spend.params(values))
                if cursor.fetchone() is None:
                    outcomes.append((False, False))
                    continue
                cursor.execute(self._refresh.sql, self._refresh.params(values))
                outcomes.append((True, cursor.rowcount == 1))
            connection.commit()
            return outcomes
        except BaseException:
            connection.rollback()
            raise
        finally:
            connection.close()

    def _beat_pipelined(
        self, batch: Sequence[dict[str, Any]], statement: PreparedStatement
    ) -> list[tuple[bool, bool]]:
        """PostgreSQL: the batch in psycopg's pipeline mode, one statement per heartbeat.

        Statements run in order inside one transaction, so a nonce repeated in the
        batch conflicts with its own earlier insert, exactly as on SQLite.
        """
        connection = self._engine.raw_connection()
        try:
            driver = connection.driver_connection
            assert driver is not None
            cursors = []
            with driver.pipeline():
                for values in batch:
                    cursor = driver.cursor()
                    cursor.execute(statement.sql, statement.params(values))
                    cursors.append(cursor)
            outcomes = []
            for cursor in cursors:
                spent, refreshed = cursor.fetchone()
                outcomes.append((spent == 1, refreshed == 1))
            connection.commit()
            return outcomes
        except BaseException:
            connection.rollback()
            raise
        finally:
            connection.close()
