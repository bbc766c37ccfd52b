"""Request and response bodies of route requests (``POST /api/v1/routes``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tracker_service.api.schemas.common import FingerprintPublic

HEX64 = r"^[0-9a-f]{64}$"


# The validator's rule, stated in the schema too, so a client (or a fuzzer) reading
# the document knows `{}` names no recipe.
_NAMES_A_RECIPE: dict[str, Any] = {
    "anyOf": [
        {
            "required": ["model_artifact_digest", "runtime_recipe_digest"],
            "properties": {
                "model_artifact_digest": {"type": "string"},
                "runtime_recipe_digest": {"type": "string"},
            },
        },
        {"required": ["artifact_id"], "properties": {"artifact_id": {"type": "string"}}},
    ]
}


class RouteCreate(BaseModel):
    """Name the recipe by its fingerprint, or the model (and optionally the recipe id)."""

    model_config = ConfigDict(json_schema_extra=_NAMES_A_RECIPE)

    model_artifact_digest: str | None = Field(default=None, pattern=HEX64)
    runtime_recipe_digest: str | None = Field(default=None, pattern=HEX64)
    artifact_id: str | None = Field(default=None, max_length=256)
    recipe_id: str | None = Field(default=None, max_length=256)
    purpose: Literal["serve", "certify"] = Field(
        default="serve", description="certify is the certifier's own purpose (admin token)"
    )
    exclude_nodes: list[str] = Field(
        default_factory=list,
        max_length=256,
        description="node ids to leave out, e.g. a hop that just failed (re-route)",
    )

    @model_validator(mode="after")
    def _names_a_recipe(self) -> RouteCreate:
        by_digest = (
            self.model_artifact_digest is not None and self.runtime_recipe_digest is not None
        )
        if not by_digest and self.artifact_id is None:
            raise ValueError(
                "name the recipe: model_artifact_digest and runtime_recipe_digest, or artifact_id"
            )
        return self


class RouteHopPublic(BaseModel):
    node_id: str
    start: int
    end: int
    effective_start: int = Field(description="the layer this hop starts computing at")
    endpoint: str = Field(description="the node's data plane, wss://host:port")
    tls_pin: str = Field(
        default="",
        description="SHA-256 hex of the node's certificate key: a client refuses any other "
        "certificate (tls-pin-mismatch); empty only for a plaintext development node",
    )
    session_url: str
    public_key: str = Field(description="base64 of the node's raw Ed25519 key (receipts)")


class SignedTicketPublic(BaseModel):
    """Signed by the tracker key over b"meshnet.route-ticket.v1\\n" + canonical(ticket)."""

    ticket: dict[str, Any]
    signature: str


class RoutePublic(BaseModel):
    route_session_id: str
    epoch: int
    expires_at: float
    fingerprint: FingerprintPublic
    layer_count: int
    hops: list[RouteHopPublic]
    ticket: SignedTicketPublic
    tracker_public_key: str
