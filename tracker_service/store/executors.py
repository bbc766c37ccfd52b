"""Executors: nodes that claim batch work. Their key (for signed requests) and a
short-lived session credential so most calls need no per-request nonce; the credential
is made and hashed as every hashed secret of the tracker is (``store/hashed_secrets.py``),
one per executor row."""

from __future__ import annotations

import hmac

from sqlalchemy.orm import Session

from tracker_service.store.hashed_secrets import hash_secret, new_secret
from tracker_service.store.job_tables import JobExecutor

SESSION_PREFIX = "mne_"


def register_executor(
    session: Session, node_id: str, public_key_b64: str, *, now: float, ttl_s: float
) -> tuple[str, float]:
    """(Re)register `node_id`; returns a fresh session credential and its expiry."""
    token = new_secret(SESSION_PREFIX)
    expires = now + ttl_s
    row = session.get(JobExecutor, node_id)
    if row is None:
        row = JobExecutor(
            node_id=node_id,
            public_key_b64=public_key_b64,
            session_hash=hash_secret(token),
            session_expires_at=expires,
            registered_at=now,
            last_seen_at=now,
            tasks_done=0,
        )
        session.add(row)
    else:
        row.public_key_b64 = public_key_b64
        row.session_hash = hash_secret(token)
        row.session_expires_at = expires
        row.last_seen_at = now
    return token, expires


def executor_key(session: Session, node_id: str) -> str | None:
    row = session.get(JobExecutor, node_id)
    return None if row is None else row.public_key_b64


SESSION_VALID = "valid"
SESSION_EXPIRED = "expired"
SESSION_UNKNOWN = "unknown"


def session_status(session: Session, node_id: str, token: str, *, now: float) -> str:
    """``valid``; ``expired`` (the right credential, past its expiry); or ``unknown``.

    Only a credential that matches the stored hash can be called expired, so the
    answer tells a guesser nothing it did not already hold.
    """
    row = session.get(JobExecutor, node_id)
    if row is None or not hmac.compare_digest(row.session_hash, hash_secret(token)):
        return SESSION_UNKNOWN
    return SESSION_EXPIRED if row.session_expires_at < now else SESSION_VALID


def check_session(session: Session, node_id: str, token: str, *, now: float) -> bool:
    return session_status(session, node_id, token, now=now) == SESSION_VALID


def touch_executor(session: Session, node_id: str, *, now: float, done: int = 0) -> bool:
    """Record that `node_id` is alive; False when it is not registered (re-register)."""
    row = session.get(JobExecutor, node_id)
    if row is None:
        return False
    row.last_seen_at = now
    row.tasks_done += done
    return True
