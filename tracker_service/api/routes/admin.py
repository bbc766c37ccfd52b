"""Operator actions: remove or ban a node, revoke a certification or lift that (admin token)."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from tracker_service import errors
from tracker_service.api.deps import AdminDep, Context, Database, TrackerContext
from tracker_service.api.routes import error_responses, refuse
from tracker_service.api.schemas.admin import (
    AdminActionPublic,
    AdminReasonCreate,
    RecipeRevokeCreate,
)
from tracker_service.services import operator_actions as actions

router = APIRouter(prefix="/api/v1/admin", tags=["admin"], responses=error_responses(401, 403))


NodeChange = Callable[[Database, str, str], bool]  # actions.remove_node or ban_node
RecipeChange = Callable[..., bool]  # actions.revoke_recipe or lift_revocation


async def _end_node(
    context: TrackerContext, node_id: str, end: NodeChange, reason: str, action: str
) -> AdminActionPublic:
    """Remove and ban differ only in the state the registration ends in."""
    if not await run_in_threadpool(end, context.database, node_id, reason):
        raise refuse(404, errors.NOT_FOUND, f"no node {node_id} is registered")
    return AdminActionPublic(action=action, target=node_id, done=True)


@router.post(
    "/nodes/{node_id}/remove", response_model=AdminActionPublic, responses=error_responses(404)
)
async def remove_node(
    node_id: str, body: AdminReasonCreate, _admin: AdminDep, context: Context
) -> AdminActionPublic:
    """Take a node out of routing; it may register again."""
    return await _end_node(context, node_id, actions.remove_node, body.reason, "remove")


@router.post(
    "/nodes/{node_id}/ban", response_model=AdminActionPublic, responses=error_responses(404)
)
async def ban_node(
    node_id: str, body: AdminReasonCreate, _admin: AdminDep, context: Context
) -> AdminActionPublic:
    """Take a node out of routing and refuse its key from now on."""
    return await _end_node(context, node_id, actions.ban_node, body.reason, "ban")


def _change(context: TrackerContext, change: RecipeChange, body: RecipeRevokeCreate) -> bool:
    key = (body.model_artifact_digest, body.runtime_recipe_digest)
    return change(context.database, key, body.reason)


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
    return await _change_recipe(context, actions.revoke_recipe, body, "revoke", missing)


@router.post("/recipes/unrevoke", response_model=AdminActionPublic, responses=error_responses(404))
async def unrevoke_recipe(
    body: RecipeRevokeCreate, _admin: AdminDep, context: Context
) -> AdminActionPublic:
    """Lift a revocation: the recipe stays dark until a fresh forward certifies it."""
    missing = "no revoked recipe has this fingerprint; nothing to lift"
    return await _change_recipe(context, actions.lift_revocation, body, "unrevoke", missing)
