"""The tracker command's failures as one sentence with a reason code.

An operator who mistypes ``--port`` or points ``--db`` at a server that is down
should read what to fix, not a pydantic dump or a SQLAlchemy traceback. The
command catches these at its edge, prints ``meshnet-tracker: <sentence>
[<reason>]`` on stderr and exits 2.
"""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
from pydantic import ValidationError
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url

from tracker_service.errors import CliRefusal, KeyFileExposed


def report(refusal: CliRefusal) -> None:
    """Print a refusal the one way every meshnet-tracker command does."""
    print(f"meshnet-tracker: {refusal} [{refusal.reason}]", file=sys.stderr)


def explain(error: BaseException, database_url: str | None) -> CliRefusal | None:
    """The sentence and code for an error the command knows, else None (a real bug)."""
    if isinstance(error, CliRefusal):
        return error
    if isinstance(error, KeyFileExposed):
        return CliRefusal(str(error), error.reason)
    if isinstance(error, httpx.HTTPError):
        # jobs talks to a running tracker: a refused connection or timeout is the answer.
        return CliRefusal(f"cannot reach the tracker: {error}", "tracker-unreachable")
    if isinstance(error, ValidationError):
        problems = "; ".join(
            f"--{'.'.join(str(p) for p in e['loc']).replace('_', '-')}: {e['msg']}"
            for e in error.errors()[:3]
        )
        return CliRefusal(f"a setting is invalid: {problems}", "bad-setting")
    where = _redacted(database_url)
    if isinstance(error, sa_exc.NoSuchModuleError | sa_exc.ArgumentError):
        return CliRefusal(
            f"the database URL {where} is not one the tracker can use; give "
            "sqlite:///PATH or postgresql+psycopg://USER@HOST/DB",
            "bad-database-url",
        )
    if isinstance(error, sa_exc.OperationalError | sa_exc.InterfaceError):
        first = str(error.orig or error).strip().splitlines()[0][:300]
        return CliRefusal(
            f"cannot use the database {where} ({first}); check that it is running and "
            "that the URL, user and password are right",
            "database-unreachable",
        )
    if isinstance(error, ImportError) and "psycopg" in str(error):
        return CliRefusal(
            "PostgreSQL URLs need the psycopg package: pip install 'psycopg[binary]'",
            "database-driver-missing",
        )
    return None


def require_existing_sqlite(database_url: str) -> None:
    """Read-only commands must not create an empty database where none was."""
    try:
        url = make_url(database_url)
    except sa_exc.ArgumentError:
        return  # explained when the engine is made
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return
    if not Path(url.database).is_file():
        raise CliRefusal(
            f"there is no tracker database at {url.database}; name the one `meshnet-tracker "
            "serve` uses (--db) or start the tracker first",
            "database-missing",
        )


def _redacted(database_url: str | None) -> str:
    if not database_url:
        return "(the default)"
    try:
        return make_url(database_url).render_as_string(hide_password=True)
    except sa_exc.ArgumentError:
        return repr(database_url[:200])
