"""The operator's actions on the network: remove or ban a node, revoke a recipe's
certification or lift that (api/routes/admin.py answers them behind the admin token)."""

from __future__ import annotations

import time

from tracker_service.store import ledger
from tracker_service.store.db import Database
from tracker_service.store.nodes import end_registration
from tracker_service.store.tables import NODE_BANNED, NODE_REMOVED

Fingerprint = tuple[str, str]  # (model_artifact_digest, runtime_recipe_digest)


def _end(database: Database, node_id: str, state: str, reason: str) -> bool:
    with database.sessions.begin() as session:
        return end_registration(session, node_id, state, reason)


def remove_node(database: Database, node_id: str, reason: str) -> bool:
    """Blocking: take a node out of routing; it may register again (False: unknown)."""
    return _end(database, node_id, NODE_REMOVED, reason)


def ban_node(database: Database, node_id: str, reason: str) -> bool:
    """Blocking: take a node out of routing and refuse its key from now on."""
    return _end(database, node_id, NODE_BANNED, reason)


def revoke_recipe(database: Database, key: Fingerprint, reason: str) -> bool:
    """Blocking: dark, and never certified again until lifted (False: unknown or revoked)."""
    with database.sessions.begin() as session:
        return ledger.revoke_certification(session, key, reason=reason, now=time.time())


def lift_revocation(database: Database, key: Fingerprint, reason: str) -> bool:
    """Blocking: the recipe stays dark until a fresh forward certifies it."""
    with database.sessions.begin() as session:
        return ledger.lift_revocation(session, key, reason=reason, now=time.time())
