"""The two stores the tracker runs on, for tests parametrized over both.

SQLite always; PostgreSQL when MESHNET_TEST_POSTGRES_URL names a test server
(`eval "$(.ci/start-postgres.sh)"`), its public schema dropped for every test.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from sqlalchemy import text

from tracker_service.store.db import Database

POSTGRES_URL = os.environ.get("MESHNET_TEST_POSTGRES_URL", "")


POSTGRES_MARKS = [
    pytest.mark.postgres,
    pytest.mark.skipif(
        not POSTGRES_URL,
        reason="PostgreSQL tests skipped: MESHNET_TEST_POSTGRES_URL is not set "
        '(run `eval "$(.ci/start-postgres.sh)"` first)',
    ),
]

F = TypeVar("F", bound=Callable[..., Any])


def postgres_param() -> Any:
    return pytest.param("postgres", marks=POSTGRES_MARKS)


def needs_postgres(test: F) -> F:
    """A test that runs on PostgreSQL only: marked, and skipped without the server."""
    for mark in reversed(POSTGRES_MARKS):
        test = mark(test)
    return test


BACKENDS = ["sqlite", postgres_param()]


def reset_postgres() -> str:
    """The PostgreSQL test server's URL, with an empty public schema."""
    db = Database(POSTGRES_URL)
    with db.engine.begin() as connection:
        connection.execute(text("DROP SCHEMA public CASCADE"))
        connection.execute(text("CREATE SCHEMA public"))
    db.dispose()
    return POSTGRES_URL


def database_url(backend: str, tmp_path: Path, name: str = "store.db") -> str:
    """The URL of an empty (unmigrated) store of the given backend."""
    return f"sqlite:///{tmp_path / name}" if backend == "sqlite" else reset_postgres()


def fresh_database(backend: str, tmp_path: Path, name: str = "store.db") -> Database:
    """A migrated, empty store of the given backend."""
    db = Database(database_url(backend, tmp_path, name))
    db.migrate()
    return db
