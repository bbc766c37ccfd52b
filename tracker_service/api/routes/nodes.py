"""Node registration, heartbeat and deregistration (signed requests)."""

from __future__ import annotations

import logging
import time

from fastapi import APIRouter, Request, Response
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from tracker_service import errors
from tracker_service.api.capability_gate import check_capability
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
from tracker_service.domain.recipe_identity import (
    PresentedIdentity,
    RecipeIdentityError,
    parse_identity,
)
from tracker_service.domain.tls_pin import pin_signed_by
from tracker_service.domain.wire import HEADER_JOIN_TOKEN
from tracker_service.errors import EndpointRefused
from tracker_service.relay.directory import RelayDirectory, relay_of
from tracker_service.security.auth import SignedRequest
from tracker_service.security.endpoint_policy import resolve_endpoint
from tracker_service.store.invites import token_owner
from tracker_service.store.ledger import register_recipe
from tracker_service.store.node_caps import cap_host, live_nodes_at_host
from tracker_service.store.node_speeds import speeds_of
from tracker_service.store.nodes import (
    Liveness,
    Registration,
    end_registration,
    get_node,
    register_node,
    storage_problem,
)
from tracker_service.store.tables import NODE_BANNED, NODE_DEREGISTERED, NODE_QUARANTINED
from tracker_service.store.tokens import use_join_token

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/v1/nodes", tags=["nodes"])


def _liveness(context: TrackerContext) -> Liveness:
    settings = context.settings
    return Liveness(live_window_s=settings.live_window_s, session_ttl_s=settings.session_ttl_s)


def _admit(
    context: TrackerContext,
    signed: SignedRequest,
    body: NodeRegisterCreate,
    identity: PresentedIdentity,
    join_token: str | None,
    relayed_from: str = "",
    resolved: str = "",
) -> tuple[Registration, RecipeStatusPublic]:
    """Blocking: join token, ban check, ledger entry and node row in one transaction.

    ``relayed_from``: for an endpoint on a relay this tracker offers, the address the
    registration came from ("" for a direct endpoint). ``resolved``: the address the
    endpoint's host resolved to (one machine's many DNS names count as one host)."""
    report = body.capability
    assert report is not None  # check_capability refused a registration without one
    now = time.time()
    with context.database.sessions.begin() as session:
        if context.settings.private:
            check_join_token(session, join_token, now, signed.node_id)
        existing = get_node(session, signed.node_id)
        if existing is not None and existing.state == NODE_BANNED:
            raise refuse(
                403, errors.BANNED, f"node {signed.node_id} is banned: {existing.state_reason}"
            )
        if existing is not None and existing.state == NODE_QUARANTINED:
            # The identity lied; registering it again does not lift that.
            raise refuse(
                403,
                errors.QUARANTINED,
                f"node {signed.node_id} is quarantined: {existing.state_reason}",
            )
        # Every node of a relay names the relay's host: count those by their own address.
        host = cap_host(body.endpoint, relayed_from, resolved)
        _check_nodes_per_host(context, session, host, signed.node_id, now, relayed_from != "")
        status = register_recipe(session, identity, now=now)
        registration = register_node(
            session,
            node_id=signed.node_id,
            public_key=signed.public_key,
            endpoint=body.endpoint,
            identity=identity,
            capability=report.model_dump(mode="json"),
            throughput=report.tokens_per_second or 0.0,
            now=now,
            liveness=_liveness(context),
            relay_reason=(body.relay_reason or "") if relayed_from else "",
            relayed_from=relayed_from,
            tls_pin=body.tls_pin or "",
            resolved_address=resolved,
        )
    return registration, RecipeStatusPublic(**status.to_dict())


