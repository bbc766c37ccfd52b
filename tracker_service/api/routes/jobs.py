"""The batch-job queue over HTTP: submit and read (submitters), register, claim,
lease heartbeat, complete, fail and checkpoints (executor nodes).

Every queue change is one transaction (the use cases in ``services/job_queue.py``,
persisted by ``store/jobs.py``); a refusal there changes nothing and is answered
here: 410 for a lost lease (its holder must throw the result away), 409 for a
refused completion, 404/422 for bad names.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from tracker_service import errors
from tracker_service.api.deps import Context, SignedRegistration, TrackerContext
from tracker_service.api.job_settings import JobSettings, jobs_state
from tracker_service.api.routes import error_responses, parse_body, refuse, signed_body
from tracker_service.api.routes.jobs_auth import ExecutorDep, SubmitterDep
from tracker_service.api.schemas.jobs import (
    CheckpointCommitCreate,
    CheckpointPartCreate,
    CheckpointPublic,
    CompleteCreate,
    ExecutorRegister,
    ExecutorSession,
    FailCreate,
    JobCreate,
    JobCreated,
    JobList,
    JobPublic,
    LeasePublic,
    LeaseRenewed,
    TaskOutcome,
    TaskPublic,
)
from tracker_service.domain.wire import HEADER_JOIN_TOKEN
from tracker_service.errors import QueueRefusal
from tracker_service.services import job_queue as queue
from tracker_service.services.job_queue import BlobStore, CheckPolicy, Job, JobTask

router = APIRouter(prefix="/api/v1/jobs", tags=["jobs"])
T = TypeVar("T")
# An executor seen within this many heartbeat intervals counts as live (claim cool-down).

_STATUS = {
    queue.LEASE_LOST: 410,
    queue.COMPLETION_REFUSED: 409,
    queue.UNKNOWN_JOB: 404,
    queue.BAD_CHECKPOINT: 422,
    queue.MISSING_ARTIFACT: 422,
    queue.JOB_QUARANTINED: 403,
    errors.RE_REGISTER: 401,
}


# _in_transaction maps any queue refusal (unknown job, lost lease, refused
# completion, bad checkpoint, else 400) and every route authenticates (401).
QUEUE_REFUSALS = error_responses(400, 401, 403, 404, 409, 410, 422)


async def _in_transaction(context: TrackerContext, fn: Callable[..., T], *args: Any) -> T:
    """Run `fn(session, *args)` in one transaction off the event loop; refusals to HTTP."""

    def work() -> T:
        with context.database.sessions.begin() as session:
            return fn(session, *args)

    try:
        return await run_in_threadpool(work)
    except QueueRefusal as exc:
        raise refuse(_STATUS.get(exc.reason, 400), exc.reason, exc.message) from exc


def job_public(
    job: Job, tasks: list[JobTask] | None = None, counts: dict[str, int] | None = None
) -> JobPublic:
    return JobPublic(
        job_id=job.job_id,
        workload=job.workload,
        state=job.state,
        params=job.params,
        inputs=job.inputs,
        unpack_inputs=job.unpack_inputs,
        checkpoint=job.checkpoint,
        task_count=job.task_count,
        max_attempts=job.max_attempts,
        created_at=job.created_at,
        finished_at=job.finished_at,
        counts=counts or {},
        tasks=[
            TaskPublic(
                task_id=t.task_id,
                index=t.index,
                state=t.state,
                attempts=t.attempts,
                node_id=t.node_id,
                error=t.last_error,
                lease_deadline=t.lease_deadline,
                finished_at=t.finished_at,
                checked=t.needs_check,
                round=t.round,
                result_prefix=None
                if t.result_round is None
                else queue.output_prefix(job.job_id, t.task_id, t.result_round),
            )
            for t in tasks or []
        ],
    )


@router.post("", response_model=JobCreated, responses=QUEUE_REFUSALS)
async def submit(body: JobCreate, context: Context, submitter_id: SubmitterDep) -> JobCreated:
    """Queue a job of `tasks` identical tasks; every input must already be uploaded."""
    spec = queue.JobSpec(
        workload=body.workload,
        params=body.params,
        inputs=body.inputs,
        unpack_inputs=body.unpack_inputs,
        tasks=body.tasks,
        checkpoint=body.checkpoint,
        max_attempts=body.max_attempts,
        lease_s=body.lease_seconds,
        timeout_s=body.timeout_seconds,
    )

    def create(session: Any) -> JobCreated:
        job, tasks = queue.submit(session, spec, submitter_id=submitter_id, now=time.time())
        return JobCreated(job_id=job.job_id, task_ids=[t.task_id for t in tasks])

    return await _in_transaction(context, create)


@router.get("", response_model=JobList, responses=QUEUE_REFUSALS)
async def list_all(context: Context, _submitter: SubmitterDep) -> JobList:
    def read(session: Any) -> JobList:
        rows = queue.jobs_with_counts(session, now=time.time())
        return JobList(jobs=[job_public(j, counts=counts) for j, counts in rows])

    return await _in_transaction(context, read)


@router.get("/{job_id}", response_model=JobPublic, responses=QUEUE_REFUSALS)
async def show(job_id: str, context: Context, _submitter: SubmitterDep) -> JobPublic:
    """A job with each task's state, attempts, node, error and uploaded outputs."""

    def read(session: Any) -> JobPublic:
        job, tasks, counts = queue.job_detail(session, job_id, now=time.time())
        public = job_public(job, list(tasks), counts)
        for task in public.tasks:
            task.outputs = [
                {"key": a.key, "sha256": a.sha256, "size_bytes": a.size_bytes}
                for a in queue.outputs_of(session, job_id, task.task_id)
            ]
        return public

    return await _in_transaction(context, read)


