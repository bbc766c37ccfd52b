"""Fixtures of the app's tests that start real processes: trackers on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.tracker_service.conftest import register
from tests.tracker_service.helpers import FakeNode, identity_block
from tests.tracker_service.server_process import REPO, TrackerProcess

# Node children keep their key in a keyring; CI has no OS keyring, so children
# use the tests' dict backend (a fresh identity per process, all they need).
CHILD_KEYRING = "tests.core.keyring_backend.DictKeyring"


@pytest.fixture
def child_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A node child the app starts finds the tests' keyring and this checkout."""
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", CHILD_KEYRING)
    monkeypatch.setenv("PYTHONPATH", str(REPO))


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


def certify_through_the_ledger(db_url: str) -> None:
    """Promote the fp32 recipe the way the tracker's certifier does, through its ledger."""
    from tracker_service.domain.recipe_identity import DistributedForwardEvidence, parse_identity
    from tracker_service.store.db import Database
    from tracker_service.store.ledger import PersistentLedger

    first, second = parse_identity(identity_block(0, 15)), parse_identity(identity_block(15, 30))
    evidence = DistributedForwardEvidence(
        route_session_id="rs-app",
        route_epoch=1,
        node_ids=("a" * 32, "b" * 32),
        shard_ranges=((0, 15), (15, 30)),
        tokens_generated=16,
        layer_count=30,
        fingerprint=first.key,
        participants=(first, second),
    )
    database = Database(db_url)
    PersistentLedger(database).certify(first, evidence)
    database.dispose()


@pytest.fixture
def seeded_tracker(tmp_path: Path) -> Iterator[TrackerProcess]:
    """A tracker that knows one certified recipe (fp32) and one dark (fp16)."""
    db_url = f"sqlite:///{tmp_path / 'seeded-tracker.db'}"
    # Its nodes are fakes that are never dialled (a dial would find them unreachable).
    process = TrackerProcess(tmp_path, db_url, MESHNET_TRACKER_REACHABILITY_POLL_S="3600").start()
    try:
        with httpx.Client(base_url=process.url, timeout=10.0) as client:
            assert register(client, FakeNode(), identity_block(0, 15)).status_code == 200
            certify_through_the_ledger(db_url)
            fp16 = identity_block(0, 30, compute_dtype="float16", recipe_id="smollm2-fp16")
            assert register(client, FakeNode(), fp16).status_code == 200
        yield process
    finally:
        process.stop()
