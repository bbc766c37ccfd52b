"""The tracker's state, for the JSON API and the status page alike."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class RelayPublic(BaseModel):
    url: str = Field(description="the relay clients reach this node through")
    reason: str = Field(description="why: serving through a relay, in a sentence")
    why: str = Field(
        default="",
        description="the node's own reason (registration's relay_reason); empty when it "
        "gave none, and the reason is then the generic sentence",
    )


class NodePublic(BaseModel):
    node_id: str
    endpoint: str
    state: str
    live: bool
    artifact_id: str
    recipe_id: str
    recipe_version: str
    model_artifact_digest: str
    runtime_recipe_digest: str
    shard_start: int
    shard_end: int
    throughput: float = Field(description="tokens/s the node claims (unchecked)")
    measured_throughput: float | None = Field(
        default=None,
        description="tokens/s through its shard as the tracker measured its route sessions' "
        "decode steps: what routing weighs (never more than the claim); null until measured",
    )
    measured_steps: int = Field(default=0, description="decode steps behind that measurement")
    load: float
    open_sessions: int
    tokens_served: int
    last_seen: float
    reachability: str
    reachability_reason: str
    state_reason: str = ""
    audits_passed: int = Field(default=0, description="hop audits this identity has passed")
    relay: RelayPublic | None = Field(
        default=None, description="set when the node serves through a relay, with why"
    )
    tls_pin: str = Field(
        default="",
        description="SHA-256 hex of the data plane certificate's key, signed by the node "
        "(docs/wire.md#tls); empty for a plaintext development node",
    )
    quarantine_evidence: dict[str, Any] | None = Field(
        default=None,
        description="when quarantined: the hop, each node's output digest and its own "
        "signed receipt binding it to that output (the accused's and the auditors')",
    )


class RecipePublic(BaseModel):
    status: str = Field(description="dark or certified")
    source: str = Field(
        default="unapproved",
        description="the operator's word on its weights (model artifact digest) under its "
        "name: allowed, denied or unapproved; only an allowed source serves users "
        "(`meshnet-tracker models allow`)",
    )
    detail: str
    artifact_id: str
    recipe_id: str
    recipe_version: str
    catalogue_version: str
    layer_count: int
    model_artifact_digest: str
    runtime_recipe_digest: str
    first_seen_at: float
    certified_at: float | None
    certified_route_session: str | None
    certified_node_count: int | None
    last_certification_failure: str | None = Field(
        default=None,
        description="why the recipe is dark: a failed attempt, evidence that no longer "
        "verifies, or a revocation (the detail stays the dark sentence)",
    )
    revoked: bool = Field(
        default=False,
        description="the operator revoked it: dark and never certified again until the "
        "operator lifts the revocation",
    )
    reverify_reason: str | None = Field(
        default=None,
        description="while set, a node that helped certify the recipe was quarantined and "
        "the certifier verifies it again by routes without that node",
    )


class ModelHealthPublic(BaseModel):
    artifact_id: str
    recipe_id: str
    recipe_version: str
    model_artifact_digest: str
    runtime_recipe_digest: str
    layer_count: int
    status: str = Field(
        description="healthy; broken where some layer has no live node; disputed where only "
        "nodes in an open audit dispute (which serve no one until it is settled) cover some layer"
    )
    detail: str
    live_nodes: int
    recipe_status: str


class JobSummaryPublic(BaseModel):
    """A batch job as the status page shows it (details: GET /api/v1/jobs/{id})."""

    job_id: str
    workload: str
    state: str
    task_count: int
    counts: dict[str, int] = Field(description="tasks per state")
    created_at: float


class StatePublic(BaseModel):
    generated_at: float
    models: list[ModelHealthPublic]
    recipes: list[RecipePublic]
    nodes: list[NodePublic] = Field(
        description="without `limit`/`cursor`: the nodes most recently heard from (at most "
        "1,000); with them: one page of nodes ordered by node id"
    )
    nodes_total_live: int
    nodes_total: int = Field(default=0, description="node rows of any state, live or not")
    next_cursor: str | None = Field(
        default=None,
        description="pass as `cursor` for the next page of nodes; null on the last page "
        "and without paging",
    )
    jobs: list[JobSummaryPublic] = Field(default_factory=list, description="recent batch jobs")
