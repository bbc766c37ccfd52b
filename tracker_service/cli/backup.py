"""``meshnet-tracker backup PATH`` and ``restore PATH`` for a SQLite tracker.

The backup uses SQLite's online backup API, so it is consistent even while the
tracker serves (WAL mode): recipes, certifications, nodes, keys and jobs are
copied page by page in one snapshot. ``restore`` checks the file is a tracker
database that passes ``PRAGMA integrity_check`` and then copies it into place
with the same API; it refuses (``tracker-running``) while a tracker serves on
that database, which ``serve`` marks with a lock file beside it. For PostgreSQL the
docs/commands.md gives the ``pg_dump``/``pg_restore`` recipe instead.
"""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from tracker_service.cli.serve_lock import lock_for_restore, lock_path
from tracker_service.config import Settings
from tracker_service.errors import CliRefusal

REQUIRED_TABLES = ("nodes", "recipes")


def _sqlite_path(settings: Settings) -> Path:
    url = make_url(settings.database_url())
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        raise CliRefusal(
            "backup and restore work on a SQLite tracker; for PostgreSQL use pg_dump and "
            "pg_restore (see docs/commands.md)",
            "backup-unsupported",
        )
    return Path(url.database)


def _check(path: Path) -> None:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            verdict = db.execute("PRAGMA integrity_check").fetchone()[0]
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    except sqlite3.Error as exc:
        raise CliRefusal(f"{path} is not a readable SQLite database ({exc})", "bad-backup") from exc
    if verdict != "ok":
        raise CliRefusal(f"{path} fails SQLite's integrity check: {verdict}", "bad-backup")
    missing = [t for t in REQUIRED_TABLES if t not in tables]
    if missing:
        raise CliRefusal(
            f"{path} is not a tracker database (no {', '.join(missing)})", "bad-backup"
        )


def _copy(source: Path, target: Path) -> None:
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    sqlite3.connect(target).close()


def cmd_backup(args: argparse.Namespace, settings: Settings) -> int:
    database = _sqlite_path(settings)
    if not database.is_file():
        raise CliRefusal(f"there is no tracker database at {database}", "database-missing")
    target = Path(args.path)
    if target.exists():
        raise CliRefusal(f"{target} exists; name a new file for the backup", "backup-exists")
    target.parent.mkdir(parents=True, exist_ok=True)
    _copy(database, target)
    _check(target)
    print(f"backed up {database} to {target}")
    return 0


def cmd_restore(args: argparse.Namespace, settings: Settings) -> int:
    source = Path(args.path)
    if not source.is_file():
        raise CliRefusal(f"there is no backup at {source}", "backup-missing")
    _check(source)
    database = _sqlite_path(settings)
    database.parent.mkdir(parents=True, exist_ok=True)
    # Held while copying, so no tracker starts on a half-restored file.
    with lock_for_restore(database) as locked:
        if not locked:
            raise CliRefusal(
                f"a tracker is serving on {database} (it holds {lock_path(database)}); "
                "stop it before restoring",
                "tracker-running",
            )
        _copy(source, database)
    _check(database)
    print(f"restored {source} into {database}; start the tracker")
    return 0


def add_backup_commands(commands: Any, settings_of: Any) -> None:
    """``backup PATH`` and ``restore PATH`` (each with ``--db``)."""
    for name, func, helptext in (
        ("backup", cmd_backup, "copy the SQLite database, consistently, while it serves"),
        ("restore", cmd_restore, "replace the SQLite database with a backup (tracker stopped)"),
    ):
        sub = commands.add_parser(name, help=helptext)
        sub.add_argument("path", help="the backup file")
        sub.add_argument("--db", help="SQLAlchemy URL (default: SQLite in the data folder)")
        sub.set_defaults(func=lambda args, f=func: f(args, settings_of(args)))
