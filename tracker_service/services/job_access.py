"""Who may use the job queue: a submitter's token, an executor's session or its key.

The routes' dependencies (api/routes/jobs_auth.py) answer 401 from these.
"""

from __future__ import annotations

import time

from tracker_service.store.db import Database
from tracker_service.store.executors import (
    SESSION_EXPIRED,
    SESSION_VALID,
    executor_key,
    session_status,
)
from tracker_service.store.submitters import use_submitter_token

__all__ = ["SESSION_EXPIRED", "SESSION_VALID", "executor_key_of", "session_of", "submitter_of"]


def submitter_of(database: Database, token: str) -> int | None:
    """Blocking: the id of a known, unrevoked submitter token (its use is recorded)."""
    with database.sessions.begin() as session:
        return use_submitter_token(session, token, now=time.time())


def session_of(database: Database, node_id: str, token: str) -> str:
    """Blocking: an executor session credential's status (SESSION_VALID, SESSION_EXPIRED, …)."""
    with database.session() as session:
        return session_status(session, node_id, token, now=time.time())


def executor_key_of(database: Database, node_id: str) -> str | None:
    """Blocking: an enrolled executor's public key (base64), None if it never enrolled."""
    with database.session() as session:
        return executor_key(session, node_id)
