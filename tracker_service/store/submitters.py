"""Submitter tokens: who may submit batch jobs and fetch their results.

Same shape as join tokens (``store/tokens.py``): only the SHA-256 is stored, the
plain token is shown once. A distinct prefix tells an operator which is which.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from tracker_service.store.job_tables import SubmitterToken
from tracker_service.store.tokens import hash_token

SUBMITTER_PREFIX = "mns_"


def add_submitter_token(session: Session, *, label: str, now: float) -> tuple[SubmitterToken, str]:
    token = SUBMITTER_PREFIX + secrets.token_urlsafe(32)
    row = SubmitterToken(token_hash=hash_token(token), label=label, created_at=now, uses=0)
    session.add(row)
    session.flush()
    return row, token


def list_submitter_tokens(session: Session) -> Sequence[SubmitterToken]:
    return session.execute(select(SubmitterToken).order_by(SubmitterToken.id)).scalars().all()


def revoke_submitter_token(session: Session, token_id: int, *, now: float) -> bool:
    row = session.get(SubmitterToken, token_id)
    if row is None or row.revoked_at is not None:
        return False
    row.revoked_at = now
    return True


def use_submitter_token(session: Session, token: str, *, now: float) -> int | None:
    """The token's id when issued and not revoked (counting the use), else None."""
    row = session.execute(
        select(SubmitterToken).where(SubmitterToken.token_hash == hash_token(token))
    ).scalar_one_or_none()
    if row is None or row.revoked_at is not None:
        return None
    row.uses += 1
    row.last_used_at = now
    return row.id
