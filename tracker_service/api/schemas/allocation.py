"""The answer to "which layers should a node of this capacity serve?"."""

from __future__ import annotations

from pydantic import BaseModel, Field


class AllocationPublic(BaseModel):
    model: str
    layer_count: int
    fits: bool = Field(description="false: no useful range fits in the node's memory")
    start: int | None = Field(default=None, description="first layer to serve")
    end: int | None = Field(default=None, description="one past the last layer (exclusive)")
    reason: str = Field(
        description="hole, chain, arbiter, replayer, bottleneck, balanced or too-little-memory"
    )
    sentence: str = Field(description="why this range, for the contributor")
    bottleneck_before: float = Field(description="slowest layer's tokens/s now")
    bottleneck_after: float = Field(description="slowest layer's tokens/s with this node")
    holes_before: int
    holes_after: int
    nodes: int = Field(description="live nodes of the model counted")
