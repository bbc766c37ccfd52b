"""Status for people and machines: /api/v1/state, the HTML page, /metrics."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.concurrency import run_in_threadpool

from tracker_service.api.deps import Context, TrackerContext
from tracker_service.api.routes import error_responses
from tracker_service.api.schemas.credits import as_json
from tracker_service.api.schemas.state import StatePublic
from tracker_service.api.status import (
    CURSOR_PATTERN,
    MAX_NODE_PAGE,
    NodePage,
    apply_disputes,
    collect_state,
    decode_cursor,
)
from tracker_service.gateway.faces import apis_on
from tracker_service.services import state_view
from tracker_service.services.state_view import NODE_ID_LEN

router = APIRouter(tags=["state"])
STATUS_CREDIT_ROWS = 20
templates = Jinja2Templates(directory=Path(__file__).resolve().parents[2] / "templates")

# The page loads only its own files (static/status.css, status.js): no inline script
# or style, no other origin, no framing; DOM text goes in through text nodes only.
STATUS_PAGE_CSP = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
    )
)
STATUS_PAGE_HEADERS = {
    "Content-Security-Policy": STATUS_PAGE_CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _state(context: TrackerContext, page: NodePage | None = None) -> StatePublic:
    now = time.time()
    settings = context.settings
    if settings.trust_first_model_source:
        state_view.trust_first_sources(context.database, now)
    with context.database.session() as session:
        sources = state_view.source_statuses(session, settings.allowed_model_sources)
        state = collect_state(session, now=now, page=page, sources=sources)
        return apply_disputes(session, state, context.disputes, now=now)


@router.get("/api/v1/state", response_model=StatePublic, responses=error_responses(422))
async def state(
    context: Context,
    limit: Annotated[
        int | None,
        Query(
            ge=1,
            le=MAX_NODE_PAGE,
            description=f"nodes per page (1 to {MAX_NODE_PAGE}); with it, nodes are listed "
            "by node id and `next_cursor` leads to the next page",
        ),
    ] = None,
    cursor: Annotated[
        str | None,
        Query(
            max_length=2 * NODE_ID_LEN,
            pattern=CURSOR_PATTERN,
            description="the `next_cursor` of the previous page; empty: the first page",
        ),
    ] = None,
) -> StatePublic:
    """Models healthy or broken, recipes dark or certified, nodes with their ranges.

    Without `limit` or `cursor` the node list is the 1,000 nodes most recently
    heard from, as before paging existed; with either, it is one page by node id.
    """
    page = None
    if limit is not None or cursor is not None:
        # The pattern admitted it, so it is a position (the empty one: the first page).
        after = None if cursor is None else decode_cursor(cursor)
        page = NodePage(limit=MAX_NODE_PAGE if limit is None else limit, after=after)
    return await run_in_threadpool(_state, context, page)


def _credits(request: Request) -> list[dict[str, Any]]:
    """The leaderboard's first rows, by account, for the status page (the ledger's cache)."""
    rows = request.app.state.gateway.credits.board.rows("account")[:STATUS_CREDIT_ROWS]
    return [as_json(r, with_identities=False) for r in rows]


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
async def status_page(request: Request, context: Context) -> HTMLResponse:
    snapshot = await run_in_threadpool(_state, context)
    credits = await run_in_threadpool(_credits, request)
    return templates.TemplateResponse(
        request,
        "status.html",
        {
            "state": snapshot,
            "now": snapshot.generated_at,
            "private": context.settings.private,
            "refresh_s": context.settings.status_refresh_s,
            "credits": credits,
            "apis": apis_on(context.settings.ollama_port),
        },
        headers=STATUS_PAGE_HEADERS,
    )


@router.get("/metrics", include_in_schema=False)
async def metrics(context: Context) -> Response:
    payload = await run_in_threadpool(generate_latest, context.metrics.registry)
    return Response(payload, media_type=CONTENT_TYPE_LATEST)
