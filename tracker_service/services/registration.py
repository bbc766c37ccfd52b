"""Admitting a node: the registration use case, from a verified request to a node row.

The route (api/routes/nodes.py) authenticates the request and parses its body;
this decides, in the seed's order, whether the node gets in: its identity block,
the capability gate (domain/capability_gate.py), the TLS pin, a relayed endpoint's
relay, the endpoint policy, then the join token, ban, quarantine and per-address
cap with the ledger entry and the node row in one transaction. Every refusal is a
:class:`TrackerRefusal` with its status and reason; ``refused`` counts the ones the
registration metric has always counted (not the ban, quarantine or token checks).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from tracker_service import errors
from tracker_service.config import Settings
from tracker_service.domain.capability_gate import check_capability
from tracker_service.domain.capability_report import CapabilityReportIn
from tracker_service.domain.recipe_identity import (
    PresentedIdentity,
    RecipeIdentityError,
    parse_identity,
)
from tracker_service.domain.tls_pin import pin_signed_by
from tracker_service.domain.wire import HEADER_JOIN_TOKEN
from tracker_service.errors import EndpointRefused, TrackerRefusal
from tracker_service.relay.directory import RelayDirectory, relay_of
from tracker_service.security.auth import PublicKeyCache, SignedRequest
from tracker_service.security.endpoint_policy import resolve_endpoint
from tracker_service.store.db import Database
from tracker_service.store.invites import Redeemed, redeem_invite, token_owner
from tracker_service.store.ledger import RecipeStatus, register_recipe
from tracker_service.store.node_caps import cap_host, live_nodes_at_host
from tracker_service.store.nodes import (
    Liveness,
    Registration,
    end_registration,
    get_node,
    heartbeat_refusal,
    register_node,
    storage_problem,
)
from tracker_service.store.tables import NODE_BANNED, NODE_DEREGISTERED, NODE_QUARANTINED
from tracker_service.store.tokens import use_join_token

log = logging.getLogger(__name__)

__all__ = [
    "NODE_BANNED",
    "NODE_QUARANTINED",
    "Admission",
    "Application",
    "Registration",
    "admit",
    "check_join_token",
    "deregister",
    "heartbeat_refused",
    "redeem",
]


@dataclass(frozen=True)
class Application:
    """What a node asks to be admitted with (the registration body, parsed)."""

    identity: dict[str, Any]
    capability: CapabilityReportIn | None
    endpoint: str
    device_class: str | None
    tls_pin: str | None
    tls_pin_signature: str | None
    relay_reason: str | None


@dataclass(frozen=True)
class Admission:
    """An admitted node: its row, its identity, its recipe's status, the relay offered."""

    registration: Registration
    identity: PresentedIdentity
    recipe: RecipeStatus
    relay_url: str | None


def _liveness(settings: Settings) -> Liveness:
    return Liveness(live_window_s=settings.live_window_s, session_ttl_s=settings.session_ttl_s)


async def admit(
    settings: Settings,
    database: Database,
    public_keys: PublicKeyCache,
    signed: SignedRequest,
    body: Application,
    *,
    join_token: str | None,
    client_host: str,
    tracker_url: str,
    refused: Callable[[str], None],
) -> Admission:
    """Admit the node that signed `signed`, or raise the TrackerRefusal that says why.

    ``client_host``: the address the registration came from (a relayed node's own);
    ``tracker_url``: where this tracker and its embedded relay are (never a Host header)."""
    try:
        identity = parse_identity(body.identity)
    except RecipeIdentityError as exc:
        refused(exc.reason)
        log.info("registration refused node_id=%s reason=%s: %s", signed.node_id, exc.reason, exc)
        raise TrackerRefusal(exc.reason, str(exc), status_code=422) from exc
    problem = storage_problem(identity)
    if problem is not None:
        raise TrackerRefusal(RecipeIdentityError.reason, problem, status_code=422)
    try:
        check_capability(
            body.capability,
            identity,
            now=time.time(),
            device_class=body.device_class,
            max_age_s=settings.capability_max_age_s,
        )
    except errors.TrackerRefusal as exc:
        refused(exc.reason)
        log.info("registration refused node_id=%s reason=%s: %s", signed.node_id, exc.reason, exc)
        raise
    _check_tls_pin(settings, signed, body, refused)
    relays = RelayDirectory.from_setting(settings.relay_urls, settings.embedded_relay)
    _check_relay(signed, body, relays, tracker_url, refused)
    try:  # refused here, with the reason, rather than found unreachable later
        pinned = await run_in_threadpool(
            resolve_endpoint,
            body.endpoint,
            allow_private=settings.allow_private_endpoints,
        )
    except EndpointRefused as exc:
        refused(errors.ENDPOINT_REFUSED)
        log.info("registration refused node_id=%s endpoint-refused: %s", signed.node_id, exc)
        raise TrackerRefusal(errors.ENDPOINT_REFUSED, str(exc), status_code=422) from exc
    registration, recipe = await run_in_threadpool(
        _admit,
        settings,
        database,
        signed,
        body,
        identity,
        join_token,
        client_host if relays.known(body.endpoint, tracker_url) else "",
        pinned.address,
    )
    relay_url = relays.offer(signed.node_id, tracker_url)
    public_keys.put(signed.node_id, signed.public_key)
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
    return Admission(registration, identity, recipe, relay_url)


