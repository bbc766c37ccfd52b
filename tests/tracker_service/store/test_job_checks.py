"""Checked work in the store: rounds under their own prefix, pay on agreement, a third
executor on a disagreement, the minority quarantined (SQLite, PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.tracker_service.store_backends import BACKENDS, fresh_database
from tracker_service.domain.job_checks import Result, agreeing_pair, tolerance_for
from tracker_service.services.credit_policy import pay_job_credit
from tracker_service.store import jobs as queue
from tracker_service.store.artifacts import record_artifact
from tracker_service.store.db import Database
from tracker_service.store.executors import register_executor
from tracker_service.store.job_checks import CheckPolicy
from tracker_service.store.job_tables import (
    RESULT_PAID,
    RESULT_REJECTED,
    JobExecutor,
    JobResult,
    JobTask,
)

ALWAYS = CheckPolicy(share=1.0, probation_tasks=0)
SELFTEST = {"workload": "selftest", "task_index": 0, "steps_total": 0}


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    db = fresh_database(request.param, tmp_path, "checks.db")
    with db.sessions.begin() as session:
        for node in "abcd":
            register_executor(session, node * 32, "k", now=1.0, ttl_s=60.0)
    yield db
    db.dispose()


def _submit(db: Database, tasks: int = 1) -> str:
    spec = queue.JobSpec(
        workload="selftest", params={}, inputs={}, unpack_inputs=[], tasks=tasks,
        checkpoint=False, max_attempts=3, lease_s=30.0, timeout_s=60.0,
    )  # fmt: skip
    with db.sessions.begin() as session:
        return queue.submit_job(session, spec, submitter_id=None, now=1.0).job_id


def _run(
    db: Database, node: str, metrics: Any, *, policy: CheckPolicy = ALWAYS, now: float = 10.0
) -> JobTask | None:
    """`node` claims, uploads `metrics` under its round's prefix and completes."""
    node_id = node * 32
    sha = (str(hash(repr(metrics)) & 0xFFFFFFFF).rjust(8, "0") * 8)[:64]
    with db.sessions.begin() as session:
        claimed = queue.claim_task(session, node_id, now=now)
        if claimed is None:
            return None
        task, job = claimed
        prefix = queue.output_prefix(job.job_id, task.task_id, task.round)
        record_artifact(session, prefix + "metrics.json", sha, 2, uploaded_by="t", now=now)
        lease_id = str(task.lease_id)
    with db.sessions.begin() as session:
        return queue.complete_task(
            session,
            lease_id,
            node_id,
            sha,
            now=now + 1,
            metrics=metrics,
            policy=policy,
            pay=pay_job_credit,
        )


def _task(db: Database) -> JobTask:
    with db.session() as session:
        [task] = session.query(JobTask).all()
        session.expunge(task)
        return task


def _results(db: Database) -> dict[str, str]:
    with db.session() as session:
        return {r.node_id[0]: r.state for r in session.query(JobResult).all()}


def test_an_unsampled_task_of_a_trusted_executor_pays_at_once(database: Database) -> None:
    _submit(database)
    _run(database, "a", SELFTEST, policy=CheckPolicy(share=0.0, probation_tasks=0))
    assert _task(database).state == "succeeded" and _results(database) == {"a": RESULT_PAID}


def test_a_new_executor_is_on_probation_until_its_results_are_confirmed(
    database: Database,
) -> None:
    policy = CheckPolicy(share=0.0, probation_tasks=1)
    _submit(database, tasks=2)
    _run(database, "a", SELFTEST, policy=policy)
    assert _results(database) == {"a": "pending"}  # waits for a second executor
    assert _run(database, "a", SELFTEST, policy=policy) is not None  # a takes the other task
    assert _run(database, "b", SELFTEST, policy=policy, now=20.0) is not None
    with database.session() as session:
        passed = session.get(JobExecutor, "a" * 32)
        assert passed is not None and passed.checks_passed == 1


def test_a_check_runs_under_its_own_prefix_and_never_on_the_same_executor(
    database: Database,
) -> None:
    job_id = _submit(database)
    _run(database, "a", SELFTEST)
    task = _task(database)
    assert task.state == "queued" and task.round == 1
    with database.sessions.begin() as session:
        assert queue.claim_task(session, "a" * 32, now=20.0) is None  # a already answered
        claimed = queue.claim_task(session, "b" * 32, now=20.0)
        assert claimed is not None
        check = claimed[0]
        base = queue.output_prefix(job_id, check.task_id)
        assert queue.lease_may_write(job_id, check, f"{base}check-1/metrics.json")
        assert not queue.lease_may_write(job_id, check, f"{base}metrics.json")
        check.round = 0  # the first run may not write into a check's folder
        assert not queue.lease_may_write(job_id, check, f"{base}check-1/metrics.json")
        session.rollback()


