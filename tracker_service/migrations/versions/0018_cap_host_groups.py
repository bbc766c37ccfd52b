"""nodes: the per-address cap counts an IPv6 node by its /64 (cap_host recomputed)

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-05 23:40:00
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

_NODES = sa.table(
    "nodes",
    sa.column("node_id", sa.String),
    sa.column("endpoint", sa.String),
    sa.column("relayed_from", sa.String),
    sa.column("cap_host", sa.String),
)


def _group(host: str) -> str:
    # Frozen copies of domain.address_groups.address_group and store.node_caps.cap_host
    # as of this revision: a migration keeps doing what it did when it shipped.
    try:
        parsed = ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return str(parsed)


def _cap_host(endpoint: str, relayed_from: str) -> str:
    if relayed_from:
        host = relayed_from.lower()
    else:
        try:
            host = urlsplit(endpoint).hostname or ""
        except ValueError:
            host = ""
    return _group(host) if host else ""


def upgrade() -> None:
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(_NODES.c.node_id, _NODES.c.endpoint, _NODES.c.relayed_from)
    ).all()
    updates = [
        {"key": node_id, "host": _cap_host(endpoint or "", relayed_from or "")}
        for node_id, endpoint, relayed_from in rows
    ]
    if updates:
        connection.execute(
            _NODES.update()
            .where(_NODES.c.node_id == sa.bindparam("key"))
            .values(cap_host=sa.bindparam("host")),
            updates,
        )


def downgrade() -> None:
    pass  # a grouped host still names the node's network; 0008's exact host is not needed