def _admit(
    settings: Settings,
    database: Database,
    signed: SignedRequest,
    body: Application,
    identity: PresentedIdentity,
    join_token: str | None,
    relayed_from: str = "",
    resolved: str = "",
) -> tuple[Registration, RecipeStatus]:
    """Blocking: join token, ban check, ledger entry and node row in one transaction.

    ``relayed_from``: for an endpoint on a relay this tracker offers, the address the
    registration came from ("" for a direct endpoint). ``resolved``: the address the
    endpoint's host resolved to (one machine's many DNS names count as one host)."""
    report = body.capability
    assert report is not None  # check_capability refused a registration without one
    now = time.time()
    with database.sessions.begin() as session:
        if settings.private:
            check_join_token(session, join_token, now, signed.node_id)
        existing = get_node(session, signed.node_id)
        if existing is not None and existing.state == NODE_BANNED:
            raise TrackerRefusal(
                errors.BANNED,
                f"node {signed.node_id} is banned: {existing.state_reason}",
                status_code=403,
            )
        if existing is not None and existing.state == NODE_QUARANTINED:
            # The identity lied; registering it again does not lift that.
            raise TrackerRefusal(
                errors.QUARANTINED,
                f"node {signed.node_id} is quarantined: {existing.state_reason}",
                status_code=403,
            )
        # Every node of a relay names the relay's host: count those by their own address.
        host = cap_host(body.endpoint, relayed_from, resolved)
        _check_nodes_per_host(settings, session, host, signed.node_id, now, relayed_from != "")
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
            liveness=_liveness(settings),
            relay_reason=(body.relay_reason or "") if relayed_from else "",
            relayed_from=relayed_from,
            tls_pin=body.tls_pin or "",
            resolved_address=resolved,
        )
    return registration, status


def _check_tls_pin(
    settings: Settings,
    signed: SignedRequest,
    body: Application,
    refused: Callable[[str], None],
) -> None:
    """A pin is admitted only with the node's signature over it; a node without one
    (plaintext ws://) only by a tracker started with --allow-plaintext-nodes."""
    if body.tls_pin is None and body.tls_pin_signature is None:
        if settings.allow_plaintext_nodes and body.endpoint.startswith("ws://"):
            return
        refused(errors.TLS_PIN_REQUIRED)
        raise TrackerRefusal(
            errors.TLS_PIN_REQUIRED,
            "this tracker routes only through nodes serving TLS pinned to their identity: "
            "register a wss:// endpoint with tls_pin and tls_pin_signature (a node does so "
            "unless started with --insecure-plaintext-dataplane)",
            status_code=422,
        )
    if not pin_signed_by(
        signed.public_key, body.tls_pin or "", signed.node_id, body.tls_pin_signature or ""
    ):
        refused(errors.BAD_TLS_PIN)
        raise TrackerRefusal(
            errors.BAD_TLS_PIN,
            "tls_pin must be 64 lowercase hex chars and tls_pin_signature the node key's "
            'signature of b"meshnet.tls-pin.v1\\n" + tls_pin + "\\n" + node_id',
            status_code=422,
        )
    if relay_of(body.endpoint) is None and not body.endpoint.startswith("wss://"):
        refused(errors.TLS_PIN_REQUIRED)
        raise TrackerRefusal(
            errors.TLS_PIN_REQUIRED,
            f"a node with a TLS pin serves wss://, not {body.endpoint}",
            status_code=422,
        )


