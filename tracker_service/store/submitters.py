"""Submitter tokens: who may submit batch jobs and fetch their results.

Same shape as join tokens (``store/hashed_secrets.py``): only the SHA-256 is
stored, the plain token is shown once. A distinct prefix tells an operator which
is which.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from tracker_service.store.hashed_secrets import HashedSecrets
from tracker_service.store.job_tables import SubmitterToken

SUBMITTER_PREFIX = "mns_"
SUBMITTER_TOKENS = HashedSecrets(SubmitterToken, SUBMITTER_PREFIX)


def add_submitter_token(session: Session, *, label: str, now: float) -> tuple[SubmitterToken, str]:
    return SUBMITTER_TOKENS.issue(session, label=label, now=now)


def list_submitter_tokens(session: Session) -> Sequence[SubmitterToken]:
    return SUBMITTER_TOKENS.listed(session)


def revoke_submitter_token(session: Session, token_id: int, *, now: float) -> bool:
    return SUBMITTER_TOKENS.revoke(session, token_id, now=now)


def use_submitter_token(session: Session, token: str, *, now: float) -> int | None:
    """The token's id when issued and not revoked (counting the use), else None."""
    row = SUBMITTER_TOKENS.use(session, token, now=now)
    return None if row is None else row.id
