"""Fixtures of the app's tests that start real processes: trackers on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.tracker_service.conftest import register
from tests.tracker_service.helpers import FakeNode, identity_block
from tests.tracker_service.server_process import REPO, TrackerProcess, certify_through_the_ledger

# Node children keep their key in a keyring; CI has no OS keyring, so children
# use the tests' dict backend (a fresh identity per process, all they need).
CHILD_KEYRING = "tests.core.keyring_backend.DictKeyring"


@pytest.fixture
def child_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A node child the app starts finds the tests' keyring and this checkout."""
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", CHILD_KEYRING)
    monkeypatch.setenv("PYTHONPATH", str(REPO))


def serve_tracker(tmp_path: Path, **env: str) -> Iterator[TrackerProcess]:
    """A tracker process beating every second (``env`` adds settings), stopped after."""
    home = tmp_path / "tracker-home"
    home.mkdir()
    settings = {"MESHNET_TRACKER_HEARTBEAT_INTERVAL_S": "1", **env}
    process = TrackerProcess(home, f"sqlite:///{home / 'tracker.db'}", **settings)
    try:
        # A loaded machine: how long starting takes is not what these tests measure.
        yield process.start(timeout_s=120.0)
    finally:
        process.stop()


@pytest.fixture
def tracker(tmp_path: Path) -> Iterator[TrackerProcess]:
    yield from serve_tracker(tmp_path)


@pytest.fixture
def seeded_tracker(tmp_path: Path) -> Iterator[TrackerProcess]:
    """A tracker that knows one certified recipe (fp32) and one dark (fp16)."""
    db_url = f"sqlite:///{tmp_path / 'seeded-tracker.db'}"
    # Its nodes are fakes that are never dialled (a dial would find them unreachable).
    process = TrackerProcess(tmp_path, db_url, MESHNET_TRACKER_REACHABILITY_POLL_S="3600").start()
    try:
        with httpx.Client(base_url=process.url, timeout=10.0) as client:
            assert register(client, FakeNode(), identity_block(0, 15)).status_code == 200
            certify_through_the_ledger(db_url, "rs-app")
            fp16 = identity_block(0, 30, compute_dtype="float16", recipe_id="smollm2-fp16")
            assert register(client, FakeNode(), fp16).status_code == 200
        yield process
    finally:
        process.stop()
