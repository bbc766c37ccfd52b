"""The tracker's hashed secrets: issue, list, revoke and check, one way for every kind.

Join tokens, API keys and submitter tokens are all a random text with a prefix
that tells an operator which kind it is (``mnj_``, ``mnk_``, ``mns_``); an
invite is a short code a person retypes, so it brings its own maker and its own
``canonical`` form (case, dashes and look-alikes forgiven) that is hashed. The
text is shown once when issued; the store keeps only the SHA-256 of
:func:`hash_secret`. A new kind is a table built from
:class:`tracker_service.store.tables.SecretColumns` and one
:class:`HashedSecrets` line naming its table and prefix. An executor's session
credential (``store/executors.py``) is one per node row, not a table of its
own, but it is made by :func:`new_secret` and hashed by :func:`hash_secret` too.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Sequence
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


def new_secret(prefix: str) -> str:
    """A fresh random secret text that starts with `prefix`."""
    return prefix + secrets.token_urlsafe(SECRET_BYTES)


def _as_typed(text: str) -> str | None:
    return text


@dataclass(frozen=True)
class HashedSecrets(Generic[Row]):
    """One kind of hashed secret: its table (a SecretColumns model) and its prefix."""

    model: type[Row]
    prefix: str
    hash_column: str = "token_hash"  # API keys call theirs key_hash, invites code_hash
    # A kind whose texts are not prefix + random (invites' codes) makes its own...
    make: Callable[[], str] | None = None
    # ...and may forgive how a person types one: the canonical text is what is hashed;
    # None means the text cannot be one of this kind at all.
    canonical: Callable[[str], str | None] = _as_typed

    def digest(self, text: str) -> str | None:
        """The hash stored for `text`, or None when it cannot be a secret of this kind."""
        canonical = self.canonical(text)
        return None if canonical is None else hash_secret(canonical)

    def issue(self, session: Session, *, label: str, now: float, **fields: Any) -> tuple[Row, str]:
        """A new secret's row and its plain text; the text is never stored."""
        text = new_secret(self.prefix) if self.make is None else self.make()
        digest = self.digest(text)
        if digest is None:
            raise ValueError(f"{self.model.__name__}: a new secret {text!r} is not canonical")
        model: Any = self.model  # a mapped class: its columns are keyword arguments
        if hasattr(model, "uses"):
            fields.setdefault("uses", 0)  # counted from the first use, not NULL
        row = model(**{self.hash_column: digest}, label=label, created_at=now, **fields)
        session.add(row)
        session.flush()
        issued: Row = row
        return issued, text

    def listed(self, session: Session) -> Sequence[Row]:
        """Every secret of this kind, revoked ones too, oldest first."""
        model: Any = self.model
        return session.execute(select(model).order_by(model.id)).scalars().all()

    def revoke(self, session: Session, secret: int | str, *, now: float) -> bool:
        """Revoke by id or by text; False when there is no such secret, or it is
        revoked already."""
        row: Any = (
            session.get(self.model, secret)
            if isinstance(secret, int)
            else self.find(session, secret)
        )
        if row is None or row.revoked_at is not None:
            return False
        row.revoked_at = now
        return True

    def find(self, session: Session, text: str) -> Row | None:
        """The secret with this text, revoked or not, if it was ever issued."""
        digest = self.digest(text)
        if digest is None:
            return None
        column = getattr(self.model, self.hash_column)
        row: Row | None = session.execute(
            select(self.model).where(column == digest)
        ).scalar_one_or_none()
        return row

    def active(self, session: Session, text: str) -> Row | None:
        """The issued, unrevoked secret with this text, if any."""
        row: Any = self.find(session, text)
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