def _check_relay(
    signed: SignedRequest,
    body: Application,
    relays: RelayDirectory,
    tracker_url: str,
    refused: Callable[[str], None],
) -> None:
    """A relayed endpoint is admitted only on a relay this tracker offers, for this node:
    anything else shaped like one is a stranger's host the tracker would dial."""
    relay = relay_of(body.endpoint)
    if relay is None:
        return
    if body.endpoint.rstrip("/").rpartition("/")[2] != signed.node_id:
        refused(errors.UNKNOWN_RELAY)
        raise TrackerRefusal(
            errors.UNKNOWN_RELAY,
            f"the relayed endpoint {body.endpoint} names another node; register "
            "<relay url>/<your node id> with the relay the registration answer offers",
            status_code=422,
        )
    if not relays.known(body.endpoint, tracker_url):
        offered = ", ".join(relays.urls) or relays.offer(signed.node_id, tracker_url) or "none"
        refused(errors.UNKNOWN_RELAY)
        log.info("registration refused node_id=%s unknown-relay: %s", signed.node_id, relay)
        raise TrackerRefusal(
            errors.UNKNOWN_RELAY,
            f"{relay} is not a relay this tracker offers ({offered}); serve through the "
            "relay the registration answer offers, or register your own wss:// endpoint",
            status_code=422,
        )


def _check_nodes_per_host(
    settings: Settings,
    session: Session,
    host: str,
    node_id: str,
    now: float,
    relayed: bool,
) -> None:
    cap = settings.max_nodes_per_address
    if live_nodes_at_host(session, host, now=now, other_than=node_id) >= cap:
        where = "register from" if relayed else "name"
        raise TrackerRefusal(
            errors.TOO_MANY_NODES,
            f"{cap} live nodes already {where} {host} (directly or through a relay), this "
            "tracker's limit per address; stop one of them or run this node elsewhere",
            status_code=409,
        )


def check_join_token(session: Session, token: str | None, now: float, node_id: str) -> None:
    """A private tracker's credential: a known, unrevoked token (an invite's serves only
    its own node). Used by registration and by a job executor's enrolment."""
    if not token:
        raise TrackerRefusal(
            errors.JOIN_TOKEN_REQUIRED,
            f"this tracker runs a private network: send a join token in {HEADER_JOIN_TOKEN} "
            "(the operator issues one with `meshnet-tracker tokens add`)",
            status_code=403,
        )
    if not use_join_token(session, token, now=now):
        raise TrackerRefusal(
            errors.JOIN_TOKEN_INVALID,
            "the join token is unknown or revoked; ask the operator for a new one",
            status_code=403,
        )
    owner = token_owner(session, token)
    if owner is not None and owner != node_id:  # an invite's token serves its own node only
        raise TrackerRefusal(
            errors.JOIN_TOKEN_INVALID,
            "this join token came with an invite redeemed by another node; redeem an invite "
            "with this node's own identity (`meshnet-node join LINK`)",
            status_code=403,
        )


def deregister(database: Database, node_id: str) -> bool:
    """Blocking: a clean stop takes the node out of routing (True if it was known).
    A ban or quarantine is not lifted by it."""
    with database.sessions.begin() as session:
        node = get_node(session, node_id)
        if node is None or node.state in (NODE_BANNED, NODE_QUARANTINED):
            return node is not None  # a clean stop lifts neither
        return end_registration(session, node_id, NODE_DEREGISTERED, "the node stopped cleanly")


def redeem(database: Database, code: str, node_id: str) -> Redeemed:
    """Blocking: an invite code for a join token that serves `node_id` only
    (InviteRefused says why not); the same identity again gets a fresh token."""
    with database.sessions.begin() as session:
        return redeem_invite(session, code, node_id=node_id, now=time.time())


def heartbeat_refused(database: Database, node_id: str, now: float) -> tuple[str, str]:
    """Blocking: (state, sentence) for a heartbeat that refreshed no node: banned and
    quarantined (NODE_BANNED, NODE_QUARANTINED) stay out, any other registers again."""
    with database.engine.connect() as connection:
        return heartbeat_refusal(connection, node_id, now)
