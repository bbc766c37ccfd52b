"""Request and response bodies of node registration, heartbeat and deregistration."""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, field_validator

from tracker_service.api.schemas.common import FingerprintPublic, RecipeStatusPublic
from tracker_service.domain.capability_report import CapabilityReportIn

# What a node may say about why it is relayed: one short line, shown as text.
RELAY_REASON_MAX = 300


class NodeRegisterCreate(BaseModel):
    public_key: str = Field(description="base64 of the raw 32-byte Ed25519 public key")
    identity: dict[str, Any] = Field(description="the schema-1 recipe identity block")
    capability: CapabilityReportIn | None = Field(
        default=None, description="the doctor's report; without one the node is refused"
    )
    endpoint: str = Field(max_length=512, description="data-plane URL, ws://host:port")
    device_class: str | None = Field(
        default=None,
        max_length=32,
        description="the class of device the node serves on (cpu, cuda or mps); the "
        "capability report must have been made on a device of this class, and a "
        "registration without one is refused (backend-mismatch)",
    )
    tls_pin: str | None = Field(
        default=None,
        max_length=64,
        description="SHA-256 hex of the data plane certificate's SubjectPublicKeyInfo "
        "(docs/wire.md#tls); required unless the tracker allows plaintext nodes",
    )
    tls_pin_signature: str | None = Field(
        default=None,
        max_length=128,
        description='base64 Ed25519 signature of b"meshnet.tls-pin.v1\\n" + tls_pin + '
        '"\\n" + node_id by the node\'s key',
    )
    relay_reason: str | None = Field(
        default=None,
        max_length=RELAY_REASON_MAX,
        description="with a relayed endpoint: why the node serves through a relay, in a "
        "short plain sentence (the tracker's failed dial, or --relay)",
    )

    @field_validator("relay_reason")
    @classmethod
    def _reason_is_plain_text(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if any(not ch.isprintable() for ch in value):
            raise ValueError("relay_reason must be one line of plain text (no control characters)")
        return value.strip() or None

    @field_validator("endpoint")
    @classmethod
    def _endpoint_is_websocket(cls, value: str) -> str:
        if "\x00" in value:
            raise ValueError("endpoint contains a NUL character")
        parts = urlsplit(value)
        if parts.scheme not in ("ws", "wss") or not parts.hostname:
            raise ValueError("endpoint must be ws://host:port or wss://host:port")
        try:
            port = parts.port
        except ValueError as exc:
            raise ValueError(f"endpoint port is not a number: {value}") from exc
        if port is None:
            raise ValueError("endpoint must name its port (ws://host:port)")
        return value


class SessionCredentialPublic(BaseModel):
    """Signed by the tracker key over b"meshnet.node-session.v1\\n" + canonical(credential)."""

    credential: dict[str, Any] = Field(
        description="node_id, session_id, shard_binding_digest, issued_at, expires_at"
    )
    signature: str


class RelayOfferPublic(BaseModel):
    url: str = Field(
        description="ws://host:port/relay: where this node holds its link if the "
        "tracker cannot dial it; it then registers url + '/' + node_id"
    )


class NodeRegisterPublic(BaseModel):
    node_id: str
    session: SessionCredentialPublic
    heartbeat_interval_s: float
    live_window_s: float
    tracker_public_key: str = Field(description="base64 of the tracker's raw Ed25519 key")
    fingerprint: FingerprintPublic
    shard_binding_digest: str
    recipe: RecipeStatusPublic
    rebound: bool = Field(
        description="true when this node id was registered before with other bytes"
    )
    relay: RelayOfferPublic | None = Field(
        default=None, description="the relay to use when the tracker cannot dial this node"
    )
    capability_max_age_s: float = Field(
        description="the oldest capability report (seconds since validated_at) this tracker "
        "admits; a node proves its layers again and re-registers before its report is this "
        "old, and re-proves before any later registration once it is"
    )


# Finite floats and bounded ints: NaN, infinities or 2**70 would otherwise reach
# the database and fail there (a 500) instead of here (a 422).
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


class HeartbeatCreate(BaseModel):
    load: float = Field(ge=0, allow_inf_nan=False)
    open_sessions: int = Field(ge=0, le=INT32_MAX)
    tokens_served: int = Field(ge=0, le=INT64_MAX)
    throughput: float | None = Field(default=None, ge=0, allow_inf_nan=False)


class HeartbeatPublic(BaseModel):
    status: Literal["ok"] = "ok"
    live_until: float
    session_expires_at: float
    heartbeat_interval_s: float
    # How the tracker sees the node, so it need not fetch /api/v1/state to show it.
    reachability: str = Field(
        default="unchecked", description="reachable, unreachable or unchecked"
    )
    reachability_reason: str = ""
    recipe_status: str = Field(default="unknown", description="dark or certified")
    recipe_detail: str = ""
    # Rebalancing: a range that would lift the swarm's bottleneck by a clear margin.
    suggested_layers: list[int] | None = Field(
        default=None, description="[start, end) the tracker suggests moving to, when idle"
    )
    suggestion: str = ""
    suggestion_urgent: bool = Field(
        default=False,
        description="the model cannot serve until this move is made (a hole, or no chain "
        "of nodes to certify it): an idle node moves without waiting out its dwell time",
    )


class DeregisterPublic(BaseModel):
    status: Literal["deregistered"] = "deregistered"
    node_id: str
