"""The tracker key is written whole or not at all: a first start killed while writing
it leaves no empty key file that every later start would refuse."""

from __future__ import annotations

import os
import signal
import stat
from pathlib import Path

import pytest

from tracker_service.keys import TrackerKey


def test_a_start_killed_while_writing_the_key_leaves_no_key_file(tmp_path: Path) -> None:
    path = tmp_path / "tracker" / "tracker.key"
    child = os.fork()
    if child == 0:  # pragma: no cover - the child never returns to pytest
        try:
            # Die the moment the key's bytes are about to reach the disk.
            pytest.MonkeyPatch().setattr(os, "fsync", lambda _fd: os.kill(os.getpid(), 9))
            TrackerKey.load_or_create(path)
        finally:
            os._exit(0)
    _, status = os.waitpid(child, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    assert not path.exists()
    key = TrackerKey.load_or_create(path)  # the next start creates it afresh
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert TrackerKey.load_or_create(path).public_key_b64 == key.public_key_b64
