"""The batch queue's use cases: submit and read jobs, enrol executors, lease, complete,
fail and checkpoint tasks (docs/jobs.md).

Each runs in the caller's transaction (api/routes/jobs.py runs one per request and
turns a :class:`QueueRefusal` into its HTTP status); the store persists.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session

from tracker_service import errors
from tracker_service.errors import QueueRefusal
from tracker_service.services.credit_policy import pay_job_credit
from tracker_service.services.registration import check_join_token
from tracker_service.store import jobs as queue
from tracker_service.store.artifacts import BlobStore
from tracker_service.store.executors import register_executor, touch_executor
from tracker_service.store.job_checks import CheckPolicy, is_quarantined
from tracker_service.store.job_tables import Artifact, Job, JobCheckpoint, JobTask
from tracker_service.store.jobs import (
    BAD_CHECKPOINT,
    COMPLETION_REFUSED,
    JOB_QUARANTINED,
    LEASE_LOST,
    MISSING_ARTIFACT,
    UNKNOWN_JOB,
    JobSpec,
    output_prefix,
)

__all__ = [
    "BAD_CHECKPOINT",
    "COMPLETION_REFUSED",
    "JOB_QUARANTINED",
    "LEASE_LOST",
    "MISSING_ARTIFACT",
    "UNKNOWN_JOB",
    "BlobStore",
    "CheckPolicy",
    "Job",
    "JobSpec",
    "JobTask",
    "output_prefix",
]

EXECUTOR_LIVE_BEATS = 3


def submit(
    session: Session, spec: JobSpec, *, submitter_id: int, now: float
) -> tuple[Job, Sequence[JobTask]]:
    """Queue a job; every input must already be uploaded."""
    job = queue.submit_job(session, spec, submitter_id=submitter_id, now=now)
    return queue.get_job(session, job.job_id)


def jobs_with_counts(session: Session, *, now: float) -> list[tuple[Job, dict[str, int]]]:
    """Every job with its tasks counted per state (expired leases given back first)."""
    queue.expire_leases(session, now=now)
    rows = queue.list_jobs(session)
    counts = queue.task_counts(session, [j.job_id for j in rows])
    return [(j, counts[j.job_id]) for j in rows]


def job_detail(
    session: Session, job_id: str, *, now: float
) -> tuple[Job, Sequence[JobTask], dict[str, int]]:
    """One job, its tasks and their counts per state (expired leases given back first)."""
    queue.expire_leases(session, now=now)
    job, tasks = queue.get_job(session, job_id)
    return job, tasks, queue.task_counts(session, [job_id])[job_id]


def outputs_of(session: Session, job_id: str, task_id: str) -> Sequence[Artifact]:
    """The artifacts a task uploaded under its output prefix."""
    return queue.artifacts_under(session, output_prefix(job_id, task_id))


def enrol(
    session: Session,
    node_id: str,
    public_key: str,
    *,
    private: bool,
    join_token: str | None,
    ttl_s: float,
    now: float,
) -> tuple[str, float]:
    """An executor's session (token, expiry). A private tracker needs the join token a
    node needs to register; a node quarantined from jobs is refused."""
    if private:
        check_join_token(session, join_token, now, node_id)
    refuse_quarantined(session, node_id)
    return register_executor(session, node_id, public_key, now=now, ttl_s=ttl_s)


def refuse_quarantined(session: Session, node_id: str) -> None:
    reason = is_quarantined(session, node_id)
    if reason is not None:
        raise QueueRefusal(
            JOB_QUARANTINED,
            f"this node is quarantined from jobs ({reason}); it gets no more batch work",
        )


def check_policy(share: float, probation_tasks: int) -> CheckPolicy:
    return CheckPolicy(share=share, probation_tasks=probation_tasks)


def touch(session: Session, node_id: str, *, now: float) -> bool:
    """An executor's liveness; False when the tracker does not know it."""
    return touch_executor(session, node_id, now=now)


def claim(
    session: Session, node_id: str, *, now: float, cooldown_s: float, heartbeat_s: float
) -> tuple[JobTask, Job] | None:
    """Lease the next claimable task to a known, unquarantined executor (None: no work).
    A task this node just failed goes to another live executor first."""
    if not touch_executor(session, node_id, now=now):
        raise QueueRefusal(
            errors.RE_REGISTER,
            f"executor {node_id} is not registered here; register it first "
            "(POST /api/v1/jobs/executors/register, signed)",
        )
    refuse_quarantined(session, node_id)
    return queue.claim_task(
        session,
        node_id,
        now=now,
        cooldown_s=cooldown_s,
        live_since=now - EXECUTOR_LIVE_BEATS * heartbeat_s,
    )


def renew(session: Session, lease_id: str, node_id: str, *, now: float) -> float:
    return queue.heartbeat_lease(session, lease_id, node_id, now=now)


def complete(
    session: Session,
    lease_id: str,
    node_id: str,
    metrics_sha256: str,
    *,
    now: float,
    metrics: Any,
    policy: CheckPolicy,
) -> JobTask:
    """Record the task's result once (judged under `policy`) and count it to the executor."""
    task = queue.complete_task(
        session,
        lease_id,
        node_id,
        metrics_sha256,
        now=now,
        metrics=metrics,
        policy=policy,
        pay=pay_job_credit,
    )
    touch_executor(session, node_id, now=now, done=1)
    return task


def fail(session: Session, lease_id: str, node_id: str, error: str, *, now: float) -> JobTask:
    return queue.fail_task(session, lease_id, node_id, error, now=now)


def add_checkpoint_part(
    session: Session, lease_id: str, node_id: str, step: int, part: Any, *, now: float
) -> Any:
    return queue.register_checkpoint_part(session, lease_id, node_id, step, part, now=now)


def commit_checkpoint(
    session: Session,
    lease_id: str,
    node_id: str,
    step: int,
    parts: list[Any],
    manifest_uri: str,
    *,
    now: float,
) -> Any:
    return queue.commit_checkpoint(session, lease_id, node_id, step, parts, manifest_uri, now=now)


def latest_checkpoint(session: Session, job_id: str, task_id: str) -> JobCheckpoint | None:
    """The task's newest committed checkpoint, wherever the attempt that wrote it ran."""
    task = session.get(JobTask, task_id)
    if task is None or task.job_id != job_id:
        raise QueueRefusal(UNKNOWN_JOB, f"no task {task_id!r} in job {job_id!r}")
    return queue.latest_checkpoint(session, task_id, task.round)
