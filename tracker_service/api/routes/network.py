"""What this network is, for machines (GET /api/v1/network) and for people invited to it
(GET /join/<code>, a page with the status page's strict CSP: its own files only)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool

from tracker_service.api.deps import Context, TrackerContext
from tracker_service.api.network_info import network_info
from tracker_service.api.routes import error_responses
from tracker_service.api.routes.invites import own_url
from tracker_service.api.routes.state import STATUS_PAGE_HEADERS
from tracker_service.api.schemas.network import CHALLENGE_PATTERN, NetworkPublic
from tracker_service.domain.invite_links import invite_links
from tracker_service.services import views

router = APIRouter(tags=["network"])
templates = Jinja2Templates(directory=Path(__file__).resolve().parents[2] / "templates")

# What the invite page says when a code cannot be used, by invite_state().
_UNUSABLE = {
    "revoked": "The network's operator withdrew this invite.",
    "expired": "This invite has expired.",
    "used up": "This invite has already been used by as many computers as it allows.",
}


def _network(context: TrackerContext, tracker_url: str, challenge: str | None) -> NetworkPublic:
    with context.database.session() as session:
        return network_info(
            context.settings, context.key, session, tracker_url=tracker_url, challenge=challenge
        )


@router.get("/api/v1/network", response_model=NetworkPublic, responses=error_responses(422))
async def network(
    request: Request,
    context: Context,
    challenge: Annotated[
        str | None,
        Query(
            pattern=CHALLENGE_PATTERN,
            description="32 to 128 lowercase hex chars of the caller's own randomness, "
            "signed back inside the answer (a node checks the key before it sends a code)",
        ),
    ] = None,
) -> NetworkPublic:
    """The network's name, description, operator, contact, terms and the models it serves."""
    return await run_in_threadpool(_network, context, own_url(context, request), challenge)


def _invite_page(
    context: TrackerContext, tracker_url: str, code: str
) -> tuple[int, dict[str, Any]]:
    info = _network(context, tracker_url, None)
    page: dict[str, Any] = {"network": info, "code": code}
    state = views.invite_state_of(context.database, code)
    if state is None:
        return 404, page
    if state != "active":
        page["problem"] = _UNUSABLE[state]
        return 410, page
    page["links"] = invite_links(tracker_url, code, context.key.fingerprint)
    return 200, page


@router.get("/join/{code}", response_class=HTMLResponse, include_in_schema=False)
async def invite_page(code: str, request: Request, context: Context) -> HTMLResponse:
    status, page = await run_in_threadpool(_invite_page, context, own_url(context, request), code)
    name = "join.html" if status == 200 else "join_missing.html"
    return templates.TemplateResponse(
        request, name, page, status_code=status, headers=STATUS_PAGE_HEADERS
    )
