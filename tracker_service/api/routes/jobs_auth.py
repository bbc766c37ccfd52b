"""Who is calling the job API: a submitter (bearer token) or an executor node.

A node proves itself either with a signed request (the same contract as the
registry; its key comes from ``job_executors`` or ``nodes``) or with the session
credential its executor registration returned, sent as
``Authorization: MeshNet-Session <token>`` beside ``X-Meshnet-Node``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool

from tracker_service.api.auth_throttle import mark_not_a_guess
from tracker_service.api.deps import Context, TrackerContext, verified_request
from tracker_service.api.routes import refuse
from tracker_service.domain.wire import HEADER_NODE, PUBLIC_KEY_BYTES, b64decode_exact
from tracker_service.services import job_access
from tracker_service.services.job_access import SESSION_EXPIRED, SESSION_VALID

SESSION_SCHEME = "MeshNet-Session "
SUBMITTER_REQUIRED = "submitter-token-required"
SESSION_INVALID = "session-invalid"
SESSION_EXPIRED_REASON = "session-expired"


def _submitter(context: TrackerContext, header: str) -> int:
    token = header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else ""
    if not token:
        raise refuse(
            401,
            SUBMITTER_REQUIRED,
            "submitting and reading jobs needs a submitter token as 'Authorization: Bearer "
            "<token>'; the operator issues one with `meshnet-tracker submitters add`",
        )
    token_id = job_access.submitter_of(context.database, token)
    if token_id is None:
        raise refuse(401, SUBMITTER_REQUIRED, "the submitter token is unknown or revoked")
    return token_id


async def submitter(request: Request, context: Context) -> int:
    """The submitter token's id, or 401."""
    return await run_in_threadpool(_submitter, context, request.headers.get("Authorization", ""))


SubmitterDep = Annotated[int, Depends(submitter)]


def _session_node(context: TrackerContext, node_id: str, token: str) -> str:
    return job_access.session_of(context.database, node_id, token)


def _cache_executor_key(context: TrackerContext, node_id: str) -> None:
    if context.public_keys.get(node_id) is not None:
        return
    key_b64 = job_access.executor_key_of(context.database, node_id)
    if key_b64 is not None:
        context.public_keys.put(node_id, b64decode_exact(key_b64, PUBLIC_KEY_BYTES, "key"))


async def executor_node(request: Request, context: Context) -> str:
    """The calling node's id: a valid session credential or a valid signature, else 401."""
    header = request.headers.get("Authorization", "")
    node_id = request.headers.get(HEADER_NODE, "")
    if header.startswith(SESSION_SCHEME):
        token = header[len(SESSION_SCHEME) :].strip()
        status = await run_in_threadpool(_session_node, context, node_id, token) if node_id else ""
        if status == SESSION_VALID:
            return node_id
        if status == SESSION_EXPIRED:
            # The executor's own credential, aged out: it registers again, and this is
            # no failed guess, so the address's failed-authentication count is spared.
            mark_not_a_guess(request.scope)
            raise refuse(
                401,
                SESSION_EXPIRED_REASON,
                "the executor session credential has expired; register again "
                "(POST /api/v1/jobs/executors/register, signed)",
            )
        raise refuse(
            401,
            SESSION_INVALID,
            "the executor session credential is unknown; register again "
            "(POST /api/v1/jobs/executors/register, signed)",
        )
    if node_id:
        await run_in_threadpool(_cache_executor_key, context, node_id)
    signed = await verified_request(request, context)
    return signed.node_id


ExecutorDep = Annotated[str, Depends(executor_node)]


async def submitter_or_node(request: Request, context: Context) -> str:
    """Results are readable by their submitters and by the executors that need inputs."""
    if request.headers.get("Authorization", "").startswith("Bearer "):
        return f"submitter:{await submitter(request, context)}"
    return f"node:{await executor_node(request, context)}"


ReaderDep = Annotated[str, Depends(submitter_or_node)]
