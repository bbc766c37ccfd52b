"""What routes depend on, as ``Annotated`` aliases.

The :class:`TrackerContext` is built once in ``create_app`` and kept on
``app.state``; the next features (dialer, routes, certifier, gateway) hang off it.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from tracker_service import errors
from tracker_service.api.metrics import TrackerMetrics
from tracker_service.config import Settings
from tracker_service.domain.keys import TrackerKey
from tracker_service.security.auth import (
    NonceBook,
    PublicKeyCache,
    SignedRequest,
    verify_signed_request,
)
from tracker_service.services.departures import Departures
from tracker_service.services.disputes import DisputeBoard
from tracker_service.services.rebalancing import PendingPlacements, RebalanceBoard
from tracker_service.store.db import Database
from tracker_service.store.group_commit import HeartbeatCommits
from tracker_service.store.ledger import PersistentLedger


@dataclass
class TrackerContext:
    settings: Settings
    database: Database
    key: TrackerKey
    ledger: PersistentLedger
    metrics: TrackerMetrics
    public_keys: PublicKeyCache
    nonces: NonceBook
    heartbeats: HeartbeatCommits = field(init=False)
    # Allocation's memory: ranges suggested to newcomers, moves suggested to serving nodes.
    pending: PendingPlacements = field(default_factory=PendingPlacements)
    rebalance: RebalanceBoard = field(default_factory=RebalanceBoard)
    # Audit disagreements no third node could decide yet (disputes.py).
    disputes: DisputeBoard = field(default_factory=DisputeBoard)
    # Nodes that announced they leave, told to the gateway's route sessions through them.
    departures: Departures = field(default_factory=Departures)

    def __post_init__(self) -> None:
        self.heartbeats = HeartbeatCommits(self.database)


# Dependencies that do no blocking work are `async def`: FastAPI would run a plain
# `def` dependency in a worker thread, a hop that costs more than the lookup.
async def get_context(request: Request) -> TrackerContext:
    return context_of(request)


def context_of(request: Request) -> TrackerContext:
    """The context without dependency injection, for the heartbeat hot path."""
    context: TrackerContext = request.app.state.tracker
    return context


Context = Annotated[TrackerContext, Depends(get_context)]


async def get_settings(context: Context) -> Settings:
    return context.settings


async def get_key(context: Context) -> TrackerKey:
    return context.key


def get_session(context: Context) -> Iterator[Session]:
    """A session for sync routes; the route commits what it changes."""
    with context.database.session() as session:
        yield session


SettingsDep = Annotated[Settings, Depends(get_settings)]
TrackerKeyDep = Annotated[TrackerKey, Depends(get_key)]
SessionDep = Annotated[Session, Depends(get_session)]


async def verified_request(
    request: Request, context: TrackerContext, *, key_from_body: bool = False
) -> SignedRequest:
    """A node's signed request, verified and its nonce spent (see security/auth.py);
    a refusal is counted by reason. ``key_from_body``: a registration, whose public
    key arrives in the body it signs."""
    try:
        return await verify_signed_request(
            request,
            database=context.database,
            keys=context.public_keys,
            nonces=context.nonces,
            key_from_body=key_from_body,
        )
    except errors.AuthRefused as exc:
        context.metrics.auth_refusals.labels(exc.reason).inc()
        raise


async def signed_node(request: Request, context: Context) -> SignedRequest:
    """The signed request of a node the tracker knows."""
    return await verified_request(request, context)


async def signed_registration(request: Request, context: Context) -> SignedRequest:
    """The signed request of a node announcing its key in the body."""
    return await verified_request(request, context, key_from_body=True)


SignedNode = Annotated[SignedRequest, Depends(signed_node)]
SignedRegistration = Annotated[SignedRequest, Depends(signed_registration)]


async def require_admin(request: Request, context: Context) -> None:
    expected = context.settings.admin_token
    given = request.headers.get("Authorization", "")
    if not expected:
        raise errors.TrackerRefusal(
            errors.ADMIN_REQUIRED,
            "admin actions are disabled: set MESHNET_TRACKER_ADMIN_TOKEN on the tracker",
            status_code=403,
        )
    if not hmac.compare_digest(given.encode(), f"Bearer {expected}".encode()):
        raise errors.TrackerRefusal(
            errors.ADMIN_REQUIRED,
            "this action needs the tracker's admin token as 'Authorization: Bearer <token>'",
            status_code=401,
        )


AdminDep = Annotated[None, Depends(require_admin)]
