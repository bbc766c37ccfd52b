"""Join tokens of a private network; the store keeps only their SHA-256."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from tracker_service.store.hashed_secrets import HashedSecrets, hash_secret
from tracker_service.store.tables import JoinToken

TOKEN_PREFIX = "mnj_"
JOIN_TOKENS = HashedSecrets(JoinToken, TOKEN_PREFIX)
hash_token = hash_secret


def add_join_token(session: Session, *, label: str, now: float) -> tuple[JoinToken, str]:
    """Create a token; the plain text is returned once and never stored."""
    return JOIN_TOKENS.issue(session, label=label, now=now)


def list_join_tokens(session: Session) -> Sequence[JoinToken]:
    return JOIN_TOKENS.listed(session)


def revoke_join_token(session: Session, token_id: int, *, now: float) -> bool:
    return JOIN_TOKENS.revoke(session, token_id, now=now)


def use_join_token(session: Session, token: str, *, now: float) -> bool:
    """True when `token` is issued and not revoked; counts the use."""
    return JOIN_TOKENS.use(session, token, now=now) is not None
