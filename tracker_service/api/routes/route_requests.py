"""Routes for clients: a chain of hops, their endpoints and a signed ticket.

``POST /api/v1/routes`` serves certified recipes only; purpose ``certify`` (a
dark recipe, >= 2 distinct nodes) is the certifier's and needs the admin token.
"""

from __future__ import annotations

import inspect
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from starlette.concurrency import run_in_threadpool

from tracker_service.api.deps import Context, require_admin
from tracker_service.api.request_guard import guard_route_request
from tracker_service.api.routes import error_responses, refuse
from tracker_service.api.schemas.common import FingerprintPublic
from tracker_service.api.schemas.routes import (
    RouteCreate,
    RouteHopPublic,
    RoutePublic,
    SignedTicketPublic,
)
from tracker_service.domain.route_formation import PURPOSE_CERTIFY
from tracker_service.errors import NoRoute, RouteRefused
from tracker_service.services import views
from tracker_service.services.data_plane import RouteServices
from tracker_service.services.route_planner import RoutePlanner
from tracker_service.services.session_plan import RoutePlan

router = APIRouter(prefix="/api/v1/routes", tags=["routes"])


def get_route_services(request: Request) -> RouteServices:
    services: RouteServices = request.app.state.routing
    return services


Services = Annotated[RouteServices, Depends(get_route_services)]
_STATUS = {"unknown-recipe": 404, "recipe-dark": 409, "bad-purpose": 422}


def _public(plan: RoutePlan, tracker_public_key: str) -> RoutePublic:
    body = plan.to_json()
    return RoutePublic(
        route_session_id=plan.route_session_id,
        epoch=plan.epoch,
        expires_at=plan.expires_at,
        fingerprint=FingerprintPublic(**body["fingerprint"]),
        layer_count=plan.layer_count,
        hops=[RouteHopPublic(**hop) for hop in body["hops"]],
        ticket=SignedTicketPublic(**plan.signed_ticket),
        tracker_public_key=tracker_public_key,
    )


def _keys(context: Context, body: RouteCreate) -> list[views.Key]:
    """The fingerprints the request may mean: one by digest, or a model's recipes."""
    if body.model_artifact_digest is not None and body.runtime_recipe_digest is not None:
        return [(body.model_artifact_digest, body.runtime_recipe_digest)]
    assert body.artifact_id is not None  # the schema insists on one way to name it
    return views.recipe_keys(
        context.database, artifact_id=body.artifact_id, recipe_id=body.recipe_id
    )


def _plan(planner: RoutePlanner, context: Context, body: RouteCreate) -> RoutePlan:
    keys = _keys(context, body)
    if not keys:
        raise RouteRefused("unknown-recipe", f"no recipe of {body.artifact_id} is registered")
    min_nodes = 2 if body.purpose == PURPOSE_CERTIFY else 1
    failure: RouteRefused | NoRoute | None = None
    for key in keys:
        try:
            return planner.plan(
                key, purpose=body.purpose, min_nodes=min_nodes, exclude=body.exclude_nodes
            )
        except (RouteRefused, NoRoute) as exc:
            failure = failure or exc
    assert failure is not None
    raise failure


@router.post(
    "",
    response_model=RoutePublic,
    responses=error_responses(401, 403, 404, 409, 422, 429, 503),
)
async def create_route(
    body: RouteCreate, request: Request, context: Context, services: Services
) -> RoutePublic:
    """A route covering every layer of a certified recipe, with its signed ticket."""
    if body.purpose == PURPOSE_CERTIFY:
        checked = require_admin(request, context)
        if inspect.isawaitable(checked):  # deps may define the check sync or async
            await checked
    else:  # an API key when keys are configured, else a per-address limit
        await guard_route_request(request)
    try:
        plan = await run_in_threadpool(_plan, services.planner, context, body)
    except RouteRefused as exc:
        raise refuse(_STATUS.get(exc.reason, 409), exc.reason, exc.message) from exc
    except NoRoute as exc:
        raise refuse(503, exc.reason, exc.message) from exc
    return _public(plan, context.key.public_key_b64)
