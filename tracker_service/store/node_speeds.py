"""What the tracker measured of each node's speed: read by route formation, moved
by the speed meter (services/speed_meter.py).

Plain functions over a Session; callers own the transaction. A batch of timed steps
moves the stored moving mean in one read and one write per node. Two tracker
processes writing the same node at the same instant may lose one of the two
batches: a few steps of a moving mean, never a wrong figure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from tracker_service.domain.measured_speed import MeasuredSpeed, blend
from tracker_service.store.speed_tables import NodeSpeed


@dataclass(frozen=True)
class TimedSteps:
    """Decode steps of one node, timed by the tracker since the last write."""

    node_id: str
    artifact: str
    ms_per_layer: float  # their mean per-layer cost
    steps: int


def measured_speeds(session: Session, artifact: str) -> dict[str, MeasuredSpeed]:
    """Every measured node of one model artifact: node_id -> its measurement."""
    query = select(NodeSpeed.node_id, NodeSpeed.ms_per_layer, NodeSpeed.steps).where(
        NodeSpeed.model_artifact_digest == artifact
    )
    return {row[0]: MeasuredSpeed(float(row[1]), int(row[2])) for row in session.execute(query)}


def speeds_of(session: Session, node_ids: Iterable[str]) -> dict[tuple[str, str], MeasuredSpeed]:
    """(node_id, artifact) -> measurement, for the nodes named (the status page)."""
    ids = list(node_ids)
    if not ids:
        return {}
    query = select(
        NodeSpeed.node_id, NodeSpeed.model_artifact_digest, NodeSpeed.ms_per_layer, NodeSpeed.steps
    ).where(NodeSpeed.node_id.in_(ids))
    return {
        (row[0], row[1]): MeasuredSpeed(float(row[2]), int(row[3]))
        for row in session.execute(query)
    }


def record_steps(
    session: Session, batches: Iterable[TimedSteps], *, alpha: float, now: float
) -> dict[tuple[str, str], MeasuredSpeed]:
    """Blend each batch into its node's stored mean; returns the new measurements."""
    merged: dict[tuple[str, str], TimedSteps] = {}
    for batch in batches:
        if batch.steps <= 0:
            continue
        key = (batch.node_id, batch.artifact)
        seen = merged.get(key)
        if seen is not None:  # two batches of one node: one weighted mean
            total = seen.steps + batch.steps
            mean = (seen.ms_per_layer * seen.steps + batch.ms_per_layer * batch.steps) / total
            batch = TimedSteps(batch.node_id, batch.artifact, mean, total)
        merged[key] = batch
    if not merged:
        return {}
    stored = _stored(session, merged)
    result: dict[tuple[str, str], MeasuredSpeed] = {}
    for key, batch in merged.items():
        old = stored.get(key)
        new = blend(old, batch.ms_per_layer, batch.steps, alpha=alpha)
        if old is None:
            session.add(
                NodeSpeed(
                    model_artifact_digest=batch.artifact,
                    node_id=batch.node_id,
                    ms_per_layer=new.ms_per_layer,
                    steps=new.steps,
                    updated_at=now,
                )
            )
        else:
            session.execute(
                update(NodeSpeed)
                .where(
                    NodeSpeed.model_artifact_digest == batch.artifact,
                    NodeSpeed.node_id == batch.node_id,
                )
                .values(ms_per_layer=new.ms_per_layer, steps=new.steps, updated_at=now)
                .execution_options(synchronize_session=False)
            )
        result[key] = new
    session.flush()
    return result


def _stored(
    session: Session, wanted: Mapping[tuple[str, str], TimedSteps]
) -> dict[tuple[str, str], MeasuredSpeed]:
    ids = sorted({node_id for node_id, _ in wanted})
    return {key: speed for key, speed in speeds_of(session, ids).items() if key in wanted}