@router.post(
    "/executors/register",
    response_model=ExecutorSession,
    responses=QUEUE_REFUSALS,
    openapi_extra=signed_body(ExecutorRegister),
)
async def register(
    request: Request, context: Context, signed: SignedRegistration
) -> ExecutorSession:
    """A node announces itself as an executor (signed, key in the body); returns a session.

    On a private tracker it needs the credential a node needs to register: a join token
    (one an invite gave serves only its own node). A node quarantined from jobs is refused."""
    body = parse_body(ExecutorRegister, signed.body)
    settings = jobs_state(request).settings
    join_token = request.headers.get(HEADER_JOIN_TOKEN)

    def enrol(session: Any) -> tuple[str, float]:
        return queue.enrol(
            session,
            signed.node_id,
            body.public_key,
            private=context.settings.private,
            join_token=join_token,
            ttl_s=settings.executor_session_ttl_s,
            now=time.time(),
        )

    token, expires = await _in_transaction(context, enrol)
    context.public_keys.put(signed.node_id, signed.public_key)
    return ExecutorSession(
        node_id=signed.node_id,
        session_token=token,
        session_expires_at=expires,
        heartbeat_interval_s=settings.executor_heartbeat_s,
    )


def check_policy(settings: JobSettings) -> CheckPolicy:
    return queue.check_policy(settings.check_share, settings.probation_tasks)


def _read_metrics(blobs: BlobStore, sha256: str, max_bytes: int) -> Any:
    """The parsed metrics.json a completion names, or None (absent, too large, not JSON):
    such a result agrees with another only byte for byte."""
    path = blobs.path_of(sha256) if len(sha256) == 64 else None
    try:
        if path is None or path.stat().st_size > max_bytes:
            return None
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


@router.post("/executors/{node_id}/heartbeat", responses=QUEUE_REFUSALS)
async def executor_heartbeat(node_id: str, context: Context, caller: ExecutorDep) -> dict[str, Any]:
    """Liveness of an executor; 401 re-register when the tracker does not know it."""
    if caller != node_id:
        raise refuse(401, errors.NODE_ID_MISMATCH, f"the request is from {caller}, not {node_id}")
    known = await _in_transaction(context, lambda s: queue.touch(s, node_id, now=time.time()))
    if not known:
        raise refuse(
            401, errors.RE_REGISTER, f"executor {node_id} is not registered here; register again"
        )
    return {"node_id": node_id, "ok": True}


@router.post(
    "/claim",
    response_model=LeasePublic,
    responses={204: {"description": "no work"}, **QUEUE_REFUSALS},
)
async def claim(request: Request, context: Context, node_id: ExecutorDep) -> Any:
    """Lease the next claimable task to the calling node; 204 when there is none.

    A task this node just failed goes to another live executor first (the
    ``failed_executor_cooldown_s`` setting)."""
    settings = jobs_state(request).settings

    def take(session: Any) -> LeasePublic | None:
        claimed = queue.claim(
            session,
            node_id,
            now=time.time(),
            cooldown_s=settings.failed_executor_cooldown_s,
            heartbeat_s=settings.executor_heartbeat_s,
        )
        if claimed is None:
            return None
        task, job = claimed
        assert task.lease_id is not None and task.lease_deadline is not None
        return LeasePublic(
            lease_id=task.lease_id,
            job_id=job.job_id,
            task_id=task.task_id,
            attempt_number=task.attempts,
            deadline=task.lease_deadline,
            lease_seconds=job.lease_s,
            payload={
                "task_id": task.task_id,
                "task_index": task.index,
                "workload": job.workload,
                "params": job.params,
                "inputs": {k: f"artifact://{v}" for k, v in job.inputs.items()},
                "unpack_inputs": job.unpack_inputs,
                "checkpoint": {} if job.checkpoint else None,
                "output_prefix": queue.output_prefix(job.job_id, task.task_id, task.round),
                "timeout_seconds": job.timeout_s,
            },
        )

    lease = await _in_transaction(context, take)
    if lease is None:
        return Response(status_code=204)
    return lease


