"""The serve lock beside a SQLite database: a clean stop removes the file, the last
of several trackers removes it, a kill -9 leaves an unlocked file that blocks
nothing, and a lock is always on the file the path names."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO

import pytest

from tests.tracker_service.server_process import TrackerProcess
from tracker_service.cli import serve_lock
from tracker_service.cli.serve_lock import (
    hold_while_serving,
    lock_for_restore,
    lock_path,
    release_serve_lock,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX flock semantics")


def _restore_refused(database: Path) -> bool:
    with lock_for_restore(database) as locked:
        return not locked


def test_a_tracker_stopped_cleanly_leaves_no_lock_file(tmp_path: Path) -> None:
    database = tmp_path / "tracker.db"
    tracker = TrackerProcess(tmp_path, f"sqlite:///{database}").start()
    try:
        assert lock_path(database).exists()
        assert _restore_refused(database)
    finally:
        tracker.stop()  # SIGTERM: uvicorn shuts down, then dies of the signal
    assert not lock_path(database).exists(), tracker.log.read_text()


def test_a_kill_9_leaves_a_stale_file_that_blocks_neither_start_nor_restore(
    tmp_path: Path,
) -> None:
    database = tmp_path / "tracker.db"
    first = TrackerProcess(tmp_path, f"sqlite:///{database}").start()
    first.kill9()
    assert lock_path(database).exists()  # nothing ran to remove it
    assert not _restore_refused(database)  # unlocked: a restore may run...
    assert not lock_path(database).exists()  # ...and cleans it up
    second = TrackerProcess(tmp_path, f"sqlite:///{database}").start()
    second.kill9()
    third = TrackerProcess(tmp_path, f"sqlite:///{database}").start()  # over the stale file
    try:
        assert _restore_refused(database)  # the stale file's lock is the live one's
    finally:
        third.stop()
    assert not lock_path(database).exists()


def test_the_last_of_two_trackers_removes_the_file_and_restore_waits_for_both(
    tmp_path: Path,
) -> None:
    database = tmp_path / "tracker.db"
    url = f"sqlite:///{database}"
    first = TrackerProcess(tmp_path, url).start()
    second = TrackerProcess(tmp_path, url).start()
    try:
        first.stop()
        assert lock_path(database).exists()  # the second still serves on it
        assert _restore_refused(database)
    finally:
        second.stop()
    assert not lock_path(database).exists()
    assert not _restore_refused(database)


def test_a_holder_leaving_keeps_the_file_while_another_holds_it(tmp_path: Path) -> None:
    database = tmp_path / "tracker.db"
    hold_while_serving(f"sqlite:///{database}")
    other = serve_lock._open_locked(lock_path(database), exclusive=False, wait=False)
    assert other is not None
    try:
        release_serve_lock()
        assert lock_path(database).exists()
        assert _restore_refused(database)  # the other holder's lock is on the named file
    finally:
        other.close()
    assert not _restore_refused(database)


def test_a_lock_taken_on_a_file_removed_meanwhile_is_taken_again_on_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tracker opens the file, a leaving holder removes it, then the lock is granted:
    that lock guards nothing, so the taker opens the path again."""
    path = lock_path(tmp_path / "tracker.db")
    real = serve_lock._try_lock
    attempts: list[int] = []

    def removed_in_between(handle: IO[bytes], *, exclusive: bool, wait: bool) -> bool:
        attempts.append(os.fstat(handle.fileno()).st_ino)
        if len(attempts) == 1:
            path.unlink()  # what a leaving holder does
        return real(handle, exclusive=exclusive, wait=wait)

    monkeypatch.setattr(serve_lock, "_try_lock", removed_in_between)
    handle = serve_lock._open_locked(path, exclusive=False, wait=True)
    monkeypatch.undo()
    assert handle is not None and len(attempts) == 2
    try:
        assert os.fstat(handle.fileno()).st_ino == os.stat(path).st_ino
        assert _restore_refused(tmp_path / "tracker.db")
    finally:
        handle.close()


def test_a_tracker_with_workers_stopped_cleanly_leaves_no_lock_file(tmp_path: Path) -> None:
    database = tmp_path / "tracker.db"
    tracker = TrackerProcess(
        tmp_path, f"sqlite:///{database}", extra_args=("--workers", "2")
    ).start()
    try:
        assert _restore_refused(database)
    finally:
        tracker.stop()  # the supervisor stops its workers and returns
    assert not lock_path(database).exists(), tracker.log.read_text()