def test_agreeing_results_pay_both_and_the_task_succeeds(database: Database) -> None:
    job_id = _submit(database)
    _run(database, "a", SELFTEST)
    _run(database, "b", {**SELFTEST, "resumed_from": 3}, now=20.0)  # how it ran is not compared
    task = _task(database)
    assert task.state == "succeeded" and task.result_round == 0
    assert _results(database) == {"a": RESULT_PAID, "b": RESULT_PAID}
    assert queue.output_prefix(job_id, task.task_id, 0).endswith(f"{task.task_id}/")


def test_a_disagreement_goes_to_a_third_and_the_minority_is_quarantined(
    database: Database,
) -> None:
    _submit(database, tasks=2)
    _run(database, "a", {"workload": "junk"})  # the liar answers first
    _run(database, "a", {"workload": "junk 2"})  # and takes the second task too (pending)
    _run(database, "b", SELFTEST, now=20.0)
    assert _task_states(database) == ["queued", "queued"]
    _run(database, "c", SELFTEST, now=30.0)  # agrees with b on the first task
    with database.session() as session:
        liar = session.get(JobExecutor, "a" * 32)
        assert liar is not None and liar.quarantined_at is not None
        states = {(r.node_id[0], r.round): r.state for r in session.query(JobResult).all()}
    assert states[("a", 0)] == RESULT_REJECTED and list(states.values()).count(RESULT_PAID) == 2
    assert all(s != RESULT_PAID for (n, _), s in states.items() if n == "a")
    with database.sessions.begin() as session, pytest.raises(queue.QueueRefusal) as refused:
        claimed = queue.claim_task(session, "d" * 32, now=40.0)
        assert claimed is not None
        task, _ = claimed
        prefix = queue.output_prefix(task.job_id, task.task_id, task.round)
        record_artifact(session, prefix + "metrics.json", "e" * 64, 2, uploaded_by="t", now=30.0)
        lease_id = str(task.lease_id)
        session.flush()
        queue.complete_task(
            session, lease_id, "a" * 32, "e" * 64, now=31.0, policy=ALWAYS, pay=pay_job_credit
        )
    assert refused.value.reason == queue.COMPLETION_REFUSED  # not the liar's lease


def _task_states(db: Database) -> list[str]:
    with db.session() as session:
        return sorted(t.state for t in session.query(JobTask).all())


def test_three_results_that_all_disagree_fail_the_task_and_pay_no_one(
    database: Database,
) -> None:
    _submit(database)
    for n, node in enumerate("abc"):
        _run(database, node, {"workload": "selftest", "steps_total": n}, now=10.0 * (n + 1))
    task = _task(database)
    assert task.state == "failed" and "disagree" in task.last_error
    assert RESULT_PAID not in _results(database).values()


def test_tolerance_is_the_workloads() -> None:
    a = Result(1, "x" * 64, {"perplexity": 10.0, "mean_nll": 2.302})
    near = Result(2, "y" * 64, {"perplexity": 10.05, "mean_nll": 2.3025})
    far = Result(3, "z" * 64, {"perplexity": 12.0, "mean_nll": 2.48})
    assert agreeing_pair([a, near], tolerance_for("perplexity")) is not None
    assert agreeing_pair([a, far], tolerance_for("perplexity")) is None
    assert agreeing_pair([a, near], tolerance_for("unknown")) is None  # exact
    raw = [Result(1, "s" * 64, None), Result(2, "s" * 64, None), Result(3, "t" * 64, None)]
    assert agreeing_pair(raw, tolerance_for("selftest")) == (raw[0], raw[1])
    assert agreeing_pair([raw[0], a], tolerance_for("perplexity")) is None


def test_a_node_quarantined_for_hops_is_quarantined_from_jobs(database: Database) -> None:
    from tests.tracker_service.routing_fixtures import node_row
    from tracker_service.store.job_checks import is_quarantined
    from tracker_service.store.quarantine import quarantine_node

    with database.sessions.begin() as session:
        session.add(node_row(0, 2, node_id="d" * 32))
    with database.sessions.begin() as session:
        assert is_quarantined(session, "d" * 32) is None
        quarantine_node(session, "d" * 32, reason="lied at hop 1", evidence={})
    with database.session() as session:
        reason = is_quarantined(session, "d" * 32)
    assert reason is not None and "lied at hop 1" in reason
