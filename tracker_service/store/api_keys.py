"""Gateway API keys; the store keeps only their SHA-256."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from tracker_service.store.hashed_secrets import HashedSecrets
from tracker_service.store.tables import ApiKey

KEY_PREFIX = "mnk_"
API_KEYS = HashedSecrets(ApiKey, KEY_PREFIX, hash_column="key_hash")


@dataclass(frozen=True)
class KeyInfo:
    id: int
    label: str
    requests_per_minute: int | None
    tokens_per_minute: int | None


def add_api_key(
    session: Session,
    *,
    label: str,
    now: float,
    requests_per_minute: int | None = None,
    tokens_per_minute: int | None = None,
) -> tuple[ApiKey, str]:
    """Create a key; the plain text is returned once and never stored."""
    return API_KEYS.issue(
        session,
        label=label,
        now=now,
        requests_per_minute=requests_per_minute,
        tokens_per_minute=tokens_per_minute,
    )


def list_api_keys(session: Session) -> Sequence[ApiKey]:
    return API_KEYS.listed(session)


def revoke_api_key(session: Session, key_id: int, *, now: float) -> bool:
    return API_KEYS.revoke(session, key_id, now=now)


def active_key_count(session: Session) -> int:
    query = select(func.count()).select_from(ApiKey).where(ApiKey.revoked_at.is_(None))
    return int(session.execute(query).scalar_one())


def find_api_key(session: Session, key: str) -> KeyInfo | None:
    """The active key with this text, if any."""
    row = API_KEYS.active(session, key)
    if row is None:
        return None
    return KeyInfo(row.id, row.label, row.requests_per_minute, row.tokens_per_minute)


def touch_api_key(session: Session, key_id: int, *, now: float) -> None:
    session.execute(
        update(ApiKey)
        .where(ApiKey.id == key_id)
        .values(last_used_at=now)
        .execution_options(synchronize_session=False)
    )
