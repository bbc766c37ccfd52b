"""A committed batch-job task earns its executor one work unit, once (SQLite, PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tracker_service.store_backends import BACKENDS, fresh_database
from tracker_service.domain.credit_rules import JOB_UNIT_CREDIT
from tracker_service.services import credit_policy
from tracker_service.services.credit_policy import pay_job_credit
from tracker_service.store import jobs as queue
from tracker_service.store.artifacts import record_artifact
from tracker_service.store.db import Database
from tracker_service.store.job_checks import NO_CHECKS

NODE = "c" * 32


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    db = fresh_database(request.param, tmp_path, "jobs-credit.db")
    yield db
    db.dispose()


def test_a_completed_task_credits_one_unit_and_a_repeat_credits_nothing(
    database: Database,
) -> None:
    spec = queue.JobSpec(
        workload="selftest", params={}, inputs={}, unpack_inputs=[], tasks=2,
        checkpoint=False, max_attempts=3, lease_s=30.0, timeout_s=60.0,
    )  # fmt: skip
    with database.sessions.begin() as session:
        job_id = queue.submit_job(session, spec, submitter_id=None, now=1.0).job_id
    with database.sessions.begin() as session:
        task, _ = queue.claim_task(session, NODE, now=10.0) or (None, None)
        assert task is not None
        lease_id = str(task.lease_id)
        key = f"jobs/{job_id}/{task.task_id}/metrics.json"
        record_artifact(session, key, "a" * 64, 2, uploaded_by="t", now=10.0)
    with database.sessions.begin() as session:
        queue.complete_task(
            session, lease_id, NODE, "a" * 64, now=11.0, policy=NO_CHECKS, pay=pay_job_credit
        )
    with database.sessions.begin() as session, pytest.raises(queue.QueueRefusal):
        queue.complete_task(
            session, lease_id, NODE, "a" * 64, now=12.0, policy=NO_CHECKS, pay=pay_job_credit
        )
    with database.session() as session:
        [row] = credit_policy.leaderboard(session, kind="identity", now=12.0)
    assert row.id == NODE and row.total == pytest.approx(JOB_UNIT_CREDIT)
    assert row.identities[0].job_units == 1 and row.hops == 0
