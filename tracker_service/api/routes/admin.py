"""Operator actions: remove or ban a node, revoke a certification or lift that (admin token)."""

from __future__ import annotations

import time
from collections.abc import Callable

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


RecipeChange = Callable[..., bool]  # revoke_certification or lift_revocation


def _end(context: TrackerContext, node_id: str, state: str, reason: str) -> bool:
    with context.database.sessions.begin() as session:
        return end_registration(session, node_id, state, reason)


async def _end_node(
    context: TrackerContext, node_id: str, state: str, reason: str, action: str
) -> AdminActionPublic:
    """Remove and ban differ only in the state the registration ends in."""
    if not await run_in_threadpool(_end, context, node_id, state, reason):
        raise refuse(404, errors.NOT_FOUND, f"no node {node_id} is registered")
    return AdminActionPublic(action=action, target=node_id, done=True)


@router.post(
    "/nodes/{node_id}/remove", response_model=AdminActionPublic, responses=error_responses(404)
)
async def remove_node(
    node_id: str, body: AdminReasonCreate, _admin: AdminDep, context: Context
) -> AdminActionPublic:
    """Take a node out of routing; it may register again."""
    return await _end_node(context, node_id, NODE_REMOVED, body.reason, "remove")


@router.post(
    "/nodes/{node_id}/ban", response_model=AdminActionPublic, responses=error_responses(404)
)
async def ban_node(
    node_id: str, body: AdminReasonCreate, _admin: AdminDep, context: Context
) -> AdminActionPublic:
    """Take a node out of routing and refuse its key from now on."""
    return await _end_node(context, node_id, NODE_BANNED, body.reason, "ban")


def _change(context: TrackerContext, change: RecipeChange, body: RecipeRevokeCreate) -> bool:
    key = (body.model_artifact_digest, body.runtime_recipe_digest)
    with context.database.sessions.begin() as session:
        return change(session, key, reason=body.reason, now=time.time())


async def _change_recipe(
    context: TrackerContext,
    change: RecipeChange,
    body: RecipeRevokeCreate,
    action: str,
    missing: str,
) -> AdminActionPublic:
    """Revoke and unrevoke differ only in the ledger call and the 404's sentence."""
    if not await run_in_threadpool(_change, context, change, body):
        raise refuse(404, errors.NOT_FOUND, missing)
    target = f"{body.model_artifact_digest}/{body.runtime_recipe_digest}"
    return AdminActionPublic(action=action, target=target, done=True)


@router.post("/recipes/revoke", response_model=AdminActionPublic, responses=error_responses(404))
async def revoke_recipe(
    body: RecipeRevokeCreate, _admin: AdminDep, context: Context
) -> AdminActionPublic:
    """Revoke a recipe: dark (its evidence stays, marked revoked), and the certifier never
    certifies it again until the operator lifts the revocation (``/recipes/unrevoke``)."""
    missing = (
        "no recipe with this fingerprint is registered, or it is revoked already; nothing to revoke"
    )
    return await _change_recipe(context, revoke_certification, body, "revoke", missing)


@router.post("/recipes/unrevoke", response_model=AdminActionPublic, responses=error_responses(404))
async def unrevoke_recipe(
    body: RecipeRevokeCreate, _admin: AdminDep, context: Context
) -> AdminActionPublic:
    """Lift a revocation: the recipe stays dark until a fresh forward certifies it."""
    missing = "no revoked recipe has this fingerprint; nothing to lift"
    return await _change_recipe(context, lift_revocation, body, "unrevoke", missing)
