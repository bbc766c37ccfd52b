"""Operator actions: remove or ban a node, revoke a certification or lift that (admin token)."""

from __future__ import annotations

import time

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from tracker_service import errors
from tracker_service.api.deps import AdminDep, Context, TrackerContext
from tracker_service.api.routes import error_responses, refuse
from tracker_service.api.schemas.admin import (
    AdminActionPublic,
    AdminReasonCreate,
    RecipeRevokeCreate,
)
from tracker_service.store.ledger import lift_revocation, revoke_certification
from tracker_service.store.nodes import end_registration
from tracker_service.store.tables import NODE_BANNED, NODE_REMOVED

router = APIRouter(prefix="/api/v1/admin", tags=["admin"], responses=error_responses(401, 403))


def _end(context: TrackerContext, node_id: str, state: str, reason: str) -> bool:
    with context.database.sessions.begin() as session:
        return end_registration(session, node_id, state, reason)


@router.post(
    "/nodes/{node_id}/remove", response_model=AdminActionPublic, responses=error_responses(404)
)
async def remove_node(
    node_id: str, body: AdminReasonCreate, _admin: AdminDep, context: Context
) -> AdminActionPublic:
    """Take a node out of routing; it may register again."""
    if not await run_in_threadpool(_end, context, node_id, NODE_REMOVED, body.reason):
        raise refuse(404, errors.NOT_FOUND, f"no node {node_id} is registered")
    return AdminActionPublic(action="remove", target=node_id, done=True)


@router.post(
    "/nodes/{node_id}/ban", response_model=AdminActionPublic, responses=error_responses(404)
)
async def ban_node(
    node_id: str, body: AdminReasonCreate, _admin: AdminDep, context: Context
) -> AdminActionPublic:
    """Take a node out of routing and refuse its key from now on."""
    if not await run_in_threadpool(_end, context, node_id, NODE_BANNED, body.reason):
        raise refuse(404, errors.NOT_FOUND, f"no node {node_id} is registered")
    return AdminActionPublic(action="ban", target=node_id, done=True)


def _revoke(context: TrackerContext, body: RecipeRevokeCreate) -> bool:
    key = (body.model_artifact_digest, body.runtime_recipe_digest)
    with context.database.sessions.begin() as session:
        return revoke_certification(session, key, reason=body.reason, now=time.time())


@router.post("/recipes/revoke", response_model=AdminActionPublic, responses=error_responses(404))
async def revoke_recipe(
    body: RecipeRevokeCreate, _admin: AdminDep, context: Context
) -> AdminActionPublic:
    """Revoke a recipe: dark (its evidence stays, marked revoked), and the certifier never
    certifies it again until the operator lifts the revocation (``/recipes/unrevoke``)."""
    if not await run_in_threadpool(_revoke, context, body):
        raise refuse(
            404,
            errors.NOT_FOUND,
            "no recipe with this fingerprint is registered, or it is revoked already; "
            "nothing to revoke",
        )
    target = f"{body.model_artifact_digest}/{body.runtime_recipe_digest}"
    return AdminActionPublic(action="revoke", target=target, done=True)


def _unrevoke(context: TrackerContext, body: RecipeRevokeCreate) -> bool:
    key = (body.model_artifact_digest, body.runtime_recipe_digest)
    with context.database.sessions.begin() as session:
        return lift_revocation(session, key, reason=body.reason, now=time.time())


@router.post("/recipes/unrevoke", response_model=AdminActionPublic, responses=error_responses(404))
async def unrevoke_recipe(
    body: RecipeRevokeCreate, _admin: AdminDep, context: Context
) -> AdminActionPublic:
    """Lift a revocation: the recipe stays dark until a fresh forward certifies it."""
    if not await run_in_threadpool(_unrevoke, context, body):
        raise refuse(
            404, errors.NOT_FOUND, "no revoked recipe has this fingerprint; nothing to lift"
        )
    target = f"{body.model_artifact_digest}/{body.runtime_recipe_digest}"
    return AdminActionPublic(action="unrevoke", target=target, done=True)
