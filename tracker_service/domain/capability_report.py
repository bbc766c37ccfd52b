"""The capability report a node registers with (docs/wire.md#capability-report).

Read by the capability gate (domain/capability_gate.py) and carried in the
registration body (api/schemas/nodes.py).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Open(BaseModel):
    # Nodes may report more than this tracker reads; extra keys are kept, not refused.
    model_config = ConfigDict(extra="allow")


class CapabilityModel(_Open):
    model_id: str
    content_digest: str = Field(default="", max_length=128)


class CapabilityShard(_Open):
    # Range sanity is the identity block's to check; this is compared against it.
    start: int
    end: int


class CapabilityRecipe(_Open):
    recipe_id: str
    recipe_version: str
    runtime_recipe_digest: str = Field(default="", max_length=128)


class CapabilityBackend(_Open):
    backend_id: str
    device: str


class CapabilityReportIn(_Open):
    """The node's capability report: one real forward through exactly this shard."""

    model: CapabilityModel
    shard: CapabilityShard
    recipe: CapabilityRecipe
    backend: CapabilityBackend
    status: str
    # Passed is read from `status`; this flag, when sent, must agree with it.
    passed: bool | None = None
    diagnostics: list[str] = Field(default_factory=list)
    validated_at: float = Field(allow_inf_nan=False)
    tokens_per_second: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    wall_time_s: float | None = Field(default=None, ge=0, allow_inf_nan=False)
