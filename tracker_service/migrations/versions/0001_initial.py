"""initial schema: nodes, ledger, nonces, join tokens

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-30 09:58:45.916153
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "join_tokens",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("label", sa.String(length=256), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("revoked_at", sa.Float(), nullable=True),
        sa.Column("last_used_at", sa.Float(), nullable=True),
        sa.Column("uses", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_table(
        "nodes",
        sa.Column("node_id", sa.String(length=32), nullable=False),
        sa.Column("public_key", sa.LargeBinary(length=32), nullable=False),
        sa.Column("endpoint", sa.String(length=512), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("state_reason", sa.Text(), nullable=False),
        sa.Column("model_artifact_digest", sa.String(length=64), nullable=False),
        sa.Column("runtime_recipe_digest", sa.String(length=64), nullable=False),
        sa.Column("shard_binding_digest", sa.String(length=64), nullable=False),
        sa.Column("artifact_id", sa.String(length=256), nullable=False),
        sa.Column("recipe_id", sa.String(length=256), nullable=False),
        sa.Column("recipe_version", sa.String(length=64), nullable=False),
        sa.Column("layer_count", sa.Integer(), nullable=False),
        sa.Column("shard_start", sa.Integer(), nullable=False),
        sa.Column("shard_end", sa.Integer(), nullable=False),
        sa.Column("identity", sa.JSON(), nullable=False),
        sa.Column("capability", sa.JSON(), nullable=False),
        sa.Column("throughput", sa.Float(), nullable=False),
        sa.Column("load", sa.Float(), nullable=False),
        sa.Column("open_sessions", sa.Integer(), nullable=False),
        sa.Column("tokens_served", sa.BigInteger(), nullable=False),
        sa.Column("session_id", sa.String(length=32), nullable=False),
        sa.Column("session_expires_at", sa.Float(), nullable=False),
        sa.Column("registered_at", sa.Float(), nullable=False),
        sa.Column("registrations", sa.Integer(), nullable=False),
        sa.Column("last_heartbeat_at", sa.Float(), nullable=False),
        sa.Column("live_until", sa.Float(), nullable=False),
        sa.Column("reachability", sa.String(length=16), nullable=False),
        sa.Column("reachability_reason", sa.Text(), nullable=False),
        sa.Column("reachability_checked_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("node_id"),
    )
    op.create_index(
        "ix_nodes_fingerprint_live",
        "nodes",
        ["model_artifact_digest", "runtime_recipe_digest", "state", "live_until"],
        unique=False,
    )
    op.create_index("ix_nodes_state_live", "nodes", ["state", "live_until"], unique=False)
    op.create_table(
        "recipes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("model_artifact_digest", sa.String(length=64), nullable=False),
        sa.Column("runtime_recipe_digest", sa.String(length=64), nullable=False),
        sa.Column("artifact_id", sa.String(length=256), nullable=False),
        sa.Column("revision", sa.String(length=256), nullable=False),
        sa.Column("architecture", sa.String(length=128), nullable=False),
        sa.Column("layer_count", sa.Integer(), nullable=False),
        sa.Column("recipe_id", sa.String(length=256), nullable=False),
        sa.Column("recipe_version", sa.String(length=64), nullable=False),
        sa.Column("catalogue_version", sa.String(length=64), nullable=False),
        sa.Column("axes", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("first_seen_at", sa.Float(), nullable=False),
        sa.Column("certified_at", sa.Float(), nullable=True),
        sa.Column("certified_route_session", sa.String(length=128), nullable=True),
        sa.Column("certified_node_count", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "model_artifact_digest", "runtime_recipe_digest", name="uq_recipes_fingerprint"
        ),
    )
    op.create_table(
        "spent_nonces",
        sa.Column("node_id", sa.String(length=32), nullable=False),
        sa.Column("nonce", sa.String(length=256), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("node_id", "nonce"),
    )
    op.create_index("ix_spent_nonces_expires", "spent_nonces", ["expires_at"], unique=False)
    op.create_table(
        "certification_evidence",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("recipe_pk", sa.Integer(), nullable=False),
        sa.Column("route_session_id", sa.String(length=128), nullable=False),
        sa.Column("route_epoch", sa.Integer(), nullable=False),
        sa.Column("node_ids", sa.JSON(), nullable=False),
        sa.Column("shard_ranges", sa.JSON(), nullable=False),
        sa.Column("participants", sa.JSON(), nullable=False),
        sa.Column("tokens_generated", sa.Integer(), nullable=False),
        sa.Column("layer_count", sa.Integer(), nullable=False),
        sa.Column("certified_at", sa.Float(), nullable=False),
        sa.Column("revoked_at", sa.Float(), nullable=True),
        sa.Column("revoked_reason", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["recipe_pk"], ["recipes.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_evidence_recipe", "certification_evidence", ["recipe_pk"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_evidence_recipe", table_name="certification_evidence")
    op.drop_table("certification_evidence")
    op.drop_index("ix_spent_nonces_expires", table_name="spent_nonces")
    op.drop_table("spent_nonces")
    op.drop_table("recipes")
    op.drop_index("ix_nodes_state_live", table_name="nodes")
    op.drop_index("ix_nodes_fingerprint_live", table_name="nodes")
    op.drop_table("nodes")
    op.drop_table("join_tokens")
