"""Fixtures of the app's tests that start real processes: a tracker on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tracker_service.server_process import TrackerProcess

# Node children keep their key in a keyring; CI has no OS keyring, so children
# use the tests' dict backend (a fresh identity per process, all they need).
CHILD_KEYRING = "tests.core.keyring_backend.DictKeyring"


@pytest.fixture
def tracker(tmp_path: Path) -> Iterator[TrackerProcess]:
    home = tmp_path / "tracker-home"
    home.mkdir()
    process = TrackerProcess(
        home, f"sqlite:///{tmp_path / 'tracker.db'}", MESHNET_TRACKER_HEARTBEAT_INTERVAL_S="1"
    )
    process.start()
    yield process
    process.stop()