def _check_tls_pin(
    context: TrackerContext, signed: SignedRequest, body: NodeRegisterCreate
) -> None:
    """A pin is admitted only with the node's signature over it; a node without one
    (plaintext ws://) only by a tracker started with --allow-plaintext-nodes."""
    if body.tls_pin is None and body.tls_pin_signature is None:
        if context.settings.allow_plaintext_nodes and body.endpoint.startswith("ws://"):
            return
        context.metrics.registrations.labels(errors.TLS_PIN_REQUIRED).inc()
        raise refuse(
            422,
            errors.TLS_PIN_REQUIRED,
            "this tracker routes only through nodes serving TLS pinned to their identity: "
            "register a wss:// endpoint with tls_pin and tls_pin_signature (a node does so "
            "unless started with --insecure-plaintext-dataplane)",
        )
    if not pin_signed_by(
        signed.public_key, body.tls_pin or "", signed.node_id, body.tls_pin_signature or ""
    ):
        context.metrics.registrations.labels(errors.BAD_TLS_PIN).inc()
        raise refuse(
            422,
            errors.BAD_TLS_PIN,
            "tls_pin must be 64 lowercase hex chars and tls_pin_signature the node key's "
            'signature of b"meshnet.tls-pin.v1\\n" + tls_pin + "\\n" + node_id',
        )
    if relay_of(body.endpoint) is None and not body.endpoint.startswith("wss://"):
        context.metrics.registrations.labels(errors.TLS_PIN_REQUIRED).inc()
        raise refuse(
            422,
            errors.TLS_PIN_REQUIRED,
            f"a node with a TLS pin serves wss://, not {body.endpoint}",
        )


def _check_relay(
    context: TrackerContext,
    signed: SignedRequest,
    body: NodeRegisterCreate,
    relays: RelayDirectory,
    tracker_url: str,
) -> None:
    """A relayed endpoint is admitted only on a relay this tracker offers, for this node:
    anything else shaped like one is a stranger's host the tracker would dial."""
    relay = relay_of(body.endpoint)
    if relay is None:
        return
    if body.endpoint.rstrip("/").rpartition("/")[2] != signed.node_id:
        context.metrics.registrations.labels(errors.UNKNOWN_RELAY).inc()
        raise refuse(
            422,
            errors.UNKNOWN_RELAY,
            f"the relayed endpoint {body.endpoint} names another node; register "
            "<relay url>/<your node id> with the relay the registration answer offers",
        )
    if not relays.known(body.endpoint, tracker_url):
        offered = ", ".join(relays.urls) or relays.offer(signed.node_id, tracker_url) or "none"
        context.metrics.registrations.labels(errors.UNKNOWN_RELAY).inc()
        log.info("registration refused node_id=%s unknown-relay: %s", signed.node_id, relay)
        raise refuse(
            422,
            errors.UNKNOWN_RELAY,
            f"{relay} is not a relay this tracker offers ({offered}); serve through the "
            "relay the registration answer offers, or register your own wss:// endpoint",
        )


def _check_nodes_per_host(
    context: TrackerContext,
    session: Session,
    host: str,
    node_id: str,
    now: float,
    relayed: bool,
) -> None:
    cap = context.settings.max_nodes_per_address
    if live_nodes_at_host(session, host, now=now, other_than=node_id) >= cap:
        where = "register from" if relayed else "name"
        raise refuse(
            409,
            errors.TOO_MANY_NODES,
            f"{cap} live nodes already {where} {host} (directly or through a relay), this "
            "tracker's limit per address; stop one of them or run this node elsewhere",
        )


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


def check_join_token(session: Session, token: str | None, now: float, node_id: str) -> None:
    if not token:
        raise refuse(
            403,
            errors.JOIN_TOKEN_REQUIRED,
            f"this tracker runs a private network: send a join token in {HEADER_JOIN_TOKEN} "
            "(the operator issues one with `meshnet-tracker tokens add`)",
        )
    if not use_join_token(session, token, now=now):
        raise refuse(
            403,
            errors.JOIN_TOKEN_INVALID,
            "the join token is unknown or revoked; ask the operator for a new one",
        )
    owner = token_owner(session, token)
    if owner is not None and owner != node_id:  # an invite's token serves its own node only
        raise refuse(
            403,
            errors.JOIN_TOKEN_INVALID,
            "this join token came with an invite redeemed by another node; redeem an invite "
            "with this node's own identity (`meshnet-node join LINK`)",
        )


