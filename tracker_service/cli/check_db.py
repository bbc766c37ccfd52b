"""``meshnet-tracker check-db``: is the database whole after a crash, a restore or a copy?

Runs :func:`tracker_service.store.integrity.check_database` (SQLite's integrity
and foreign-key checks, the schema version, the certification ledger's
invariants) and prints one line. A damaged database gets one sentence naming
the first problems, the reason code ``integrity-check-failed`` and a non-zero
exit, so an operator (or a start script) can stop before serving from it.
"""

from __future__ import annotations

import argparse
from typing import Any

from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url

from tracker_service.cli.errors import require_existing_sqlite
from tracker_service.config import Settings
from tracker_service.errors import CliRefusal
from tracker_service.store.db import Database
from tracker_service.store.integrity import check_database

INTEGRITY_FAILED = "integrity-check-failed"
SHOWN_PROBLEMS = 3


def cmd_check_db(args: argparse.Namespace, settings: Settings) -> int:
    url = settings.database_url()
    require_existing_sqlite(url)  # never create an empty database to check
    where = make_url(url).render_as_string(hide_password=True)
    database = Database(url)
    try:
        report = check_database(database)
    except sa_exc.OperationalError:
        raise  # an unreachable server: cli/errors.py says so
    except sa_exc.DatabaseError as exc:
        first = str(exc.orig or exc).strip().splitlines()[0][:300]
        raise CliRefusal(
            f"the database {where} cannot be read as a tracker database ({first}); restore "
            "it from a backup (meshnet-tracker restore)",
            INTEGRITY_FAILED,
        ) from exc
    finally:
        database.dispose()
    if not report.ok:
        shown = "; ".join(report.problems[:SHOWN_PROBLEMS])
        more = len(report.problems) - SHOWN_PROBLEMS
        tail = f" (and {more} more)" if more > 0 else ""
        raise CliRefusal(
            f"the database {where} fails its integrity check: {shown}{tail}; stop the tracker "
            "and restore a backup (meshnet-tracker restore)",
            INTEGRITY_FAILED,
        )
    print(f"the database {where} passes its integrity check: {report.summary()}")
    return 0


def add_check_db_command(commands: Any, settings_of: Any) -> None:
    sub = commands.add_parser(
        "check-db", help="check the database (SQLite integrity, schema, the ledger's invariants)"
    )
    sub.add_argument("--db", help="SQLAlchemy URL (default: SQLite in the data folder)")
    sub.set_defaults(func=lambda args: cmd_check_db(args, settings_of(args)))
