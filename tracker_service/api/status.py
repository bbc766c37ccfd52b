"""The tracker's state as people and machines read it: models, recipes, nodes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row
from sqlalchemy.orm import Session

from tracker_service.api.schemas.state import (
    JobSummaryPublic,
    ModelHealthPublic,
    NodePublic,
    RecipePublic,
    RelayPublic,
    StatePublic,
)
from tracker_service.domain.measured_speed import MeasuredSpeed
from tracker_service.domain.recipe_identity import coverage_gap
from tracker_service.relay.directory import relay_of, relayed_sentence
from tracker_service.services import state_view
from tracker_service.services.disputes import DisputeBoard
from tracker_service.services.state_view import (
    NODE_ACTIVE,
    NODE_ID_LEN,
    SOURCE_UNAPPROVED,
    Node,
    Recipe,
    status_of,
)

HEALTHY = "healthy"
BROKEN = "broken"
DISPUTED = "disputed"  # no route is left without the nodes of an open audit dispute
# The most nodes one /api/v1/state answer lists (also its default without paging).
MAX_NODE_PAGE = 1000


def relay_public(endpoint: str, why: str = "") -> RelayPublic | None:
    """Serving through a relay, and why (the node's own words when it sent them, else
    the generic sentence); None for a node dialled directly."""
    relay, reason = relay_of(endpoint), relayed_sentence(endpoint, why)
    if relay is None or reason is None:
        return None
    return RelayPublic(url=relay, reason=reason, why=why)


@dataclass(frozen=True)
class NodePage:
    """A keyset page of the node list: nodes by id after `after` (None: the first)."""

    limit: int
    after: str | None = None


def node_public(
    node: Node | Row[Any], now: float, speed: MeasuredSpeed | None = None
) -> NodePublic:
    """`speed`: what the tracker measured of the node on its model (None: nothing yet)."""
    measured = None
    if speed is not None and speed.steps > 0:
        # What routing weighs: the measurement, lowered by a lower claim.
        measured = speed.tokens_per_s(node.shard_end - node.shard_start)
        if node.throughput > 0:
            measured = min(measured, node.throughput)
    return NodePublic(
        node_id=node.node_id,
        endpoint=node.endpoint,
        state=node.state,
        live=node.state == NODE_ACTIVE and node.live_until >= now,
        artifact_id=node.artifact_id,
        recipe_id=node.recipe_id,
        recipe_version=node.recipe_version,
        model_artifact_digest=node.model_artifact_digest,
        runtime_recipe_digest=node.runtime_recipe_digest,
        shard_start=node.shard_start,
        shard_end=node.shard_end,
        throughput=node.throughput,
        measured_throughput=measured,
        measured_steps=speed.steps if speed is not None else 0,
        load=node.load,
        open_sessions=node.open_sessions,
        tokens_served=node.tokens_served,
        last_seen=node.last_heartbeat_at,
        reachability=node.reachability,
        reachability_reason=node.reachability_reason,
        state_reason=node.state_reason,
        audits_passed=node.audits_passed or 0,
        relay=relay_public(node.endpoint, node.relay_reason or ""),
        tls_pin=node.tls_pin or "",
        quarantine_evidence=node.quarantine_evidence,
    )


def recipe_public(row: Recipe, source: str = SOURCE_UNAPPROVED) -> RecipePublic:
    return RecipePublic(
        status=row.status,
        source=source,
        detail=row.detail,
        artifact_id=row.artifact_id,
        recipe_id=row.recipe_id,
        recipe_version=row.recipe_version,
        catalogue_version=row.catalogue_version,
        layer_count=row.layer_count,
        model_artifact_digest=row.model_artifact_digest,
        runtime_recipe_digest=row.runtime_recipe_digest,
        first_seen_at=row.first_seen_at,
        certified_at=row.certified_at,
        certified_route_session=row.certified_route_session,
        certified_node_count=row.certified_node_count,
        last_certification_failure=row.last_failure or None,
        revoked=row.revoked_at is not None,
        reverify_reason=row.reverify_reason or None,
    )


def model_health(row: Recipe, shapes: list[tuple[int, int, int]]) -> ModelHealthPublic:
    """Healthy when the live nodes of this fingerprint cover every layer.

    `shapes`: (start, end, live nodes serving exactly that range).
    """
    gap = coverage_gap([(start, end) for start, end, _ in shapes], row.layer_count)
    live = sum(count for *_, count in shapes)
    if not live:
        detail = "no live node serves this model"
    elif gap is None:
        detail = f"{live} live node(s) cover all {row.layer_count} layers"
    else:
        detail = gap
    return ModelHealthPublic(
        artifact_id=row.artifact_id,
        recipe_id=row.recipe_id,
        recipe_version=row.recipe_version,
        model_artifact_digest=row.model_artifact_digest,
        runtime_recipe_digest=row.runtime_recipe_digest,
        layer_count=row.layer_count,
        status=HEALTHY if live and gap is None else BROKEN,
        detail=detail,
        live_nodes=live,
        recipe_status=row.status,
    )


def job_summaries(session: Session, limit: int = 50) -> list[JobSummaryPublic]:
    """The newest batch jobs with their tasks counted per state."""
    return [
        JobSummaryPublic(
            job_id=j.job_id,
            workload=j.workload,
            state=j.state,
            task_count=j.task_count,
            counts=counts,
            created_at=j.created_at,
        )
        for j, counts in state_view.recent_jobs(session, limit)
    ]


def collect_state(
    session: Session,
    *,
    now: float,
    page: NodePage | None = None,
    sources: dict[tuple[str, str], str] | None = None,
) -> StatePublic:
    """The whole state; its node list is the most recently heard from (up to
    MAX_NODE_PAGE) unless `page` asks for a keyset page by node id. `sources`: the
    operator's word on each recipe's weights (store/model_sources.py)."""
    sources = sources or {}
    served = state_view.recipes_with_shapes(session, now=now)
    recipes = [row for row, _ in served]
    models = [model_health(row, shapes) for row, shapes in served]
    shown, next_after = state_view.node_page(
        session,
        limit=None if page is None else page.limit,
        after=None if page is None else page.after,
        most=MAX_NODE_PAGE,
    )
    speeds = state_view.node_speeds(session, [node.node_id for node in shown])
    live_count, total_count = state_view.node_counts(session, now=now)
    return StatePublic(
        generated_at=now,
        models=models,
        recipes=[
            recipe_public(row, status_of(sources, row.artifact_id, row.model_artifact_digest))
            for row in recipes
        ],
        nodes=[
            node_public(node, now, speeds.get((node.node_id, node.model_artifact_digest)))
            for node in shown
        ],
        nodes_total_live=live_count,
        nodes_total=total_count,
        next_cursor=None if next_after is None else encode_cursor(next_after),
        jobs=job_summaries(session),
    )


# A cursor is the hex of the last node id shown, each byte printable ASCII (0x20-0x7e).
# Every string this pattern admits is a position, so a schema-valid cursor is never
# refused; the empty one is the first page.
CURSOR_PATTERN = rf"^(?:[2-6][0-9a-f]|7[0-9a-e]){{0,{NODE_ID_LEN}}}$"
_CURSOR = re.compile(CURSOR_PATTERN)


def apply_disputes(
    session: Session, state: StatePublic, board: DisputeBoard, *, now: float
) -> StatePublic:
    """Say so where an open audit dispute withdraws nodes; unavailable where no route is left.

    The disputed nodes serve no user meanwhile (route_planner.py), so a model whose
    other live nodes leave a layer uncovered is shown ``disputed`` with the reason
    instead of healthy."""
    for model in state.models:
        key = (model.model_artifact_digest, model.runtime_recipe_digest)
        why = board.sentence(key)
        if why is None:
            continue
        withdrawn = board.withdrawn(key)
        left = state_view.live_ranges(session, key, now=now, without=withdrawn)
        if coverage_gap(left, model.layer_count) is None:
            model.detail = f"{model.detail}; {why}"
        else:
            model.status = DISPUTED
            model.detail = f"unavailable: {why}"
    return state


def encode_cursor(node_id: str) -> str:
    """The `cursor` of the page after `node_id`: its bytes in hex (URL-safe, any node id)."""
    return node_id.encode("ascii").hex()


def decode_cursor(cursor: str) -> str | None:
    """The node id the next page starts after (None: the first page).

    Raises ValueError for a string :data:`CURSOR_PATTERN` does not admit."""
    if not _CURSOR.match(cursor):
        raise ValueError(f"not a cursor: {cursor[:80]!r}")
    return bytes.fromhex(cursor).decode("ascii") or None
