"""SQLAlchemy 2 table models of the tracker's store.

Times are unix seconds as floats: comparisons stay cheap and identical on SQLite
and PostgreSQL. The migration in ``tracker_service/migrations/versions`` must
describe exactly these tables; a test compares the two.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

HEX64 = 64
NODE_ID_LEN = 32
# Widths of the text columns identity fields land in; longer values are refused
# with 422 at registration (see store.nodes.storage_problem), never truncated.
ID_TEXT_LEN = 256
VERSION_TEXT_LEN = 64
ARCH_TEXT_LEN = 128
INT32_MAX = 2**31 - 1

# Node states. Only "active" nodes whose live_until lies ahead take part in routing.
NODE_ACTIVE = "active"
NODE_DEREGISTERED = "deregistered"
NODE_REMOVED = "removed"
NODE_BANNED = "banned"
# Caught by a hop audit returning outputs the other nodes did not: out of routing,
# heartbeats refused, and re-registering under the same identity does not lift it.
NODE_QUARANTINED = "quarantined"

# Reachability of a node's data plane, filled in by the dialer (next issue).
REACH_UNCHECKED = "unchecked"
REACH_REACHABLE = "reachable"
REACH_UNREACHABLE = "unreachable"


class Base(DeclarativeBase):
    pass


class Node(Base):
    __tablename__ = "nodes"

    node_id: Mapped[str] = mapped_column(String(NODE_ID_LEN), primary_key=True)
    public_key: Mapped[bytes] = mapped_column(LargeBinary(32))
    endpoint: Mapped[str] = mapped_column(String(512))
    state: Mapped[str] = mapped_column(String(16), default=NODE_ACTIVE)
    state_reason: Mapped[str] = mapped_column(Text, default="")
    # What a hop audit found (both nodes' answers' digests, the auditors' signed
    # receipts); set when the node is quarantined.
    quarantine_evidence: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # Audits this identity has passed; under the tracker's probation count it is
    # audited at the higher probation rate (a new identity starts at 0).
    audits_passed: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    # The fingerprint route formation partitions by, re-derived by the tracker.
    model_artifact_digest: Mapped[str] = mapped_column(String(HEX64))
    runtime_recipe_digest: Mapped[str] = mapped_column(String(HEX64))
    # The bytes and range this node was admitted with; other bytes = new registration.
    shard_binding_digest: Mapped[str] = mapped_column(String(HEX64))
    artifact_id: Mapped[str] = mapped_column(String(ID_TEXT_LEN))
    recipe_id: Mapped[str] = mapped_column(String(ID_TEXT_LEN))
    recipe_version: Mapped[str] = mapped_column(String(VERSION_TEXT_LEN))
    layer_count: Mapped[int] = mapped_column(Integer)
    shard_start: Mapped[int] = mapped_column(Integer)
    shard_end: Mapped[int] = mapped_column(Integer)
    identity: Mapped[dict[str, Any]] = mapped_column(JSON)
    capability: Mapped[dict[str, Any]] = mapped_column(JSON)

    # Measured tokens/s: from the capability report, then from heartbeats.
    throughput: Mapped[float] = mapped_column(Float, default=0.0)
    load: Mapped[float] = mapped_column(Float, default=0.0)
    open_sessions: Mapped[int] = mapped_column(Integer, default=0)
    # Counts for the node's lifetime; 32 bits would overflow on a busy node.
    tokens_served: Mapped[int] = mapped_column(BigInteger, default=0)

    session_id: Mapped[str] = mapped_column(String(32))
    session_expires_at: Mapped[float] = mapped_column(Float)
    registered_at: Mapped[float] = mapped_column(Float)
    registrations: Mapped[int] = mapped_column(Integer, default=1)
    last_heartbeat_at: Mapped[float] = mapped_column(Float)
    live_until: Mapped[float] = mapped_column(Float)

    reachability: Mapped[str] = mapped_column(String(16), default=REACH_UNCHECKED)
    reachability_reason: Mapped[str] = mapped_column(Text, default="")
    reachability_checked_at: Mapped[float | None] = mapped_column(Float, nullable=True)

    # A relayed node: why it serves through a relay, in its own words (registration's
    # relay_reason, "" when it did not say), and the address it registered from, which
    # the per-address cap counts it by (its endpoint names the relay's host instead).
    relay_reason: Mapped[str] = mapped_column(Text, default="", server_default="")
    relayed_from: Mapped[str] = mapped_column(String(64), default="", server_default="")
    # The host the per-address cap counts this node by (store.node_caps.cap_host):
    # relayed_from for a relayed node, else its endpoint's host. Indexed so the cap
    # is an equality count, not a scan of every live endpoint.
    cap_host: Mapped[str] = mapped_column(String(512), default="", server_default="")
    # SHA-256 hex of the data plane's TLS certificate key, signed by the node's identity
    # key at registration (docs/wire.md#tls); "" for a plaintext development node.
    tls_pin: Mapped[str] = mapped_column(String(64), default="", server_default="")

    __table_args__ = (
        # Route formation: live nodes of one fingerprint in one range scan that
        # never touches the table. Key: the filter columns; then what candidate
        # queries read (store.nodes.LiveNode, store.routing), so SQLite answers
        # from the index alone. Heartbeats rewrite the entry anyway (live_until).
        Index(
            "ix_nodes_route",
            "model_artifact_digest",
            "runtime_recipe_digest",
            "state",
            "live_until",
            "reachability",
            "shard_start",
            "shard_end",
            "throughput",
            "load",
            "open_sessions",
            "node_id",
            "endpoint",
            "public_key",
        ),
        Index("ix_nodes_state_live", "state", "live_until"),
        Index("ix_nodes_cap_host", "cap_host", "state", "live_until"),
    )


class Recipe(Base):
    """One ledger entry: a fingerprint the tracker has seen, dark or certified."""

    __tablename__ = "recipes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    model_artifact_digest: Mapped[str] = mapped_column(String(HEX64))
    runtime_recipe_digest: Mapped[str] = mapped_column(String(HEX64))
    artifact_id: Mapped[str] = mapped_column(String(ID_TEXT_LEN))
    revision: Mapped[str] = mapped_column(String(ID_TEXT_LEN))
    architecture: Mapped[str] = mapped_column(String(ARCH_TEXT_LEN))
    layer_count: Mapped[int] = mapped_column(Integer)
    recipe_id: Mapped[str] = mapped_column(String(ID_TEXT_LEN))
    recipe_version: Mapped[str] = mapped_column(String(VERSION_TEXT_LEN))
    catalogue_version: Mapped[str] = mapped_column(String(VERSION_TEXT_LEN))
    axes: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16))
    detail: Mapped[str] = mapped_column(Text)
    first_seen_at: Mapped[float] = mapped_column(Float)
    certified_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    certified_route_session: Mapped[str | None] = mapped_column(String(128), nullable=True)
    certified_node_count: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # SHA-256 of the tokenizer_config.json (chat template) the certifying nodes all
    # served; the gateway accepts a template only with these bytes.
    chat_template_sha256: Mapped[str | None] = mapped_column(String(HEX64), nullable=True)
    # Why the recipe is dark when something sent it there (a failed attempt, evidence
    # that no longer verifies, a revocation): its own field, so `detail` stays the
    # seed's sentence and nothing has to parse one out of the other.
    last_failure: Mapped[str] = mapped_column(Text, default="", server_default="")
    # Bumped whenever this fingerprint's routable node set changes other than by time
    # (store/routing_version.py); route planners re-read their cached candidates then.
    routing_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # Set while the operator's revocation stands: the recipe stays dark and the
    # certifier never certifies it again until `recipes unrevoke` lifts it.
    revoked_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    revoked_reason: Mapped[str] = mapped_column(Text, default="", server_default="")
    # Why the certifier must verify this certified recipe again (a node that helped
    # certify it was quarantined); "" when nothing is pending.
    reverify_reason: Mapped[str] = mapped_column(Text, default="", server_default="")

    __table_args__ = (
        UniqueConstraint(
            "model_artifact_digest", "runtime_recipe_digest", name="uq_recipes_fingerprint"
        ),
    )


class CertificationEvidence(Base):
    """The distributed forward that promoted a recipe, kept so it can be re-checked."""

    __tablename__ = "certification_evidence"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    recipe_pk: Mapped[int] = mapped_column(ForeignKey("recipes.id", ondelete="CASCADE"))
    route_session_id: Mapped[str] = mapped_column(String(128))
    route_epoch: Mapped[int] = mapped_column(Integer)
    node_ids: Mapped[list[Any]] = mapped_column(JSON)
    shard_ranges: Mapped[list[Any]] = mapped_column(JSON)
    participants: Mapped[list[Any]] = mapped_column(JSON)
    tokens_generated: Mapped[int] = mapped_column(Integer)
    layer_count: Mapped[int] = mapped_column(Integer)
    certified_at: Mapped[float] = mapped_column(Float)
    # Kept so a re-check on load judges the row exactly as certification did.
    synthetic: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    revoked_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    revoked_reason: Mapped[str] = mapped_column(Text, default="")

    __table_args__ = (Index("ix_evidence_recipe", "recipe_pk"),)


class SpentNonce(Base):
    """A nonce seen with a valid signature; kept until its timestamp goes stale."""

    __tablename__ = "spent_nonces"

    node_id: Mapped[str] = mapped_column(String(NODE_ID_LEN), primary_key=True)
    nonce: Mapped[str] = mapped_column(String(256), primary_key=True)
    expires_at: Mapped[float] = mapped_column(Float)

    __table_args__ = (Index("ix_spent_nonces_expires", "expires_at"),)


class SecretColumns:
    """The columns every hashed secret has (store/hashed_secrets.py); the hash column
    itself is the kind's own (``token_hash`` or ``key_hash``)."""

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    label: Mapped[str] = mapped_column(String(256), default="")
    created_at: Mapped[float] = mapped_column(Float)
    revoked_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    last_used_at: Mapped[float | None] = mapped_column(Float, nullable=True)


class CountedTokenColumns(SecretColumns):
    """A token found by its ``token_hash`` that counts its uses."""

    token_hash: Mapped[str] = mapped_column(String(HEX64), unique=True)
    uses: Mapped[int] = mapped_column(Integer, default=0)


class JoinToken(CountedTokenColumns, Base):
    """A private network's admission ticket; only its SHA-256 is stored."""

    __tablename__ = "join_tokens"


class ApiKey(SecretColumns, Base):
    """A gateway user's key; only its SHA-256 is stored, the text is shown once."""

    __tablename__ = "api_keys"

    key_hash: Mapped[str] = mapped_column(String(HEX64), unique=True)
    # Per-key limits; NULL means the tracker's defaults (gateway_*_per_minute).
    requests_per_minute: Mapped[int | None] = mapped_column(Integer, nullable=True)
    tokens_per_minute: Mapped[int | None] = mapped_column(Integer, nullable=True)