@router.post("/leases/{lease_id}/heartbeat", response_model=LeaseRenewed, responses=QUEUE_REFUSALS)
async def lease_heartbeat(lease_id: str, context: Context, node_id: ExecutorDep) -> LeaseRenewed:
    """Renew a lease; 410 once it expired or was superseded (stop and discard the result)."""
    deadline = await _in_transaction(
        context, lambda s: queue.renew(s, lease_id, node_id, now=time.time())
    )
    return LeaseRenewed(lease_id=lease_id, deadline=deadline)


@router.post("/leases/{lease_id}/complete", response_model=TaskOutcome, responses=QUEUE_REFUSALS)
async def complete(
    lease_id: str, body: CompleteCreate, request: Request, context: Context, node_id: ExecutorDep
) -> TaskOutcome:
    """Record the task's result once; a late or repeated completion is 409 and changes nothing.
    A checked task goes on to another executor (``state`` queued) until two results agree."""

    state = jobs_state(request)
    policy = check_policy(state.settings)

    def commit(session: Any) -> TaskOutcome:
        now = time.time()
        metrics = _read_metrics(state.blobs, body.metrics_sha256, state.settings.metrics_max_bytes)
        task = queue.complete(
            session, lease_id, node_id, body.metrics_sha256, now=now, metrics=metrics, policy=policy
        )
        return TaskOutcome(
            task_id=task.task_id, state=task.state, attempts=task.attempts, accepted=True
        )

    return await _in_transaction(context, commit)


@router.post("/leases/{lease_id}/fail", response_model=TaskOutcome, responses=QUEUE_REFUSALS)
async def fail(
    lease_id: str, body: FailCreate, context: Context, node_id: ExecutorDep
) -> TaskOutcome:
    """End the attempt with an error: requeued with backoff, or failed after max attempts."""

    def record(session: Any) -> TaskOutcome:
        task = queue.fail(session, lease_id, node_id, body.error, now=time.time())
        return TaskOutcome(
            task_id=task.task_id, state=task.state, attempts=task.attempts, accepted=False
        )

    return await _in_transaction(context, record)


@router.post("/leases/{lease_id}/checkpoints/parts", responses=QUEUE_REFUSALS)
async def checkpoint_part(
    lease_id: str, body: CheckpointPartCreate, context: Context, node_id: ExecutorDep
) -> dict[str, Any]:
    part = body.part.model_dump()
    await _in_transaction(
        context,
        lambda s: queue.add_checkpoint_part(s, lease_id, node_id, body.step, part, now=time.time()),
    )
    return {"registered": True, "step": body.step}


@router.post("/leases/{lease_id}/checkpoints/commit", responses=QUEUE_REFUSALS)
async def checkpoint_commit(
    lease_id: str, body: CheckpointCommitCreate, context: Context, node_id: ExecutorDep
) -> dict[str, Any]:
    parts = [p.model_dump() for p in body.parts]
    await _in_transaction(
        context,
        lambda s: queue.commit_checkpoint(
            s, lease_id, node_id, body.step, parts, body.manifest_uri, now=time.time()
        ),
    )
    return {"committed": True, "step": body.step}


@router.get(
    "/{job_id}/tasks/{task_id}/checkpoints/latest",
    response_model=CheckpointPublic,
    responses={204: {"description": "no checkpoint yet"}, **QUEUE_REFUSALS},
)
async def checkpoint_latest(job_id: str, task_id: str, context: Context, _node: ExecutorDep) -> Any:
    """The task's newest committed checkpoint, wherever the attempt that wrote it ran."""

    def read(session: Any) -> CheckpointPublic | None:
        row = queue.latest_checkpoint(session, job_id, task_id)
        if row is None:
            return None
        return CheckpointPublic(
            task_id=task_id,
            step=row.step,
            parts=row.parts,
            manifest_uri=row.manifest_uri,
            created_at=row.created_at,
        )

    found = await _in_transaction(context, read)
    return Response(status_code=204) if found is None else found