def _credential(context: TrackerContext, registration: Registration) -> SessionCredentialPublic:
    node = registration.node
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
    try:
        identity = parse_identity(body.identity)
    except RecipeIdentityError as exc:
        context.metrics.registrations.labels(exc.reason).inc()
        log.info("registration refused node_id=%s reason=%s: %s", signed.node_id, exc.reason, exc)
        raise refuse(422, exc.reason, str(exc)) from exc
    problem = storage_problem(identity)
    if problem is not None:
        raise refuse(422, RecipeIdentityError.reason, problem)
    try:
        check_capability(
            body.capability,
            identity,
            now=time.time(),
            device_class=body.device_class,
            max_age_s=context.settings.capability_max_age_s,
        )
    except errors.TrackerRefusal as exc:
        context.metrics.registrations.labels(exc.reason).inc()
        log.info("registration refused node_id=%s reason=%s: %s", signed.node_id, exc.reason, exc)
        raise
    _check_tls_pin(context, signed, body)
    relays = RelayDirectory.from_setting(
        context.settings.relay_urls, context.settings.embedded_relay
    )
    tracker_url = _tracker_url(request, context.settings.public_url)
    _check_relay(context, signed, body, relays, tracker_url)
    try:  # refused here, with the reason, rather than found unreachable later
        pinned = await run_in_threadpool(
            resolve_endpoint,
            body.endpoint,
            allow_private=context.settings.allow_private_endpoints,
        )
    except EndpointRefused as exc:
        context.metrics.registrations.labels(errors.ENDPOINT_REFUSED).inc()
        log.info("registration refused node_id=%s endpoint-refused: %s", signed.node_id, exc)
        raise refuse(422, errors.ENDPOINT_REFUSED, str(exc)) from exc
    registration, recipe = await run_in_threadpool(
        _admit,
        context,
        signed,
        body,
        identity,
        request.headers.get(HEADER_JOIN_TOKEN),
        _relayed_from(request) if relays.known(body.endpoint, tracker_url) else "",
        pinned.address,
    )
    relay_url = relays.offer(signed.node_id, tracker_url)
    context.public_keys.put(signed.node_id, signed.public_key)
    context.metrics.registrations.labels("admitted").inc()
    log.info(
        "node admitted node_id=%s layers=%d-%d fingerprint=%s/%s endpoint=%s recipe=%s",
        signed.node_id,
        identity.shard_start,
        identity.shard_end,
        identity.model_artifact_digest[:12],
        identity.runtime_recipe_digest[:12],
        body.endpoint,
        recipe.status,
    )
    if registration.rebound:
        log.warning(
            "node %s re-registered with other bytes (binding %s -> %s): a new admission",
            signed.node_id,
            (registration.previous_binding or "")[:12],
            identity.shard_binding_digest[:12],
        )
    return NodeRegisterPublic(
        node_id=signed.node_id,
        session=_credential(context, registration),
        heartbeat_interval_s=context.settings.heartbeat_interval_s,
        live_window_s=context.settings.live_window_s,
        tracker_public_key=context.key.public_key_b64,
        fingerprint=FingerprintPublic(
            model_artifact_digest=identity.model_artifact_digest,
            runtime_recipe_digest=identity.runtime_recipe_digest,
        ),
        shard_binding_digest=identity.shard_binding_digest,
        recipe=recipe,
        rebound=registration.rebound,
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


def _deregister(context: TrackerContext, node_id: str) -> bool:
    with context.database.sessions.begin() as session:
        node = get_node(session, node_id)
        if node is None or node.state in (NODE_BANNED, NODE_QUARANTINED):
            return node is not None  # a clean stop lifts neither
        return end_registration(session, node_id, NODE_DEREGISTERED, "the node stopped cleanly")


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
    if await run_in_threadpool(_deregister, context, signed.node_id):
        context.departures.announce(signed.node_id)
    return DeregisterPublic(node_id=node_id)


def _node_view(context: TrackerContext, node_id: str) -> NodePublic | None:
    with context.database.session() as session:
        node = get_node(session, node_id)
        if node is None:
            return None
        speed = speeds_of(session, [node_id]).get((node_id, node.model_artifact_digest))
        return node_public(node, time.time(), speed)


@router.get("/{node_id}", response_model=NodePublic, responses=error_responses(404))
async def node_view(node_id: str, context: Context) -> NodePublic:
    """One node as the tracker lists it (live, reachability, range); public, unsigned."""
    view = await run_in_threadpool(_node_view, context, node_id)
    if view is None:
        raise refuse(404, errors.NOT_FOUND, f"no node {node_id} is registered with this tracker")
    return view
