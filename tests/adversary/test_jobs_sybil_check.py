"""Issue 36: a sybil cannot check its partner's batch-job work.

The liar returns garbage metrics; its sybil, an identity of the same operator
(one invite batch), polls for work constantly and would take the check round the
moment it is queued, agree with the garbage, and both would be paid. A check round
goes only to an executor independent of every executor that already answered: the
sybil is given nothing, an honest stranger checks, and the liar is outvoted.

A real private tracker process and real executor loops (``core.jobs``) over HTTP.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.lies.garbage_metrics import GarbageRunner
from tests.support.private_jobs_tracker import PrivateTracker, private_jobs_tracker
from tracker_service.store.db import Database
from tracker_service.store.invites import add_invite, redeem_invite


@pytest.fixture
def tracker(tmp_path: Path) -> Iterator[PrivateTracker]:
    with private_jobs_tracker(tmp_path) as started:
        yield started


def _one_batch(tracker: PrivateTracker, *node_ids: str) -> None:
    """The identities redeemed one operator's invite batch (tied to each other)."""
    database = Database(tracker.db_url)
    try:
        with database.sessions.begin() as session:
            now = time.time()
            _, code = add_invite(session, label="one operator's batch", now=now, max_uses=2)
            for node_id in node_ids:
                redeem_invite(session, code, node_id=node_id, now=now)
    finally:
        database.dispose()


def test_a_sybil_is_never_given_its_partners_check_round(
    tracker: PrivateTracker, tmp_path: Path
) -> None:
    liar = tracker.executor(tmp_path, "liar", runner=GarbageRunner())
    sybil = tracker.executor(tmp_path, "sybil", runner=GarbageRunner())
    honest = [tracker.executor(tmp_path, f"honest{i}") for i in (1, 2)]
    for loop in (liar, sybil, *honest):
        loop.client.register()
    _one_batch(tracker, liar.client.node_id, sybil.client.node_id)
    job_id = tracker.submitter.submit(tasks=1).json()["job_id"]
    assert liar.run(once=True) == 1  # on probation: its result waits for a check
    # The sybil polls first for the check round and is given nothing.
    assert sybil.client.claim() is None
    assert sybil.tasks_run == 0
    honest[0].run(once=True)  # disagrees with the liar: a third round
    assert sybil.client.claim() is None  # still tied to the liar
    honest[1].run(once=True)
    shown = tracker.submitter.show(job_id)
    assert shown["state"] == "succeeded", shown
    assert "/check-" in shown["tasks"][0]["result_prefix"]  # an honest result won
    assert tracker.earned(liar.client.node_id) == 0.0
    assert tracker.earned(sybil.client.node_id) == 0.0
    assert [tracker.earned(h.client.node_id) for h in honest] == [1.0, 1.0]
