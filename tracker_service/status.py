"""The tracker's state as people and machines read it: models, recipes, nodes."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from tracker_service.recipe_identity import coverage_gap
from tracker_service.relay.directory import relay_of, relayed_sentence
from tracker_service.schemas.state import (
    JobSummaryPublic,
    ModelHealthPublic,
    NodePublic,
    RecipePublic,
    RelayPublic,
    StatePublic,
)
from tracker_service.store.jobs import list_jobs, task_counts
from tracker_service.store.ledger import list_recipes
from tracker_service.store.nodes import (
    LiveNode,
    count_live,
    live_nodes_for_fingerprint,
    recent_nodes,
)
from tracker_service.store.tables import NODE_ACTIVE, Node, Recipe

HEALTHY = "healthy"
BROKEN = "broken"


def relay_public(endpoint: str, why: str = "") -> RelayPublic | None:
    """Serving through a relay, and why (the node's own words when it sent them, else
    the generic sentence); None for a node dialled directly."""
    relay, reason = relay_of(endpoint), relayed_sentence(endpoint, why)
    if relay is None or reason is None:
        return None
    return RelayPublic(url=relay, reason=reason, why=why)


def node_public(node: Node, now: float) -> NodePublic:
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
        load=node.load,
        open_sessions=node.open_sessions,
        tokens_served=node.tokens_served,
        last_seen=node.last_heartbeat_at,
        reachability=node.reachability,
        reachability_reason=node.reachability_reason,
        state_reason=node.state_reason,
        audits_passed=node.audits_passed or 0,
        relay=relay_public(node.endpoint, node.relay_reason or ""),
        quarantine_evidence=node.quarantine_evidence,
    )


def recipe_public(row: Recipe) -> RecipePublic:
    return RecipePublic(
        status=row.status,
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
    )


def model_health(row: Recipe, nodes: Sequence[LiveNode]) -> ModelHealthPublic:
    """Healthy when the live nodes of this fingerprint cover every layer."""
    gap = coverage_gap([(n.shard_start, n.shard_end) for n in nodes], row.layer_count)
    if not nodes:
        detail = "no live node serves this model"
    elif gap is None:
        detail = f"{len(nodes)} live node(s) cover all {row.layer_count} layers"
    else:
        detail = gap
    return ModelHealthPublic(
        artifact_id=row.artifact_id,
        recipe_id=row.recipe_id,
        recipe_version=row.recipe_version,
        model_artifact_digest=row.model_artifact_digest,
        runtime_recipe_digest=row.runtime_recipe_digest,
        layer_count=row.layer_count,
        status=HEALTHY if nodes and gap is None else BROKEN,
        detail=detail,
        live_nodes=len(nodes),
        recipe_status=row.status,
    )


def job_summaries(session: Session, limit: int = 50) -> list[JobSummaryPublic]:
    """The newest batch jobs with their tasks counted per state."""
    jobs = list_jobs(session, limit=limit)
    counts = task_counts(session, [j.job_id for j in jobs])
    return [
        JobSummaryPublic(
            job_id=j.job_id,
            workload=j.workload,
            state=j.state,
            task_count=j.task_count,
            counts=counts[j.job_id],
            created_at=j.created_at,
        )
        for j in jobs
    ]


def collect_state(session: Session, *, now: float, node_limit: int = 1000) -> StatePublic:
    recipes = list_recipes(session)
    # One covering-index scan per recipe; never loads whole node rows.
    models = [
        model_health(
            row,
            live_nodes_for_fingerprint(
                session, row.model_artifact_digest, row.runtime_recipe_digest, now=now
            ),
        )
        for row in recipes
    ]
    shown = recent_nodes(session, limit=node_limit)
    return StatePublic(
        generated_at=now,
        models=models,
        recipes=[recipe_public(row) for row in recipes],
        nodes=[node_public(node, now) for node in shown],
        nodes_total_live=count_live(session, now=now),
        jobs=job_summaries(session),
    )
