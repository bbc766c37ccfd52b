"""The tracker's hashed secrets: issue, list, revoke and check, one way for every kind.

Join tokens, API keys and submitter tokens are all a random text with a prefix
that tells an operator which kind it is (``mnj_``, ``mnk_``, ``mns_``). The text
is shown once when issued; the store keeps only its SHA-256. A new kind is a
table built from :class:`tracker_service.store.tables.SecretColumns` and one
:class:`HashedSecrets` line naming its table and prefix.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

Row = TypeVar("Row")

# 32 random bytes: well past guessing, short enough to paste.
SECRET_BYTES = 32


def hash_secret(text: str) -> str:
    """The SHA-256 (hex) the store keeps instead of the secret."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class HashedSecrets(Generic[Row]):
    """One kind of hashed secret: its table (a SecretColumns model) and its prefix."""

    model: type[Row]
    prefix: str
    hash_column: str = "token_hash"  # API keys call theirs key_hash

    def issue(self, session: Session, *, label: str, now: float, **fields: Any) -> tuple[Row, str]:
        """A new secret's row and its plain text; the text is never stored."""
        text = self.prefix + secrets.token_urlsafe(SECRET_BYTES)
        model: Any = self.model  # a mapped class: its columns are keyword arguments
        if hasattr(model, "uses"):
            fields.setdefault("uses", 0)  # counted from the first use, not NULL
        row = model(**{self.hash_column: hash_secret(text)}, label=label, created_at=now, **fields)
        session.add(row)
        session.flush()
        issued: Row = row
        return issued, text

    def listed(self, session: Session) -> Sequence[Row]:
        """Every secret of this kind, revoked ones too, oldest first."""
        model: Any = self.model
        return session.execute(select(model).order_by(model.id)).scalars().all()

    def revoke(self, session: Session, secret_id: int, *, now: float) -> bool:
        """False when there is no such secret, or it is revoked already."""
        row: Any = session.get(self.model, secret_id)
        if row is None or row.revoked_at is not None:
            return False
        row.revoked_at = now
        return True

    def active(self, session: Session, text: str) -> Row | None:
        """The issued, unrevoked secret with this text, if any."""
        column = getattr(self.model, self.hash_column)
        row: Any = session.execute(
            select(self.model).where(column == hash_secret(text))
        ).scalar_one_or_none()
        if row is None or row.revoked_at is not None:
            return None
        result: Row = row
        return result

    def use(self, session: Session, text: str, *, now: float) -> Row | None:
        """Like :meth:`active`, counting the use on a kind that counts (``uses``)."""
        row: Any = self.active(session, text)
        if row is not None and hasattr(row, "uses"):
            row.uses += 1
        if row is not None:
            row.last_used_at = now
        result: Row | None = row
        return result
