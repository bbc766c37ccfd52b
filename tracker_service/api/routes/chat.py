"""The chat page (GET /chat): talk to the network's models in a browser.

The page is static/chat.js, static/chat_markdown.js and static/chat.css under the
status page's strict CSP (its own files only, no inline script or style, DOM text
through text nodes); it calls the gateway's own /v1/models and /v1/chat/completions
from the browser, with the API key the person types when the gateway needs one.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool

from tracker_service.api.routes.answer_io import GatewayDep
from tracker_service.api.routes.state import STATUS_PAGE_HEADERS

router = APIRouter(tags=["chat"])
templates = Jinja2Templates(directory=Path(__file__).resolve().parents[2] / "templates")


@router.get("/chat", response_class=HTMLResponse, include_in_schema=False)
async def chat_page(request: Request, gateway: GatewayDep) -> HTMLResponse:
    # Whether to show the key field at once; a 401 from /v1 shows it too, so a key
    # issued after the page loaded (the count is cached briefly) is still asked for.
    needs_key = await run_in_threadpool(gateway.keys.keys_configured)
    return templates.TemplateResponse(
        request,
        "chat.html",
        {"needs_key": needs_key},
        headers={**STATUS_PAGE_HEADERS, "Cache-Control": "no-store"},
    )
