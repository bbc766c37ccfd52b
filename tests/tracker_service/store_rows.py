"""Rows the store tests start from: a node registered straight into the database (no
HTTP, no signature) and the values of one heartbeat as the heartbeat writer takes them."""

from __future__ import annotations

import time
from typing import Any

from tests.tracker_service.helpers import FakeNode, identity_block
from tracker_service.domain.recipe_identity import PresentedIdentity, parse_identity
from tracker_service.store.db import Database
from tracker_service.store.nodes import Liveness, register_node


def register_in_store(
    db: Database,
    node: FakeNode,
    now: float | None = None,
    *,
    identity: PresentedIdentity | None = None,
    live_window_s: float = 30.0,
) -> None:
    """Register ``node`` for layers 0-4 of the test model (or ``identity``'s range)."""
    with db.sessions.begin() as session:
        register_node(
            session,
            node_id=node.node_id,
            public_key=node.public_raw,
            endpoint=node.endpoint,
            identity=identity or parse_identity(identity_block()),
            capability={"passed": True},
            throughput=10.0,
            now=time.time() if now is None else now,
            liveness=Liveness(live_window_s=live_window_s, session_ttl_s=900.0),
        )


def heartbeat_values(node_id: str, nonce: str, now: float, **overrides: Any) -> dict[str, Any]:
    """One heartbeat, fresh at ``now``, live for 30 s."""
    values: dict[str, Any] = {
        "node_id": node_id,
        "nonce": nonce,
        "nonce_expires_at": now + 301,
        "now": now,
        "live_until": now + 30,
        "session_expires_at": now + 900,
        "load": 0.5,
        "open_sessions": 2,
        "tokens_served": 40,
        "throughput": None,
    }
    values.update(overrides)
    return values
