"""The table of what the tracker measured of each node's speed.

Kept apart from ``tables.py`` (same ``Base``), as the credit and invite tables are;
the migration ``0015_node_speeds.py`` must describe exactly this table. One row per
node and model artifact: a layer of another model costs another time. Heartbeats
never touch it, so measuring adds nothing to the heartbeat path.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Float, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from tracker_service.store.tables import HEX64, NODE_ID_LEN, Base


class NodeSpeed(Base):
    """Moving mean of the ms one layer costs the node per token, over its timed decode
    steps (domain/measured_speed.py)."""

    __tablename__ = "node_speeds"

    # The artifact first: route formation reads one model's nodes at a time.
    model_artifact_digest: Mapped[str] = mapped_column(String(HEX64), primary_key=True)
    node_id: Mapped[str] = mapped_column(String(NODE_ID_LEN), primary_key=True)
    ms_per_layer: Mapped[float] = mapped_column(Float)
    steps: Mapped[int] = mapped_column(BigInteger, default=0)
    updated_at: Mapped[float] = mapped_column(Float)

    # The status page and a node's removal look a node up by its id alone.
    __table_args__ = (Index("ix_node_speeds_node_id", "node_id"),)
