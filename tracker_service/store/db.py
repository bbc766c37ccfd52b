"""Engine, sessions and schema migration for SQLite (default) or PostgreSQL."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import Compiled, make_url
from sqlalchemy.orm import Session, sessionmaker
from starlette.concurrency import run_in_threadpool

P = ParamSpec("P")
T = TypeVar("T")

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"
# Any fixed number: replicas starting together take turns migrating.
_PG_MIGRATION_LOCK = 0x6D657368


def make_engine(url: str) -> Engine:
    """An engine tuned for the tracker: SQLite in WAL mode, PostgreSQL pooled."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": 30}, pool_size=8
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_size=10, max_overflow=20, pool_pre_ping=True)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets readers run beside the writer; NORMAL sync keeps every committed
    # transaction through a process kill (only power loss can drop the last ones).
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA cache_size=-32768")  # 32 MiB: the live node set stays in memory
    cursor.close()


@contextmanager
def _alembic_quiet_unless_debugging() -> Iterator[None]:
    """Alembic logs ~15 INFO lines (plugins, each revision) on every fresh start; keep
    them for --log-level debug. Its warnings still show, and a failed migration raises."""
    alembic_log = logging.getLogger("alembic")
    if log.isEnabledFor(logging.DEBUG) or alembic_log.level > logging.INFO:
        yield
        return
    before = alembic_log.level
    alembic_log.setLevel(logging.WARNING)
    try:
        yield
    finally:
        alembic_log.setLevel(before)


def migrate(engine: Engine) -> None:
    """Apply every Alembic migration (idempotent); replicas on PostgreSQL take a lock."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    with engine.begin() as connection:
        postgres = connection.dialect.name == "postgresql"
        if postgres:
            connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_MIGRATION_LOCK})
        else:
            # sqlite3 opens a transaction only before DML, so each CREATE/ALTER would commit
            # on its own: a start killed mid-migration left tables without the version row,
            # and every later start failed on "table already exists". One explicit
            # transaction makes the whole upgrade land or vanish.
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        config.attributes["connection"] = connection
        with _alembic_quiet_unless_debugging():
            before = MigrationContext.configure(connection).get_current_revision()
            command.upgrade(config, "head")
            after = MigrationContext.configure(connection).get_current_revision()
    # One line in place of alembic's: which revisions this start applied, if any.
    applied = "" if before == after else f"; migrated {before or 'empty'} -> {after}"
    log.info(
        "database schema at head (%s)%s", engine.url.render_as_string(hide_password=True), applied
    )


class PreparedStatement:
    """A statement compiled once for one dialect, run on the driver's cursor.

    For hot paths only (heartbeats, the route query): SQLAlchemy builds and
    compiles the SQL, and its per-execution machinery, which costs several
    times the database work there, is skipped.
    """

    def __init__(self, compiled: Compiled) -> None:
        self.sql = str(compiled)
        # Literals in the statement (e.g. state = 'active') compile to bound defaults.
        self.defaults = {k: v for k, v in compiled.params.items() if v is not None}
        # qmark drivers (sqlite3) take a tuple in this order; pyformat ones (psycopg) a dict.
        positions: list[str] | None = getattr(compiled, "positiontup", None)
        self.order: tuple[str, ...] | None = tuple(positions) if positions else None

    def params(self, values: dict[str, Any]) -> Any:
        merged = {**self.defaults, **values}
        if self.order is None:
            return merged
        return tuple(merged[name] for name in self.order)


class Database:
    """The engine and its session factory; one per app."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def migrate(self) -> None:
        migrate(self.engine)

    async def run_quick(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a short, indexed statement batch from async code.

        SQLite answers such a batch in tens of microseconds from the page cache,
        less than a worker-thread hop costs, so it runs inline on the event loop;
        PostgreSQL waits on the network, so it goes to a worker thread.
        """
        if self.dialect == "sqlite":
            return fn(*args, **kwargs)
        return await run_in_threadpool(fn, *args, **kwargs)

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self.sessions() as session:
            yield session

    def dispose(self) -> None:
        self.engine.dispose()
