"""``GET /api/v1/allocation``: which layers a node of this capacity should serve.

Public and unsigned, like ``/api/v1/state``: it reveals no more than the state
page does (who serves which layers), and a node asks before it has proven or
registered anything. The answer is :func:`tracker_service.domain.allocation.choose_range`
over the model's live nodes plus the ranges this tracker suggested in the last
couple of minutes to nodes not registered yet, so nodes starting together are
spread instead of all sent to the same hole. When those ranges hold no chain
of two or more distinct nodes that the certifier could run through (one node
alone, or nobody but one node holds the first and the last layer), the answer is the
range that completes one: for a second node with room for the whole model, all of it
(``allocation.choose_completing``): without it the recipe stays dark for good.
Then, on a tracker that checks its nodes, a range only one node holds gets a
second holder before the load is spread (``replay_cover.choose_replayer``): no
other node could check it, so it serves no newcomer's answers.
"""

from __future__ import annotations

import math
import statistics
from typing import Annotated

from fastapi import APIRouter, Query
from starlette.concurrency import run_in_threadpool

from tracker_service.api.deps import Context, TrackerContext
from tracker_service.api.routes import error_responses, refuse
from tracker_service.api.schemas.allocation import AllocationPublic
from tracker_service.domain.allocation import (
    Placement,
    arbiter_choice,
    choose_completing,
    choose_range,
    layer_rates,
)
from tracker_service.domain.replay_cover import choose_replayer
from tracker_service.services import views
from tracker_service.services.data_plane import vouch_all
from tracker_service.services.rebalancing import PendingPlacements

router = APIRouter(prefix="/api/v1", tags=["allocation"])

LAYER_COUNT_MISMATCH = "layer-count-mismatch"
UNKNOWN_MODEL = "unknown-model"
MAX_LAYERS = 100_000


def _answer(
    context: TrackerContext,
    pending: PendingPlacements,
    *,
    model: str,
    max_layers: int,
    layer_count: int | None,
    speed: float | None,
    recipe: str | None,
    node_id: str | None,
    uplink: float | None = None,
) -> AllocationPublic:
    groups = views.live_groups(context.database, artifact_id=model, recipe_id=recipe)
    group: views.ServingGroup | None = max(groups, key=lambda g: len(g.slots), default=None)
    if group is not None:
        if layer_count is not None and layer_count != group.layer_count:
            raise refuse(
                422,
                LAYER_COUNT_MISMATCH,
                f"your copy of {model} has {layer_count} layers but the nodes serving it here "
                f"have {group.layer_count}: it is another model; check the model you chose",
            )
        layer_count = group.layer_count
    if layer_count is None:
        raise refuse(
            404,
            UNKNOWN_MODEL,
            f"no node serves {model} on this tracker yet; say how many layers it has "
            "(layer_count) to be told where to start",
        )
    slots = group.slots if group else ()
    # The asker's own entries (a restart, a re-ask) are where it will no longer be.
    placements = [Placement(s.start, s.end, s.rate) for s in slots if s.node_id != node_id]
    pending_key = (model, recipe or "")
    asker = {node_id} if node_id else set()
    placements += pending.live(pending_key, {s.node_id for s in slots} | asker)
    speeds = [p.rate * (p.end - p.start) for p in placements if p.rate > 0]
    if speed is None or speed <= 0:
        speed = statistics.median(speeds) if speeds else 1.0
    rates = layer_rates(layer_count, placements)
    cap = uplink if uplink else math.inf
    # An audit dispute waiting for its arbiter first: until it is decided the disputed
    # nodes serve no one. Then a chain the certifier can run through: without one the
    # model never serves.
    arbiter = context.disputes.recruit(group.key, node_id, max_layers) if group else None
    choice = (
        arbiter_choice(layer_count, rates, arbiter, speed=speed, uplink=cap, model=model)
        if arbiter
        else None
    )
    choice = choice or choose_completing(
        layer_count, placements, max_layers=max_layers, speed=speed, uplink=cap, model=model
    )
    if choice is None and min(rates, default=0.0) > 0.0 and not vouch_all(context.settings):
        # Covered: a range only one node holds cannot be checked, and serves no newcomer's
        # answers, so a second holder comes before spreading the load (replay_cover.py).
        choice = choose_replayer(
            layer_count, placements, max_layers=max_layers, speed=speed, uplink=cap, model=model
        )
    choice = choice or choose_range(
        layer_count, rates, max_layers=max_layers, speed=speed, model=model, uplink=cap
    )
    if choice.start is not None and choice.end is not None and node_id:
        rate = min(speed / (choice.end - choice.start), cap)
        pending.add(pending_key, node_id, Placement(choice.start, choice.end, rate))
    return AllocationPublic(
        model=model,
        layer_count=layer_count,
        fits=choice.fits,
        start=choice.start,
        end=choice.end,
        reason=choice.reason,
        sentence=choice.sentence,
        bottleneck_before=choice.bottleneck_before,
        bottleneck_after=choice.bottleneck_after,
        holes_before=choice.holes_before,
        holes_after=choice.holes_after,
        nodes=len(slots),
    )


@router.get("/allocation", response_model=AllocationPublic, responses=error_responses(404, 422))
async def allocation(
    context: Context,
    model: Annotated[str, Query(min_length=1, max_length=256, description="model (artifact) id")],
    max_layers: Annotated[
        int, Query(ge=0, le=MAX_LAYERS, description="how many layers fit in the node's memory")
    ],
    layer_count: Annotated[
        int | None, Query(ge=1, le=MAX_LAYERS, description="layers of the node's copy")
    ] = None,
    speed: Annotated[
        float | None,
        Query(ge=0, allow_inf_nan=False, description="measured layer-tokens/s (tokens/s x layers)"),
    ] = None,
    recipe: Annotated[str | None, Query(max_length=256, description="recipe id")] = None,
    node_id: Annotated[
        str | None, Query(max_length=64, description="the asking node, to reserve its range")
    ] = None,
    uplink: Annotated[
        float | None,
        Query(gt=0, allow_inf_nan=False, description="tokens/s the node's uplink carries"),
    ] = None,
) -> AllocationPublic:
    """The range that most raises the swarm's bottleneck, holes first, with a sentence."""
    return await run_in_threadpool(
        _answer,
        context,
        context.pending,
        model=model,
        max_layers=max_layers,
        layer_count=layer_count,
        speed=speed,
        recipe=recipe,
        node_id=node_id,
        uplink=uplink,
    )
