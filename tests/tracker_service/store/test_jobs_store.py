"""The job queue's transactions on SQLite and a real PostgreSQL (MESHNET_TEST_POSTGRES_URL)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tracker_service.store_backends import BACKENDS, fresh_database
from tracker_service.services.credit_policy import pay_job_credit
from tracker_service.store import jobs as queue
from tracker_service.store.artifacts import record_artifact
from tracker_service.store.db import Database
from tracker_service.store.job_checks import NO_CHECKS
from tracker_service.store.job_tables import JobTask


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    db = fresh_database(request.param, tmp_path)
    yield db
    db.dispose()


def _spec(tasks: int = 1, max_attempts: int = 3) -> queue.JobSpec:
    return queue.JobSpec(
        workload="selftest",
        params={},
        inputs={},
        unpack_inputs=[],
        tasks=tasks,
        checkpoint=False,
        max_attempts=max_attempts,
        lease_s=30.0,
        timeout_s=60.0,
    )


def _submit(db: Database, tasks: int = 1, max_attempts: int = 3) -> str:
    with db.sessions.begin() as session:
        return queue.submit_job(
            session, _spec(tasks, max_attempts), submitter_id=None, now=1.0
        ).job_id


def test_concurrent_claims_never_lease_one_task_twice(database: Database) -> None:
    _submit(database, tasks=20)
    leased: list[str] = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        while True:
            with database.sessions.begin() as session:
                got = queue.claim_task(session, f"node{n}", now=time.time())
                if got is None:
                    return
                task_id = got[0].task_id
            with lock:
                leased.append(task_id)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(leased) == 20 and len(set(leased)) == 20


def test_an_expired_lease_requeues_at_once_and_counts_an_attempt(database: Database) -> None:
    _submit(database, max_attempts=2)
    with database.sessions.begin() as session:
        task, _ = queue.claim_task(session, "a", now=100.0) or (None, None)
        assert task is not None and task.attempts == 1
        lease_id = task.lease_id
    with database.sessions.begin() as session:
        again = queue.claim_task(session, "b", now=200.0)
        assert again is not None and again[0].attempts == 2 and again[0].node_id == "b"
    with database.sessions.begin() as session, pytest.raises(queue.QueueRefusal) as info:
        queue.heartbeat_lease(session, str(lease_id), "a", now=201.0)
    assert info.value.reason == queue.LEASE_LOST
    with database.sessions.begin() as session:
        assert queue.claim_task(session, "c", now=300.0) is None  # max attempts reached
        job = queue.list_jobs(session)[0]
        task_row = session.get(JobTask, again[0].task_id)
        assert task_row is not None and task_row.state == "failed"
        assert "lease expired" in task_row.last_error and job.state == "failed"


def test_a_refused_completion_changes_nothing(database: Database) -> None:
    job_id = _submit(database)
    with database.sessions.begin() as session:
        task, _ = queue.claim_task(session, "a", now=10.0) or (None, None)
        assert task is not None
        lease_id, task_id = str(task.lease_id), task.task_id
        record_artifact(
            session, f"jobs/{job_id}/{task_id}/metrics.json", "a" * 64, 2, uploaded_by="t", now=10.0
        )
    with database.sessions.begin() as session:
        queue.complete_task(
            session, lease_id, "a", "a" * 64, now=11.0, policy=NO_CHECKS, pay=pay_job_credit
        )
    with database.sessions.begin() as session, pytest.raises(queue.QueueRefusal) as info:
        queue.complete_task(
            session, lease_id, "a", "a" * 64, now=12.0, policy=NO_CHECKS, pay=pay_job_credit
        )
    assert info.value.reason == queue.COMPLETION_REFUSED
    with database.session() as session:
        row = session.get(JobTask, task_id)
        assert row is not None and row.state == "succeeded" and row.finished_at == 11.0


def test_backoff_doubles_and_is_capped() -> None:
    assert [queue.backoff_s(n) for n in (1, 2, 3)] == [2.0, 4.0, 8.0]
    assert queue.backoff_s(50) == queue.BACKOFF_MAX_S
