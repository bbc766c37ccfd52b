"""Gateway API keys; the store keeps only their SHA-256."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from tracker_service.store.tables import ApiKey

KEY_PREFIX = "mnk_"


@dataclass(frozen=True)
class KeyInfo:
    id: int
    label: str
    requests_per_minute: int | None
    tokens_per_minute: int | None


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def add_api_key(
    session: Session,
    *,
    label: str,
    now: float,
    requests_per_minute: int | None = None,
    tokens_per_minute: int | None = None,
) -> tuple[ApiKey, str]:
    """Create a key; the plain text is returned once and never stored."""
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    row = ApiKey(
        key_hash=hash_key(key),
        label=label,
        created_at=now,
        requests_per_minute=requests_per_minute,
        tokens_per_minute=tokens_per_minute,
    )
    session.add(row)
    session.flush()
    return row, key


def list_api_keys(session: Session) -> Sequence[ApiKey]:
    return session.execute(select(ApiKey).order_by(ApiKey.id)).scalars().all()


def revoke_api_key(session: Session, key_id: int, *, now: float) -> bool:
    row = session.get(ApiKey, key_id)
    if row is None or row.revoked_at is not None:
        return False
    row.revoked_at = now
    return True


def active_key_count(session: Session) -> int:
    query = select(func.count()).select_from(ApiKey).where(ApiKey.revoked_at.is_(None))
    return int(session.execute(query).scalar_one())


def find_api_key(session: Session, key: str) -> KeyInfo | None:
    """The active key with this text, if any."""
    row = session.execute(
        select(ApiKey).where(ApiKey.key_hash == hash_key(key), ApiKey.revoked_at.is_(None))
    ).scalar_one_or_none()
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
