"""Artifacts over HTTP: PUT verified uploads, GET downloads with their SHA-256.

Who may write where: a submitter writes under ``inputs/``; an executor writes
only under the prefix of the task it holds a *current* lease on (named by
``X-Meshnet-Lease``) and its round (a check writes under ``check-<round>/`` and
reads nothing of the run it checks), so one task can neither overwrite another's
outputs nor keep writing after its lease was lost.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import FileResponse
from starlette.concurrency import run_in_threadpool

from tracker_service.api.deps import Context
from tracker_service.api.job_settings import jobs_state
from tracker_service.api.routes import error_responses, refuse
from tracker_service.api.routes.jobs_auth import ReaderDep, executor_node, submitter
from tracker_service.api.schemas.jobs import ArtifactPublic
from tracker_service.errors import ArtifactRefusal, QueueRefusal
from tracker_service.services import job_artifacts as artifacts
from tracker_service.services.job_artifacts import (
    HEADER_LEASE,
    KEY_LEN,
    KEY_PATTERN,
    WRONG_PREFIX,
    check_key,
    check_sha256,
)

router = APIRouter(prefix="/api/v1/jobs/artifacts", tags=["jobs"])

HEADER_SHA256 = "X-Meshnet-Sha256"
INPUTS_PREFIX = "inputs/"


# The key's rule, documented (not enforced here: check_key answers 400 bad-artifact-key).
ArtifactKey = Annotated[str, Path(json_schema_extra={"pattern": KEY_PATTERN, "maxLength": KEY_LEN})]

# Declared so a client (or a fuzzer) reading the document sends it: without it the
# upload is refused (400 hash-mismatch) before anything else is read.
_SHA256_HEADER = {
    "name": HEADER_SHA256,
    "in": "header",
    "required": True,
    "description": "the SHA-256 of the body, 64 lowercase hex",
    "schema": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
}


@router.put(
    "/{key:path}",
    response_model=ArtifactPublic,
    responses=error_responses(400, 401, 403, 404, 409, 410, 413),
    openapi_extra={"parameters": [_SHA256_HEADER]},
)
async def upload(key: ArtifactKey, request: Request, context: Context) -> ArtifactPublic:
    """Store the body under `key` after checking it hashes to the declared SHA-256."""
    try:
        check_key(key)
        sha256 = check_sha256(request.headers.get(HEADER_SHA256, ""))
    except ArtifactRefusal as exc:
        raise refuse(exc.status_code, exc.reason, exc.message) from exc
    lease_id: str | None = None
    if request.headers.get("Authorization", "").startswith("Bearer "):
        uploader = f"submitter:{await submitter(request, context)}"
        if not key.startswith(INPUTS_PREFIX):
            raise refuse(403, WRONG_PREFIX, f"submitters upload inputs under {INPUTS_PREFIX}")
    else:
        uploader = f"node:{await executor_node(request, context)}"
        lease_id = request.headers.get(HEADER_LEASE)
        if not lease_id:
            raise refuse(
                403, WRONG_PREFIX, f"an executor's upload names its lease in {HEADER_LEASE}"
            )
    data = await request.body()
    blobs = jobs_state(request).blobs
    try:
        stored = await run_in_threadpool(
            artifacts.store, context.database, blobs, key, data, sha256, uploader, lease_id
        )
    except ArtifactRefusal as exc:
        raise refuse(exc.status_code, exc.reason, exc.message) from exc
    except QueueRefusal as exc:
        raise refuse(410, exc.reason, exc.message) from exc
    return ArtifactPublic(key=stored.key, sha256=stored.sha256, size_bytes=stored.size_bytes)


@router.get("/{key:path}", responses=error_responses(400, 401, 403, 404, 410))
async def download(key: ArtifactKey, request: Request, context: Context, reader: ReaderDep) -> Any:
    """The bytes under `key`; the SHA-256 header lets the reader verify what it got."""
    try:
        check_key(key)
        sha256, size = await run_in_threadpool(
            artifacts.readable, context.database, key, reader, request.headers.get(HEADER_LEASE)
        )
    except ArtifactRefusal as exc:
        raise refuse(exc.status_code, exc.reason, exc.message) from exc
    except QueueRefusal as exc:
        raise refuse(410, exc.reason, exc.message) from exc
    path = jobs_state(request).blobs.path_of(sha256)
    if not path.is_file():
        raise refuse(404, "artifact-missing", f"the bytes of {key} are missing from the store")
    return FileResponse(
        path,
        media_type="application/octet-stream",
        headers={HEADER_SHA256: sha256, "X-Meshnet-Size": str(size)},
    )
