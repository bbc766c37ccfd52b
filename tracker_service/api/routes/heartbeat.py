"""The heartbeat: every node's request every few seconds, answered ahead of the router.

At 1,000 heartbeats/s on one core, FastAPI's router, dependency solving,
request objects and exception middleware cost about as much as the heartbeat's
own work (signature, two statements). :class:`HeartbeatShortcut`, a pure ASGI
middleware, answers ``POST /api/v1/nodes/{node_id}/heartbeat`` with
:func:`answer_heartbeat` directly; the route in ``routes/nodes.py`` documents it
in OpenAPI and answers with the same function where the shortcut steps aside
(an app mounted under a root path). Checks, refusals, metrics and bytes on the
wire are the same either way.

A successful reply also tells the node how the tracker sees it — its
reachability and its recipe's status — read in the heartbeat's own batched
commit (store.heartbeats: on PostgreSQL from the refresh's RETURNING, one
round trip per batch, no read or worker-thread hop per heartbeat after it),
so nodes never fetch the whole ``/api/v1/state`` to learn them, and a move
the rebalancer suggests (a dict lookup on ``context.rebalance``; the planning
runs in the background, tracker_service/services/rebalancing.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from fastapi import HTTPException
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from tracker_service import errors
from tracker_service.api.deps import TrackerContext
from tracker_service.api.routes import http_refusal_response, parse_body, refusal_response
from tracker_service.api.schemas.nodes import HeartbeatCreate, HeartbeatPublic
from tracker_service.security.auth import nonce_reused, verify_signed
from tracker_service.services import registration

PATH_PREFIX = "/api/v1/nodes/"
PATH_SUFFIX = "/heartbeat"


async def answer_heartbeat(
    context: TrackerContext,
    *,
    node_id: str,
    path: str,
    raw_headers: Iterable[tuple[bytes, bytes]],
    body: bytes,
) -> Response:
    """Keep a node in routing. Unknown or expired nodes are told to re-register."""
    metrics = context.metrics
    try:
        signed = await verify_signed(
            method="POST",
            path=path,
            path_node=node_id,
            raw_headers=raw_headers,
            body=body,
            database=context.database,
            keys=context.public_keys,
            nonces=context.nonces,
            spend=False,  # spent below, in the heartbeat's own commit
        )
    except errors.AuthRefused as exc:
        metrics.auth_refusals.labels(exc.reason).inc()
        if exc.reason == errors.UNKNOWN_NODE:
            metrics.heartbeats.labels("unknown").inc()
            return refusal_response(409, errors.RE_REGISTER, exc.message)
        return refusal_response(exc.status_code, exc.reason, exc.message)
    database, nonces, settings = context.database, context.nonces, context.settings
    try:
        beat = parse_body(HeartbeatCreate, signed.body)
    except HTTPException as invalid:  # the nonce is spent even when the body is bad
        # Writes go to a worker thread: another writer may hold SQLite's lock.
        if not await run_in_threadpool(nonces.spend, node_id, signed.nonce, signed.timestamp):
            return _replay(context, node_id)
        return http_refusal_response(invalid)
    now = time.time()
    values: dict[str, Any] = {
        "node_id": node_id,
        "nonce": signed.nonce,
        "nonce_expires_at": nonces.expiry(signed.timestamp),
        "now": now,
        "live_until": now + settings.live_window_s,
        "session_expires_at": now + settings.session_ttl_s,
        "load": beat.load,
        "open_sessions": beat.open_sessions,
        "tokens_served": beat.tokens_served,
        "throughput": beat.throughput,
    }
    fresh, refreshed, view = await context.heartbeats.beat_viewed(values)
    if nonces.purge_due():
        await run_in_threadpool(nonces.purge)
    if not fresh:
        return _replay(context, node_id)
    if not refreshed:
        state, sentence = await database.run_quick(
            registration.heartbeat_refused, database, node_id, now
        )
        metrics.heartbeats.labels(state).inc()
        if state == registration.NODE_BANNED:
            return refusal_response(403, errors.BANNED, sentence)
        if state == registration.NODE_QUARANTINED:
            return refusal_response(403, errors.QUARANTINED, sentence)
        return refusal_response(410 if state == "expired" else 409, errors.RE_REGISTER, sentence)
    metrics.heartbeats_ok.inc()
    assert view is not None  # a refreshed node always comes back with its view
    reach, reach_reason, recipe_status, recipe_detail = view
    move = context.rebalance.suggestion_for(node_id)
    answer = HeartbeatPublic(
        live_until=values["live_until"],
        session_expires_at=values["session_expires_at"],
        heartbeat_interval_s=settings.heartbeat_interval_s,
        reachability=reach,
        reachability_reason=reach_reason,
        recipe_status=recipe_status,
        recipe_detail=recipe_detail,
        suggested_layers=None if move is None else [move.start, move.end],
        suggestion="" if move is None else move.sentence,
        suggestion_urgent=move is not None and move.urgent,
    )
    return Response(answer.model_dump_json(), media_type="application/json")


def _replay(context: TrackerContext, node_id: str) -> Response:
    refused = nonce_reused(node_id)
    context.metrics.auth_refusals.labels(refused.reason).inc()
    return refusal_response(refused.status_code, refused.reason, refused.message)


def heartbeat_node_id(scope: Scope) -> str | None:
    """The node id of a heartbeat request, as the router would match it; else None."""
    if scope["type"] != "http" or scope["method"] != "POST" or scope.get("root_path"):
        return None
    path: str = scope["path"]
    if not (path.startswith(PATH_PREFIX) and path.endswith(PATH_SUFFIX)):
        return None
    node_id = path[len(PATH_PREFIX) : -len(PATH_SUFFIX)]
    # The route's {node_id} matches one non-empty path segment.
    return node_id if node_id and "/" not in node_id else None


class HeartbeatShortcut:
    """Answer heartbeats without the router; pass every other request on."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        node_id = heartbeat_node_id(scope)
        if node_id is None:
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive)
        if body is None:
            return  # the client went away; nobody to answer
        context: TrackerContext = scope["app"].state.tracker
        response = await answer_heartbeat(
            context, node_id=node_id, path=scope["path"], raw_headers=scope["headers"], body=body
        )
        await response(scope, receive, send)


async def _read_body(receive: Receive) -> bytes | None:
    """The whole request body (the body limit outside has bounded it); None on disconnect."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)
