"""Credit for batch jobs only for checked work, and only from admitted computers.

A real tracker process (private: nodes and executors need a join token) and
real executor loops (``core.jobs``) over HTTP; the liar is the same executor
whose runner makes up its metrics.json (``tests/support/lies/garbage_metrics``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.errors import TrackerRefused
from tests.support.lies.garbage_metrics import GarbageRunner
from tests.support.private_jobs_tracker import PrivateTracker, private_jobs_tracker
from tracker_service.store.db import Database
from tracker_service.store.invites import add_invite, redeem_invite


@pytest.fixture
def tracker(tmp_path: Path) -> Iterator[PrivateTracker]:
    with private_jobs_tracker(tmp_path) as started:
        yield started


def test_a_stranger_cannot_become_an_executor_or_read_a_task_input(
    tracker: PrivateTracker, tmp_path: Path
) -> None:
    secret = tracker.submitter.upload_input("data.txt", b"the submitter's private data")
    tracker.submitter.submit(inputs={"data": secret})
    stranger = tracker.executor(tmp_path, "stranger", join_token=None)
    with pytest.raises(TrackerRefused) as refused:
        stranger.client.register()
    assert refused.value.reason == "join-token-required"
    with pytest.raises(TrackerRefused):
        stranger.client.claim()  # a signed claim from an unadmitted key
    with pytest.raises(TrackerRefused):
        stranger.client.download_artifact(secret, tmp_path / "got", "any-lease")
    assert not (tmp_path / "got").exists()
    # A member with the network's join token gets the task and its input.
    member = tracker.executor(tmp_path, "member")
    member.client.register()
    lease = member.client.claim()
    assert lease is not None and lease.payload["inputs"]["data"] == f"artifact://{secret}"


def _redeem_for(tracker: PrivateTracker, node_id: str) -> str:
    """The join token an invite gives when `node_id` redeems it (as `meshnet-node join`)."""
    database = Database(tracker.db_url)
    try:
        with database.sessions.begin() as session:
            now = time.time()
            _, code = add_invite(session, label="a friend's computer", now=now)
            return redeem_invite(session, code, node_id=node_id, now=now).join_token
    finally:
        database.dispose()


def test_an_invites_token_admits_its_own_executor_only(
    tracker: PrivateTracker, tmp_path: Path
) -> None:
    """An invite admits the identity that redeemed it; its token, seen or passed on,
    admits no other executor (nor shows it a task input)."""
    secret = tracker.submitter.upload_input("data.txt", b"the submitter's private data")
    tracker.submitter.submit(inputs={"data": secret})
    invited = tracker.executor(tmp_path, "invited", join_token=None)
    invited.client.join_token = _redeem_for(tracker, invited.client.node_id)
    thief = tracker.executor(tmp_path, "thief", join_token=invited.client.join_token)
    with pytest.raises(TrackerRefused) as refused:
        thief.client.register()
    assert refused.value.reason == "join-token-invalid"
    with pytest.raises(TrackerRefused):
        thief.client.claim()
    invited.client.register()
    lease = invited.client.claim()
    assert lease is not None and lease.payload["inputs"]["data"] == f"artifact://{secret}"


def test_garbage_metrics_earn_nothing_and_the_liar_is_quarantined_from_jobs(
    tracker: PrivateTracker, tmp_path: Path
) -> None:
    liar = tracker.executor(tmp_path, "liar", runner=GarbageRunner())
    honest = [tracker.executor(tmp_path, f"honest{i}") for i in (1, 2)]
    for loop in (liar, *honest):
        loop.client.register()
    job_id = tracker.submitter.submit(tasks=1).json()["job_id"]
    # The liar is new (on probation): its result waits for a second executor's.
    assert liar.run(once=True) == 1
    shown = tracker.submitter.show(job_id)
    assert shown["state"] == "running" and tracker.earned(liar.client.node_id) == 0.0
    honest[0].run(once=True)  # disagrees with the liar: the task goes to a third
    assert tracker.submitter.show(job_id)["state"] == "running"
    honest[1].run(once=True)  # agrees with the first honest result
    shown = tracker.submitter.show(job_id)
    task = shown["tasks"][0]
    assert shown["state"] == "succeeded", shown
    assert task["result_prefix"].endswith("/check-1/")  # the honest result, not the liar's
    metrics = tracker.submitter.client.get(
        f"/api/v1/jobs/artifacts/{task['result_prefix']}metrics.json",
        headers=tracker.submitter.auth,
    ).json()
    assert "junk" not in metrics and metrics["workload"] == "selftest"
    assert tracker.earned(liar.client.node_id) == 0.0
    assert [tracker.earned(h.client.node_id) for h in honest] == [1.0, 1.0]
    # Quarantined from jobs: no more work, not even after registering again.
    tracker.submitter.submit(tasks=1)
    with pytest.raises(TrackerRefused) as refused:
        liar.client.claim()
    assert refused.value.reason == "job-quarantined"
    with pytest.raises(TrackerRefused):
        liar.client.register()
    runs = liar.tasks_run
    liar.run(once=True)  # the executor stops at the refusal instead of retrying forever
    assert liar.tasks_run == runs
    assert tracker.earned(liar.client.node_id) == 0.0
