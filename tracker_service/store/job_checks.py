"""Checked work: a task's credit is paid only when its result is checked.

Runs inside :func:`tracker_service.store.jobs.complete_task`'s transaction. Each
completion records the executor's result (a ``job_results`` row, unpaid). A task
that is not checked succeeds and pays at once. A checked task (a sampled share
of tasks, and every task of an executor on probation) is requeued for another
executor; it succeeds and pays both only when two results of distinct executors
agree within the workload's tolerance (``domain/job_checks.py``). A
disagreement goes to a third executor: the agreeing pair is paid, and the
minority's executor is quarantined from jobs, its pending results rejected
unpaid and its current leases taken back. Three results with no agreeing pair
fail the task and pay no one. docs/jobs.md#checked-work states the same rules.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from tracker_service.domain.job_checks import Result, agreeing_pair, tolerance_for
from tracker_service.store.independence import identity_standings, independent
from tracker_service.store.job_tables import (
    FAILED,
    LEASED,
    QUEUED,
    RESULT_PAID,
    RESULT_PENDING,
    RESULT_REJECTED,
    SUCCEEDED,
    Job,
    JobExecutor,
    JobResult,
    JobTask,
)
from tracker_service.store.tables import NODE_BANNED, NODE_QUARANTINED, Node

log = logging.getLogger(__name__)
_DRAW = random.SystemRandom()
# Results of distinct executors a checked task may collect before it is failed.
MAX_RESULTS = 3


@dataclass(frozen=True)
class CheckPolicy:
    """``share``: the fraction of tasks checked at random; ``probation_tasks``: how many
    confirmed results an executor needs before its tasks are only sampled."""

    share: float = 0.1
    probation_tasks: int = 3
    draw: Callable[[], float] = field(default=_DRAW.random)


NO_CHECKS = CheckPolicy(share=0.0, probation_tasks=0)


# What pays a checked result's executor, in the completion's own transaction (so a
# result and its credit commit together): services/credit_policy.py:pay_job_credit.
JobPayer = Callable[[Session, str, float], None]


def on_probation(session: Session, node_id: str, policy: CheckPolicy) -> bool:
    if policy.probation_tasks <= 0:
        return False
    executor = session.get(JobExecutor, node_id)
    return executor is None or executor.checks_passed < policy.probation_tasks


def is_quarantined(session: Session, node_id: str) -> str | None:
    """The reason `node_id` is quarantined from jobs, or None. A node the tracker banned
    or quarantined for lying in hop audits gets no batch work either."""
    executor = session.get(JobExecutor, node_id)
    if executor is not None and executor.quarantined_at is not None:
        return executor.quarantine_reason or "outvoted in a job check"
    node = session.get(Node, node_id)
    if node is not None and node.state in (NODE_BANNED, NODE_QUARANTINED):
        return f"the node is {node.state}: {node.state_reason}"
    return None


def record_result(
    session: Session,
    task: JobTask,
    job: Job,
    node_id: str,
    metrics_sha256: str,
    metrics: Any,
    policy: CheckPolicy,
    *,
    now: float,
    pay: JobPayer,
) -> None:
    """Record `node_id`'s result for the task's current round and decide the task; the
    executors of a result that stands are paid with ``pay``."""
    session.add(
        JobResult(
            task_id=task.task_id,
            node_id=node_id,
            round=task.round,
            metrics_sha256=metrics_sha256,
            metrics=metrics,
            state=RESULT_PENDING,
            created_at=now,
        )
    )
    session.flush()
    if not task.needs_check and task.round == 0:
        task.needs_check = on_probation(session, node_id, policy) or policy.draw() < policy.share
    live = _pending(session, task.task_id)
    if not task.needs_check:
        _succeed(session, task, live[-1], [live[-1]], now, pay)
        return
    results = [Result(row.id, row.metrics_sha256, row.metrics) for row in live]
    pair = agreeing_pair(results, tolerance_for(job.workload))
    if pair is not None:
        agreed = {pair[0].key, pair[1].key}
        winners = [row for row in live if row.id in agreed]
        _succeed(session, task, winners[0], winners, now, pay)
        for row in live:
            if row.id not in agreed:
                quarantine_executor(
                    session,
                    row.node_id,
                    f"its result for task {task.task_id} disagreed with two other executors",
                    now=now,
                )
        return
    if len(live) >= MAX_RESULTS:
        task.state = FAILED
        task.finished_at = now
        task.last_error = f"{len(live)} executors returned results that disagree; none was paid"
        _clear_lease(task)
        return
    # Not yet two agreeing results: run the task again elsewhere, under a new prefix.
    task.round += 1
    task.attempts = 0
    task.state = QUEUED
    task.not_before = now
    _clear_lease(task)


def _pending(session: Session, task_id: str) -> list[JobResult]:
    return list(
        session.execute(
            select(JobResult)
            .where(JobResult.task_id == task_id, JobResult.state == RESULT_PENDING)
            .order_by(JobResult.id)
        ).scalars()
    )


def _clear_lease(task: JobTask) -> None:
    task.lease_id = None
    task.lease_deadline = None


def _succeed(
    session: Session,
    task: JobTask,
    result: JobResult,
    paid: list[JobResult],
    now: float,
    pay: JobPayer,
) -> None:
    task.state = SUCCEEDED
    task.metrics_sha256 = result.metrics_sha256
    task.result_round = result.round
    task.finished_at = now
    task.last_error = ""
    _clear_lease(task)
    for row in paid:
        row.state = RESULT_PAID
        pay(session, row.node_id, now)
        if task.needs_check:
            executor = session.get(JobExecutor, row.node_id)
            if executor is not None:
                executor.checks_passed += 1


def quarantine_executor(session: Session, node_id: str, reason: str, *, now: float) -> None:
    """No more claims for `node_id`; its unpaid results are rejected and its leases freed."""
    executor = session.get(JobExecutor, node_id)
    if executor is not None and executor.quarantined_at is None:
        executor.quarantined_at = now
        executor.quarantine_reason = reason
    session.execute(
        update(JobResult)
        .where(JobResult.node_id == node_id, JobResult.state == RESULT_PENDING)
        .values(state=RESULT_REJECTED)
        .execution_options(synchronize_session="fetch")
    )
    session.execute(
        update(JobTask)
        .where(JobTask.node_id == node_id, JobTask.state == LEASED)
        .values(state=QUEUED, lease_id=None, lease_deadline=None, not_before=now)
        .execution_options(synchronize_session="fetch")
    )
    log.warning("executor %s quarantined from jobs: %s", node_id, reason)


def checks_tied_to(session: Session, node_id: str) -> list[str]:
    """Queued check rounds `node_id` may not run: a task with a result from an executor
    it is not independent of (shared account, network prefix or invite batch), so a
    sybil cannot confirm its partner's garbage (store/independence.py)."""
    rows = session.execute(
        select(JobResult.task_id, JobResult.node_id)
        .join(JobTask, JobTask.task_id == JobResult.task_id)
        .where(JobTask.state == QUEUED, JobTask.round > 0, JobResult.node_id != node_id)
    ).all()
    if not rows:
        return []
    found = identity_standings(session, [node_id, *(other for _, other in rows)])
    me = found[node_id]
    return sorted({task for task, other in rows if not independent(me, found[other])})
