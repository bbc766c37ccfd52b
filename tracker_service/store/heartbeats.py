"""The heartbeat hot path: spend the nonce and refresh the node in one commit.

At 1,000 heartbeats/s SQLAlchemy's per-statement execution machinery costs
several times the database work itself. So the statements are built and
compiled once by SQLAlchemy, for the engine's dialect, and then executed on
the pooled driver connection directly. Same SQL, same tables, same indexes.

A refreshed node's reply also says how the tracker sees it (its reachability,
its recipe's status): :meth:`HeartbeatWriter.beat_many_viewed` reads that in
the same batch, so on PostgreSQL a batch of heartbeats is one round trip in
all, with no separate read (and worker-thread hop) per heartbeat after it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast

from sqlalchemy import Table, and_, bindparam, exists, func, literal, select, true, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.pool import PoolProxiedConnection

from tracker_service.store.db import Database, PreparedStatement
from tracker_service.store.tables import NODE_ACTIVE, REACH_UNCHECKED, Node, Recipe, SpentNonce

_NODES = cast(Table, Node.__table__)
_NONCES = cast(Table, SpentNonce.__table__)
_RECIPES = cast(Table, Recipe.__table__)

NodeView = tuple[str, str, str, str]  # reachability, its reason, recipe status, recipe detail
# (nonce was fresh, node was refreshed, the node's view when refreshed else None)
Viewed = tuple[bool, bool, NodeView | None]


def _node_view(row: Sequence[Any]) -> NodeView:
    """A view row (reachability, reason, recipe status, detail); NULLs read as unknown."""
    reach, reach_reason, status, detail = row
    return (
        str(reach or REACH_UNCHECKED),
        str(reach_reason or ""),
        str(status or "unknown"),
        str(detail or ""),
    )


def _recipe_of(nodes: Any) -> Any:
    """The join to the node's recipe, by the ledger's unique (artifact, recipe) digest pair."""
    return and_(
        _RECIPES.c.model_artifact_digest == nodes.c.model_artifact_digest,
        _RECIPES.c.runtime_recipe_digest == nodes.c.runtime_recipe_digest,
    )


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
        # SQLite: the view is read inside the batch's transaction, by primary key.
        view = (
            select(
                _NODES.c.reachability,
                _NODES.c.reachability_reason,
                _RECIPES.c.status,
                _RECIPES.c.detail,
            )
            .select_from(_NODES.outerjoin(_RECIPES, _recipe_of(_NODES)))
            .where(_NODES.c.node_id == bindparam("node_id"))
        )
        self._spend = PreparedStatement(spend.compile(dialect=dialect))
        self._refresh = PreparedStatement(refresh.compile(dialect=dialect))
        self._view = PreparedStatement(view.compile(dialect=dialect))
        self._pipelined: PreparedStatement | None = None
        if dialect.name == "postgresql":
            # All in one statement, the refresh gated on the spend and the view read
            # from the refreshed row (RETURNING), so a batch can be pipelined: one
            # network round trip for all its heartbeats instead of several per
            # heartbeat (each a wait for a PostgreSQL backend to be scheduled).
            spent = spend.cte("spent")
            refreshed = (
                refresh.where(exists(select(spent.c.nonce)))
                .returning(
                    _NODES.c.node_id,
                    _NODES.c.reachability,
                    _NODES.c.reachability_reason,
                    _NODES.c.model_artifact_digest,
                    _NODES.c.runtime_recipe_digest,
                )
                .cte("refreshed")
            )
            seen = (
                select(
                    refreshed.c.reachability,
                    refreshed.c.reachability_reason,
                    _RECIPES.c.status,
                    _RECIPES.c.detail,
                )
                .select_from(refreshed.outerjoin(_RECIPES, _recipe_of(refreshed)))
                .subquery("seen")
            )
            # One row always: the counts, and the view's columns (NULL when not refreshed).
            one = select(literal(1).label("one")).subquery("one")
            both = select(
                select(func.count()).select_from(spent).scalar_subquery(),
                select(func.count()).select_from(refreshed).scalar_subquery(),
                seen.c.reachability,
                seen.c.reachability_reason,
                seen.c.status,
                seen.c.detail,
            ).select_from(one.outerjoin(seen, true()))
            self._pipelined = PreparedStatement(both.compile(dialect=dialect))

    @contextmanager
    def _driver_transaction(self) -> Iterator[PoolProxiedConnection]:
        """A pooled driver connection: committed when the block ends, rolled back on any
        error, returned to the pool either way."""
        connection = self._engine.raw_connection()
        try:
            yield connection
            connection.commit()
        except BaseException:
            connection.rollback()
            raise
        finally:
            connection.close()

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
        return [(fresh, refreshed) for fresh, refreshed, _ in self.beat_many_viewed(batch)]

    def beat_many_viewed(self, batch: Sequence[dict[str, Any]]) -> list[Viewed]:
        """:meth:`beat_many`, each refreshed node's view read in the same transaction."""
        if self._pipelined is not None:
            return self._beat_pipelined(batch, self._pipelined)
        with self._driver_transaction() as connection:
            cursor = connection.cursor()
            outcomes: list[Viewed] = []
            for values in batch:
                cursor.execute(self._spend.sql, self._spend.params(values))
                if cursor.fetchone() is None:
                    outcomes.append((False, False, None))
                    continue
                cursor.execute(self._refresh.sql, self._refresh.params(values))
                if cursor.rowcount != 1:
                    outcomes.append((True, False, None))
                    continue
                cursor.execute(self._view.sql, self._view.params(values))
                row = cursor.fetchone()  # the row just refreshed, in this transaction
                assert row is not None
                outcomes.append((True, True, _node_view(row)))
            return outcomes

    def _beat_pipelined(
        self, batch: Sequence[dict[str, Any]], statement: PreparedStatement
    ) -> list[Viewed]:
        """PostgreSQL: the batch in psycopg's pipeline mode, one statement per heartbeat.

        Statements run in order inside one transaction, so a nonce repeated in the
        batch conflicts with its own earlier insert, exactly as on SQLite.
        """
        with self._driver_transaction() as connection:
            driver = connection.driver_connection
            assert driver is not None
            cursors = []
            with driver.pipeline():
                for values in batch:
                    cursor = driver.cursor()
                    cursor.execute(statement.sql, statement.params(values))
                    cursors.append(cursor)
            outcomes: list[Viewed] = []
            for cursor in cursors:
                spent, refreshed, *view = cursor.fetchone()
                fresh = refreshed == 1
                outcomes.append((spent == 1, fresh, _node_view(view) if fresh else None))
            return outcomes
