"""The tracker key is written whole or not at all: a first start killed while writing
it leaves no empty key file that every later start would refuse."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

from tests.tracker_service.server_process import REPO
from tracker_service.domain.keys import TrackerKey

# In a fresh interpreter: forking pytest, which may hold threads, could deadlock.
DIE_WHILE_WRITING = """
import os, sys
from pathlib import Path
from tracker_service.domain.keys import TrackerKey

# Die the moment the key's bytes are about to reach the disk.
os.fsync = lambda _fd: os.kill(os.getpid(), 9)
TrackerKey.load_or_create(Path(sys.argv[1]))
"""


def test_a_start_killed_while_writing_the_key_leaves_no_key_file(tmp_path: Path) -> None:
    path = tmp_path / "tracker" / "tracker.key"
    died = subprocess.run(
        [sys.executable, "-c", DIE_WHILE_WRITING, str(path)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert died.returncode == -signal.SIGKILL
    assert not path.exists()
    key = TrackerKey.load_or_create(path)  # the next start creates it afresh
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert TrackerKey.load_or_create(path).public_key_b64 == key.public_key_b64
