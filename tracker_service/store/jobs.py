"""The job queue's transactions: submit, claim, heartbeat, complete, fail, checkpoints.

Every function runs inside the caller's transaction and either changes rows or
raises :class:`QueueRefusal`; a refusal changes nothing. A task row carries its
current lease (id, deadline, node); a lease id that no longer matches the row,
or whose deadline has passed, is *lost*: its heartbeats answer 410 and its
completion is refused, so a late or duplicate result can never be committed.

Claims take the oldest claimable task with ``FOR UPDATE SKIP LOCKED`` on
PostgreSQL (replicas never hand out the same task); SQLite serialises writers.
A completion is recorded and judged by ``store/job_checks.py`` (checked work):
a task runs in rounds, each under its own output prefix, and an executor never
claims a task it already returned a result for.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import exists, func, or_, select, update
from sqlalchemy.orm import Session

from tracker_service.errors import QueueRefusal
from tracker_service.store.job_checks import (
    CheckPolicy,
    JobPayer,
    checks_tied_to,
    is_quarantined,
    record_result,
)
from tracker_service.store.job_tables import (
    FAILED,
    LEASED,
    QUEUED,
    RUNNING,
    SUCCEEDED,
    Artifact,
    Job,
    JobCheckpoint,
    JobExecutor,
    JobResult,
    JobTask,
)

BACKOFF_BASE_S = 2.0
_CLAIM_RETRIES = 16
BACKOFF_MAX_S = 300.0

# Refusal reasons (the routes map them to HTTP statuses).
LEASE_LOST = "lease-lost"
COMPLETION_REFUSED = "completion-refused"
UNKNOWN_JOB = "unknown-job"
BAD_CHECKPOINT = "bad-checkpoint"
MISSING_ARTIFACT = "missing-artifact"
JOB_QUARANTINED = "job-quarantined"
# A check round writes under this folder of the task's prefix; no other round may.
CHECK_FOLDER = "check-"


@dataclass(frozen=True)
class JobSpec:
    workload: str
    params: dict[str, Any]
    inputs: dict[str, str]
    unpack_inputs: list[str]
    tasks: int
    checkpoint: bool
    max_attempts: int
    lease_s: float
    timeout_s: float


def output_prefix(job_id: str, task_id: str, round_: int = 0) -> str:
    """Where a round of a task writes: the task's folder for the first run, and
    ``check-<round>/`` inside it for each check."""
    base = f"jobs/{job_id}/{task_id}/"
    return base if round_ == 0 else f"{base}{CHECK_FOLDER}{round_}/"


def lease_may_write(job_id: str, task: JobTask, key: str) -> bool:
    """A lease writes under its round's prefix only; the first run never into a check's."""
    prefix = output_prefix(job_id, task.task_id, task.round)
    if not key.startswith(prefix):
        return False
    return task.round > 0 or not key[len(prefix) :].startswith(CHECK_FOLDER)


def backoff_s(attempts: int) -> float:
    """Seconds a failed task waits before it is claimable again: doubling, capped."""
    return float(min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2 ** max(0, attempts - 1)))


def new_id() -> str:
    return secrets.token_hex(16)


def submit_job(session: Session, spec: JobSpec, *, submitter_id: int | None, now: float) -> Job:
    missing = [name for name, key in spec.inputs.items() if session.get(Artifact, key) is None]
    if missing:
        raise QueueRefusal(
            MISSING_ARTIFACT,
            f"inputs {sorted(missing)} name artifacts the tracker does not hold; upload them first",
        )
    job = Job(
        job_id=new_id(),
        workload=spec.workload,
        params=spec.params,
        inputs=spec.inputs,
        unpack_inputs=spec.unpack_inputs,
        checkpoint=spec.checkpoint,
        state=QUEUED,
        task_count=spec.tasks,
        max_attempts=spec.max_attempts,
        lease_s=spec.lease_s,
        timeout_s=spec.timeout_s,
        submitter_id=submitter_id,
        created_at=now,
    )
    session.add(job)
    for index in range(spec.tasks):
        session.add(
            JobTask(
                task_id=new_id(),
                job_id=job.job_id,
                index=index,
                state=QUEUED,
                attempts=0,
                not_before=0.0,
                last_error="",
            )
        )
    session.flush()
    return job


def _requeue_or_fail(task: JobTask, job: Job, error: str, now: float) -> None:
    """The attempt failed: retry after a backoff, or give up after max attempts."""
    task.last_error = error[:2000]
    task.lease_id = None
    task.lease_deadline = None
    if task.attempts >= job.max_attempts:
        task.state = FAILED
        task.finished_at = now
    else:
        task.state = QUEUED
        task.not_before = now + backoff_s(task.attempts)


def expire_leases(session: Session, *, now: float) -> int:
    """Leases past their deadline end their attempt (requeue at once, or fail after the
    last attempt); returns how many. Compare-and-set on the lease id, so a completion
    that won the race is never overwritten."""
    rows = session.execute(
        select(JobTask.task_id, JobTask.lease_id, JobTask.attempts, JobTask.node_id, Job)
        .join(Job, Job.job_id == JobTask.job_id)
        .where(JobTask.state == LEASED, JobTask.lease_deadline < now)
    ).all()
    expired = 0
    for task_id, lease_id, attempts, node_id, job in rows:
        give_up = attempts >= job.max_attempts
        won = session.execute(
            update(JobTask)
            .where(
                JobTask.task_id == task_id, JobTask.lease_id == lease_id, JobTask.state == LEASED
            )
            .values(
                state=FAILED if give_up else QUEUED,
                last_error=f"lease expired on node {node_id} (attempt {attempts})",
                lease_id=None,
                lease_deadline=None,
                not_before=now,
                finished_at=now if give_up else None,
            )
            .execution_options(synchronize_session=False)
        )
        if _rowcount(won) == 1:
            expired += 1
            _refresh_job_state(session, job, now)
    return expired


def another_executor_live(session: Session, node_id: str, *, since: float) -> bool:
    """Has an executor other than `node_id` been seen since `since`?"""
    row = session.execute(
        select(JobExecutor.node_id)
        .where(JobExecutor.node_id != node_id, JobExecutor.last_seen_at >= since)
        .limit(1)
    ).first()
    return row is not None


def claim_task(
    session: Session,
    node_id: str,
    *,
    now: float,
    cooldown_s: float = 0.0,
    live_since: float | None = None,
) -> tuple[JobTask, Job] | None:
    """Lease the oldest claimable task to `node_id`; None when the queue is empty.

    A task whose last attempt failed or expired on `node_id` is skipped for
    `cooldown_s` after its retry backoff, while another executor has been seen
    since `live_since`: it goes elsewhere instead of straight back to the machine
    that just failed it. With no other executor the cool-down does not apply.

    The lease is taken with a compare-and-set UPDATE (state still queued, attempts
    unchanged): SQLite's driver reads outside the write transaction, so two claims
    can pick the same row, and only the one whose UPDATE matches wins it.
    """
    expire_leases(session, now=now)
    claimable = [
        JobTask.state == QUEUED,
        JobTask.not_before <= now,
        # Checked work needs independent executors: never one that already answered.
        ~exists().where(JobResult.task_id == JobTask.task_id, JobResult.node_id == node_id),
    ]
    tied = checks_tied_to(session, node_id)
    if tied:  # nor one tied to an executor that already answered
        claimable.append(JobTask.task_id.not_in(tied))
    if (
        cooldown_s > 0
        and live_since is not None
        and another_executor_live(session, node_id, since=live_since)
    ):
        claimable.append(
            or_(
                JobTask.node_id.is_(None),
                JobTask.node_id != node_id,
                JobTask.not_before <= now - cooldown_s,
            )
        )
    for _ in range(_CLAIM_RETRIES):
        row = session.execute(
            select(JobTask.task_id, JobTask.attempts, Job.lease_s)
            .join(Job, Job.job_id == JobTask.job_id)
            .where(*claimable)
            .order_by(Job.created_at, JobTask.index)
            .limit(1)
            .with_for_update(skip_locked=True, of=JobTask)
        ).first()
        if row is None:
            return None
        task_id, attempts, lease_s = row
        won = session.execute(
            update(JobTask)
            .where(
                JobTask.task_id == task_id,
                JobTask.state == QUEUED,
                JobTask.attempts == attempts,
            )
            .values(
                state=LEASED,
                attempts=attempts + 1,
                lease_id=secrets.token_hex(16),
                lease_deadline=now + lease_s,
                node_id=node_id,
                claimed_at=now,
            )
            .execution_options(synchronize_session=False)
        )
        if _rowcount(won) == 1:
            task = session.get(JobTask, task_id, populate_existing=True)
            assert task is not None
            job = session.get(Job, task.job_id)
            assert job is not None
            if job.state == QUEUED:
                job.state = RUNNING
            session.flush()
            return task, job
    return None


def _rowcount(result: Any) -> int:
    count: int = result.rowcount
    return count


def _current_lease(session: Session, lease_id: str, now: float) -> tuple[JobTask, Job]:
    row = session.execute(
        select(JobTask, Job)
        .join(Job, Job.job_id == JobTask.job_id)
        .where(JobTask.lease_id == lease_id)
        .with_for_update(of=JobTask)
    ).first()
    if row is None:
        raise QueueRefusal(
            LEASE_LOST,
            "this lease is no longer current (superseded, finished or never issued); "
            "discard the result and claim new work",
        )
    task, job = row
    if task.state != LEASED or task.lease_deadline is None or task.lease_deadline < now:
        raise QueueRefusal(
            LEASE_LOST,
            "this lease expired before it was renewed; discard the result and claim new work",
        )
    return task, job


def lease_for_upload(session: Session, lease_id: str, *, now: float) -> JobTask:
    """The task whose current lease is `lease_id` (uploads go under its prefix)."""
    return _current_lease(session, lease_id, now)[0]


def heartbeat_lease(session: Session, lease_id: str, node_id: str, *, now: float) -> float:
    """Renew a current lease held by `node_id`; returns the new deadline."""
    task, job = _current_lease(session, lease_id, now)
    _check_holder(task, node_id)
    task.lease_deadline = now + job.lease_s
    return task.lease_deadline


def _check_holder(task: JobTask, node_id: str) -> None:
    if task.node_id != node_id:
        raise QueueRefusal(LEASE_LOST, "this lease belongs to another node")


def complete_task(
    session: Session,
    lease_id: str,
    node_id: str,
    metrics_sha256: str,
    *,
    now: float,
    metrics: Any = None,
    policy: CheckPolicy | None = None,
    pay: JobPayer,
) -> JobTask:
    """Record a result once (`metrics`: the parsed metrics.json, None when not JSON) and
    judge it under `policy` (``store/job_checks.py``). A lost, late or repeated completion
    raises and changes nothing."""
    try:
        task, job = _current_lease(session, lease_id, now)
        _check_holder(task, node_id)
    except QueueRefusal as exc:
        raise QueueRefusal(COMPLETION_REFUSED, exc.message) from exc
    quarantined = is_quarantined(session, node_id)
    if quarantined is not None:
        raise QueueRefusal(
            JOB_QUARANTINED, f"this executor is quarantined from jobs: {quarantined}"
        )
    key = output_prefix(job.job_id, task.task_id, task.round) + "metrics.json"
    uploaded = session.get(Artifact, key)
    if uploaded is None or uploaded.sha256 != metrics_sha256:
        raise QueueRefusal(
            MISSING_ARTIFACT,
            f"no uploaded {key} with SHA-256 {metrics_sha256}; upload metrics.json first",
        )
    # Compare-and-set: only the current lease's completion goes on to be recorded.
    won = session.execute(
        update(JobTask)
        .where(
            JobTask.task_id == task.task_id, JobTask.lease_id == lease_id, JobTask.state == LEASED
        )
        .values(lease_id=None, lease_deadline=None)
        .execution_options(synchronize_session=False)
    )
    if _rowcount(won) != 1:
        raise QueueRefusal(COMPLETION_REFUSED, "the lease ended while this completion was checked")
    session.refresh(task)
    # Credit is paid (``pay``) in the same commit, only for checked or unsampled work.
    record_result(
        session,
        task,
        job,
        node_id,
        metrics_sha256,
        metrics,
        policy or CheckPolicy(),
        now=now,
        pay=pay,
    )
    session.flush()
    _refresh_job_state(session, job, now)
    return task


def fail_task(session: Session, lease_id: str, node_id: str, error: str, *, now: float) -> JobTask:
    task, job = _current_lease(session, lease_id, now)
    _check_holder(task, node_id)
    _requeue_or_fail(task, job, error, now)
    _refresh_job_state(session, job, now)
    return task


def _refresh_job_state(session: Session, job: Job, now: float) -> None:
    counts = dict(
        session.execute(
            select(JobTask.state, func.count())
            .where(JobTask.job_id == job.job_id)
            .group_by(JobTask.state)
        ).all()
    )
    active = counts.get(QUEUED, 0) + counts.get(LEASED, 0)
    if active:
        job.state = RUNNING
        return
    job.state = FAILED if counts.get(FAILED, 0) else SUCCEEDED
    job.finished_at = job.finished_at or now


def register_checkpoint_part(
    session: Session, lease_id: str, node_id: str, step: int, part: dict[str, Any], *, now: float
) -> None:
    task, job = _current_lease(session, lease_id, now)
    _check_holder(task, node_id)
    _check_part(session, job, task, part)
    session.add(
        JobCheckpoint(
            task_id=task.task_id,
            step=step,
            lease_id=lease_id,
            parts=[part],
            manifest_uri="",
            committed=False,
            created_at=now,
            round=task.round,
        )
    )


def _check_part(session: Session, job: Job, task: JobTask, part: dict[str, Any]) -> None:
    prefix = output_prefix(job.job_id, task.task_id, task.round)
    key = str(part.get("key", ""))
    artifact = session.get(Artifact, key)
    if (
        not lease_may_write(job.job_id, task, key)
        or artifact is None
        or artifact.sha256 != part.get("sha256")
    ):
        raise QueueRefusal(
            BAD_CHECKPOINT,
            f"checkpoint part {key!r} is not an uploaded artifact under {prefix} with that SHA-256",
        )


def commit_checkpoint(
    session: Session,
    lease_id: str,
    node_id: str,
    step: int,
    parts: Sequence[dict[str, Any]],
    manifest_uri: str,
    *,
    now: float,
) -> None:
    """Commit a manifest whose every part was registered by this lease at this step."""
    task, job = _current_lease(session, lease_id, now)
    _check_holder(task, node_id)
    registered = {
        str(p.get("key"))
        for row in session.execute(
            select(JobCheckpoint).where(
                JobCheckpoint.task_id == task.task_id,
                JobCheckpoint.lease_id == lease_id,
                JobCheckpoint.step == step,
                JobCheckpoint.committed.is_(False),
            )
        ).scalars()
        for p in row.parts
    }
    if not parts:
        raise QueueRefusal(BAD_CHECKPOINT, "a checkpoint manifest needs at least one part")
    for part in parts:
        _check_part(session, job, task, dict(part))
        if str(part.get("key")) not in registered:
            raise QueueRefusal(
                BAD_CHECKPOINT,
                f"part {part.get('key')!r} was not registered for step {step}; register it first",
            )
    session.add(
        JobCheckpoint(
            task_id=task.task_id,
            step=step,
            lease_id=lease_id,
            parts=[dict(p) for p in parts],
            manifest_uri=manifest_uri,
            committed=True,
            created_at=now,
            round=task.round,
        )
    )


def latest_checkpoint(session: Session, task_id: str, round_: int = 0) -> JobCheckpoint | None:
    """The newest committed checkpoint of the task's round `round_`: a check never
    resumes from the run it checks."""
    return session.execute(
        select(JobCheckpoint)
        .where(
            JobCheckpoint.task_id == task_id,
            JobCheckpoint.committed.is_(True),
            JobCheckpoint.round == round_,
        )
        .order_by(JobCheckpoint.step.desc(), JobCheckpoint.id.desc())
        .limit(1)
    ).scalar_one_or_none()


def get_job(session: Session, job_id: str) -> tuple[Job, Sequence[JobTask]]:
    job = session.get(Job, job_id)
    if job is None:
        raise QueueRefusal(UNKNOWN_JOB, f"no job {job_id!r} on this tracker")
    tasks = (
        session.execute(select(JobTask).where(JobTask.job_id == job_id).order_by(JobTask.index))
        .scalars()
        .all()
    )
    return job, tasks


def list_jobs(session: Session, limit: int = 200) -> Sequence[Job]:
    return session.execute(select(Job).order_by(Job.created_at.desc()).limit(limit)).scalars().all()


def task_counts(session: Session, job_ids: Sequence[str]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {job_id: {} for job_id in job_ids}
    if not job_ids:
        return counts
    for job_id, state, n in session.execute(
        select(JobTask.job_id, JobTask.state, func.count())
        .where(JobTask.job_id.in_(list(job_ids)))
        .group_by(JobTask.job_id, JobTask.state)
    ).all():
        counts[job_id][state] = int(n)
    return counts


def artifacts_under(session: Session, prefix: str) -> Sequence[Artifact]:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return (
        session.execute(
            select(Artifact)
            .where(Artifact.key.like(escaped + "%", escape="\\"))
            .order_by(Artifact.key)
        )
        .scalars()
        .all()
    )
