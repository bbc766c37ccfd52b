"""Status for people and machines: /api/v1/state, the HTML page, /metrics."""

from __future__ import annotations

import time
from pathlib import Path

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.concurrency import run_in_threadpool

from tracker_service.deps import Context, TrackerContext
from tracker_service.schemas.state import StatePublic
from tracker_service.status import collect_state

router = APIRouter(tags=["state"])
templates = Jinja2Templates(directory=Path(__file__).resolve().parent.parent / "templates")

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


def _state(context: TrackerContext) -> StatePublic:
    with context.database.session() as session:
        return collect_state(session, now=time.time())


@router.get("/api/v1/state", response_model=StatePublic)
async def state(context: Context) -> StatePublic:
    """Models healthy or broken, recipes dark or certified, nodes with their ranges."""
    return await run_in_threadpool(_state, context)


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
async def status_page(request: Request, context: Context) -> HTMLResponse:
    snapshot = await run_in_threadpool(_state, context)
    return templates.TemplateResponse(
        request,
        "status.html",
        {
            "state": snapshot,
            "now": snapshot.generated_at,
            "private": context.settings.private,
            "refresh_s": context.settings.status_refresh_s,
        },
        headers=STATUS_PAGE_HEADERS,
    )


@router.get("/metrics", include_in_schema=False)
async def metrics(context: Context) -> Response:
    payload = await run_in_threadpool(generate_latest, context.metrics.registry)
    return Response(payload, media_type=CONTENT_TYPE_LATEST)
