"""An advisory lock beside a SQLite tracker database while ``serve`` runs.

``serve`` holds a shared lock on ``<db>.serve.lock`` for as long as it runs
(several replicas over one database may each hold one); ``restore`` takes the
lock exclusively, so it fails while any tracker serves on that database, and
the operating system drops the lock when the tracker exits, however it exits.
POSIX uses ``fcntl.flock``; Windows has no shared lock in ``msvcrt``, so there
one tracker locks the file's first byte and the others serve without it.

The file goes away with its last holder on a clean exit, yet a lock must
always be on the file the path names, or a restore could lock a fresh file
while a tracker still holds the removed one. So only a holder that gets the
lock *exclusively* removes the file (no one else holds it then), and whoever
takes a lock checks afterwards that the path still names the file it locked,
opening it again when a leaving holder removed it in between. A tracker
killed with ``kill -9`` leaves the file behind, unlocked: the next start or
restore simply locks it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
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


def _names(path: Path, handle: IO[bytes]) -> bool:
    """True when `path` still names the file `handle` has open."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(handle.fileno())
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


def _open_locked(path: Path, *, exclusive: bool, wait: bool) -> IO[bytes] | None:
    """The lock file opened and locked, or None when the lock is taken (without `wait`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        handle = open(path, "a+b")  # noqa: SIM115 - the caller keeps it open
        if not _try_lock(handle, exclusive=exclusive, wait=wait):
            handle.close()
            return None
        if _names(path, handle):
            return handle
        # A leaving holder removed the file between our open and our lock.
        handle.close()


def _release(handle: IO[bytes], *, exclusive: bool) -> None:
    """Close a held lock, removing the file when no one else holds it."""
    path = Path(handle.name)
    if sys.platform == "win32":
        handle.close()
        # Refused while another tracker or a restore has it open, which is what we want.
        with contextlib.suppress(OSError):
            path.unlink()
        return
    # A non-blocking upgrade succeeds only when no other process holds the lock; if it
    # fails the shared lock may be gone too, which is fine: this holder is leaving.
    if (exclusive or _try_lock(handle, exclusive=True, wait=False)) and _names(path, handle):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    handle.close()


def hold_while_serving(database_url: str) -> None:
    """Take the shared serve lock for this process's life (SQLite files only)."""
    database = sqlite_file(database_url)
    if database is None:
        return
    path = lock_path(database)
    # Waits only for a restore in progress, which takes seconds.
    handle = _open_locked(path, exclusive=False, wait=True)
    if handle is not None:
        _held.append(handle)
        log.debug("holding %s while serving (pid %d)", path, os.getpid())
    else:
        log.debug("another tracker holds %s", path)


def release_serve_lock() -> None:
    """On a clean stop: drop the serve lock, removing the file if no other tracker holds it."""
    while _held:
        _release(_held.pop(), exclusive=False)


@contextlib.contextmanager
def lock_for_restore(database: Path) -> Iterator[bool]:
    """Hold the lock exclusively for the block: yields False (holding nothing) when a
    running tracker holds it. The file is removed on the way out."""
    handle = _open_locked(lock_path(database), exclusive=True, wait=False)
    if handle is None:
        yield False
        return
    try:
        yield True
    finally:
        _release(handle, exclusive=True)
