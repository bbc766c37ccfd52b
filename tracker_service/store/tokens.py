"""Join tokens of a private network; the store keeps only their SHA-256."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from tracker_service.store.tables import JoinToken

TOKEN_PREFIX = "mnj_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def add_join_token(session: Session, *, label: str, now: float) -> tuple[JoinToken, str]:
    """Create a token; the plain text is returned once and never stored."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = JoinToken(token_hash=hash_token(token), label=label, created_at=now, uses=0)
    session.add(row)
    session.flush()
    return row, token


def list_join_tokens(session: Session) -> Sequence[JoinToken]:
    return session.execute(select(JoinToken).order_by(JoinToken.id)).scalars().all()


def revoke_join_token(session: Session, token_id: int, *, now: float) -> bool:
    row = session.get(JoinToken, token_id)
    if row is None or row.revoked_at is not None:
        return False
    row.revoked_at = now
    return True


def use_join_token(session: Session, token: str, *, now: float) -> bool:
    """True when `token` is issued and not revoked; counts the use."""
    row = session.execute(
        select(JoinToken).where(JoinToken.token_hash == hash_token(token))
    ).scalar_one_or_none()
    if row is None or row.revoked_at is not None:
        return False
    row.uses += 1
    row.last_used_at = now
    return True
