"""An advisory lock beside a SQLite tracker database while ``serve`` runs.

``serve`` holds a shared lock on ``<db>.serve.lock`` for as long as it runs
(several replicas over one database may each hold one); ``restore`` takes the
lock exclusively, so it fails while any tracker serves on that database, and
the operating system drops the lock when the tracker exits, however it exits.
POSIX uses ``fcntl.flock``; Windows has no shared lock in ``msvcrt``, so there
one tracker locks the file's first byte and the others serve without it.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import IO

from sqlalchemy.engine import make_url

log = logging.getLogger(__name__)

LOCK_SUFFIX = ".serve.lock"

# Kept open for the life of the process: closing the file would drop the lock.
_held: list[IO[bytes]] = []


def sqlite_file(database_url: str) -> Path | None:
    """The database file of a SQLite URL; None for another backend or in-memory."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    return Path(url.database)


def lock_path(database: Path) -> Path:
    return database.with_name(database.name + LOCK_SUFFIX)


def _try_lock(handle: IO[bytes], *, exclusive: bool, wait: bool) -> bool:
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    flags = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    if not wait:
        flags |= fcntl.LOCK_NB
    try:
        fcntl.flock(handle.fileno(), flags)
    except OSError:
        return False
    return True


def hold_while_serving(database_url: str) -> None:
    """Take the shared serve lock for this process's life (SQLite files only)."""
    database = sqlite_file(database_url)
    if database is None:
        return
    path = lock_path(database)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+b")  # noqa: SIM115 - held open on purpose
    # Waits only for a restore in progress, which takes seconds.
    if _try_lock(handle, exclusive=False, wait=True):
        _held.append(handle)
        log.debug("holding %s while serving (pid %d)", path, os.getpid())
    else:
        handle.close()
        log.debug("another tracker holds %s", path)


def lock_for_restore(database: Path) -> IO[bytes] | None:
    """Take the lock exclusively: the open handle (close it after restoring), or None
    when a running tracker holds it."""
    path = lock_path(database)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+b")  # noqa: SIM115 - the caller closes it
    if _try_lock(handle, exclusive=True, wait=False):
        return handle
    handle.close()
    return None
