"""Node registration, heartbeat and deregistration (signed requests)."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from tracker_service import errors
from tracker_service.api.deps import (
    Context,
    SignedNode,
    TrackerContext,
    context_of,
    verified_request,
)
from tracker_service.api.request_guard import admit_address
from tracker_service.api.routes import error_responses, parse_body, refuse, signed_body
from tracker_service.api.routes.heartbeat import answer_heartbeat
from tracker_service.api.schemas.common import FingerprintPublic, RecipeStatusPublic
from tracker_service.api.schemas.nodes import (
    DeregisterPublic,
    HeartbeatCreate,
    HeartbeatPublic,
    NodeRegisterCreate,
    NodeRegisterPublic,
    RelayOfferPublic,
    SessionCredentialPublic,
)
from tracker_service.api.schemas.state import NodePublic
from tracker_service.api.status import node_public
from tracker_service.domain.keys import NODE_SESSION_DOMAIN
from tracker_service.domain.wire import HEADER_JOIN_TOKEN
from tracker_service.services import registration, views

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/v1/nodes", tags=["nodes"])


def _tracker_url(request: Request, public_url: str) -> str:
    """Where this tracker (and its embedded relay) is, by what a client cannot forge: the
    operator's --public-url, else the address the request actually arrived at (never its
    Host header, which would let a node name any host as this tracker's relay)."""
    if public_url:
        return public_url.rstrip("/") + "/"
    server = request.scope.get("server")
    if not server or server[1] is None:
        return str(request.base_url)
    host, port = str(server[0]), int(server[1])
    literal = f"[{host}]" if ":" in host else host
    root = str(request.scope.get("root_path") or "").rstrip("/")
    return f"{request.url.scheme}://{literal}:{port}{root}/"


def _relayed_from(request: Request) -> str:
    """The address a relayed node registered from: its own, since registration comes
    straight to the tracker, never through the relay."""
    return (request.client.host if request.client else "") or "unknown"


def _credential(
    context: TrackerContext, admitted: registration.Registration
) -> SessionCredentialPublic:
    node = admitted.node
    credential = {
        "node_id": node.node_id,
        "session_id": node.session_id,
        "shard_binding_digest": node.shard_binding_digest,
        "issued_at": node.registered_at,
        "expires_at": node.session_expires_at,
    }
    return SessionCredentialPublic(
        credential=credential, signature=context.key.sign(NODE_SESSION_DOMAIN, credential)
    )


@router.post(
    "/register",
    response_model=NodeRegisterPublic,
    responses=error_responses(401, 403, 409, 413, 422, 429),
    openapi_extra=signed_body(NodeRegisterCreate),
)
async def register(request: Request, context: Context) -> NodeRegisterPublic:
    """Admit a node: signature, join token, identity block, capability report."""
    admit_address(
        request,
        "registrations",
        context.settings.registrations_per_minute_per_address,
        "registrations",
    )
    try:
        signed = await verified_request(request, context, key_from_body=True)
    except errors.AuthRefused:
        context.metrics.registrations.labels("unauthenticated").inc()
        raise
    body = parse_body(NodeRegisterCreate, signed.body)
    admission = await registration.admit(
        context.settings,
        context.database,
        context.public_keys,
        signed,
        registration.Application(
            identity=body.identity,
            capability=body.capability,
            endpoint=body.endpoint,
            device_class=body.device_class,
            tls_pin=body.tls_pin,
            tls_pin_signature=body.tls_pin_signature,
            relay_reason=body.relay_reason,
        ),
        join_token=request.headers.get(HEADER_JOIN_TOKEN),
        client_host=_relayed_from(request),
        tracker_url=_tracker_url(request, context.settings.public_url),
        refused=lambda reason: context.metrics.registrations.labels(reason).inc(),
    )
    context.metrics.registrations.labels("admitted").inc()
    identity, relay_url = admission.identity, admission.relay_url
    return NodeRegisterPublic(
        node_id=signed.node_id,
        session=_credential(context, admission.registration),
        heartbeat_interval_s=context.settings.heartbeat_interval_s,
        live_window_s=context.settings.live_window_s,
        tracker_public_key=context.key.public_key_b64,
        fingerprint=FingerprintPublic(
            model_artifact_digest=identity.model_artifact_digest,
            runtime_recipe_digest=identity.runtime_recipe_digest,
        ),
        shard_binding_digest=identity.shard_binding_digest,
        recipe=RecipeStatusPublic(**admission.recipe.to_dict()),
        rebound=admission.registration.rebound,
        relay=None if relay_url is None else RelayOfferPublic(url=relay_url),
        capability_max_age_s=context.settings.capability_max_age_s,
    )


@router.post(
    "/{node_id}/heartbeat",
    response_model=HeartbeatPublic,
    responses=error_responses(401, 403, 409, 410, 413, 422),
    openapi_extra=signed_body(HeartbeatCreate),
)
async def heartbeat(node_id: str, request: Request) -> Response:
    """Keep a node in routing. Unknown or expired nodes are told to re-register.

    Usually answered by HeartbeatShortcut before the router (routes/heartbeat.py).
    """
    return await answer_heartbeat(
        context_of(request),
        node_id=node_id,
        path=request.scope["path"],
        raw_headers=request.scope["headers"],
        body=await request.body(),
    )


@router.post(
    "/{node_id}/deregister",
    response_model=DeregisterPublic,
    responses=error_responses(401, 413),
    openapi_extra=signed_body(None),
)
async def deregister(node_id: str, signed: SignedNode, context: Context) -> DeregisterPublic:
    """A clean stop, pause or move: the node leaves routing at once instead of after 3
    intervals, and the route sessions through it fail over now (services/departures.py).
    Only the signer leaves: a path naming another node is refused (node-id-mismatch)."""
    if await run_in_threadpool(registration.deregister, context.database, signed.node_id):
        context.departures.announce(signed.node_id)
    return DeregisterPublic(node_id=node_id)


@router.get("/{node_id}", response_model=NodePublic, responses=error_responses(404))
async def node_view(node_id: str, context: Context) -> NodePublic:
    """One node as the tracker lists it (live, reachability, range); public, unsigned."""
    view = await run_in_threadpool(views.node_view, context.database, node_id, node_public)
    if view is None:
        raise refuse(404, errors.NOT_FOUND, f"no node {node_id} is registered with this tracker")
    return view
