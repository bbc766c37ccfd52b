"""Credit for batch jobs only for checked work, and only from admitted computers.

A real tracker process (private: nodes and executors need a join token) and
real executor loops (``core.jobs``) over HTTP; the liar is the same executor
whose runner makes up its metrics.json (``tests/support/lies/garbage_metrics``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from core.identity import NodeIdentity
from core.jobs.client import JobsClient
from core.jobs.credentials import CredentialStore
from core.jobs.loop import ExecutorLoop
from core.jobs.runner import SubprocessRunner
from core.tracker_client import TrackerRefused
from tests.core.jobs.tracker_fixture import issue_token
from tests.support.lies.garbage_metrics import GarbageRunner
from tests.tracker_service.jobs_helpers import Submitter
from tests.tracker_service.server_process import TrackerProcess
from tracker_service.store import credits as ledger
from tracker_service.store.db import Database
from tracker_service.store.tokens import add_join_token


@dataclass
class PrivateTracker:
    process: TrackerProcess
    submitter: Submitter
    db_url: str
    join_token: str

    def executor(self, tmp_path: Path, name: str, *, runner: SubprocessRunner | None = None,
                 join_token: str | None = "") -> ExecutorLoop:  # fmt: skip
        client = JobsClient(
            self.process.url,
            NodeIdentity.generate(),
            credentials=CredentialStore(tmp_path / f"{name}.json"),
            join_token=self.join_token if join_token == "" else join_token,
        )
        return ExecutorLoop(client, runner, workdir_base=tmp_path / name, poll_seconds=0.1)

    def earned(self, node_id: str) -> float:
        database = Database(self.db_url)
        try:
            with database.session() as session:
                rows = ledger.leaderboard(session, kind="identity", now=time.time())
        finally:
            database.dispose()
        return sum(row.total for row in rows if row.id == node_id)


@pytest.fixture
def tracker(tmp_path: Path) -> Iterator[PrivateTracker]:
    home = tmp_path / "tracker-home"
    home.mkdir()
    db_url = f"sqlite:///{home / 'tracker.db'}"
    submitter_token = issue_token(db_url)
    database = Database(db_url)
    with database.sessions.begin() as session:
        _, join_token = add_join_token(session, label="members", now=time.time())
    database.dispose()
    # The defaults of checked work: probation for new executors, a sampled share.
    process = TrackerProcess(
        home, db_url, MESHNET_TRACKER_BACKGROUND_TASKS="false", MESHNET_TRACKER_PRIVATE="true"
    ).start()
    client = httpx.Client(base_url=process.url, timeout=30.0)
    try:
        yield PrivateTracker(process, Submitter(client, submitter_token), db_url, join_token)
    finally:
        client.close()
        process.stop()


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
