"""Network invites: a short code an operator shares, redeemed once per node identity.

Only the SHA-256 of a code is stored, by the one helper of every hashed secret
(``store/hashed_secrets.py``): ``INVITES`` makes the codes and hashes their canonical
form (upper case, no dashes, look-alikes mapped), so a code typed loosely still matches. Redeeming
binds the invite to a node id and issues that node a join token of its own; the same
identity redeeming again spends no further use and gets a fresh token in place of
the old one (the plain token is never stored, so it cannot be handed out twice).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from tracker_service.errors import INVITE_UNKNOWN, InviteRefused
from tracker_service.store.hashed_secrets import HashedSecrets
from tracker_service.store.invite_tables import Invite, InviteRedemption
from tracker_service.store.tables import JoinToken
from tracker_service.store.tokens import JOIN_TOKENS, add_join_token

# Crockford's base32: no I, L, O or U, so a code read aloud or retyped survives.
CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_CHARS = 12  # 60 bits, shown as XXXX-XXXX-XXXX
_LOOKALIKES = str.maketrans({"O": "0", "I": "1", "L": "1"})

INVITE_REVOKED = "invite-revoked"
INVITE_EXPIRED = "invite-expired"
INVITE_USED_UP = "invite-used-up"


@dataclass(frozen=True)
class Redeemed:
    invite_id: int
    join_token: str
    again: bool  # this identity had redeemed the invite before


def new_code() -> str:
    raw = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_CHARS))
    return "-".join(raw[i : i + 4] for i in range(0, CODE_CHARS, 4))


def normalize_code(text: str) -> str | None:
    """The code's canonical characters (case, dashes, spaces and look-alikes forgiven),
    or None when it cannot be a code at all."""
    raw = "".join(text.split()).replace("-", "").upper().translate(_LOOKALIKES)
    if len(raw) != CODE_CHARS or any(ch not in CODE_ALPHABET for ch in raw):
        return None
    return raw


# No prefix: a code is read aloud and retyped; its own alphabet tells it apart.
INVITES = HashedSecrets(
    Invite, prefix="", hash_column="code_hash", make=new_code, canonical=normalize_code
)


def hash_code(text: str) -> str | None:
    return INVITES.digest(text)


def add_invite(
    session: Session,
    *,
    label: str,
    now: float,
    max_uses: int = 1,
    expires_at: float | None = None,
) -> tuple[Invite, str]:
    """Create an invite; the code is returned once and never stored."""
    return INVITES.issue(session, label=label, now=now, expires_at=expires_at, max_uses=max_uses)


def list_invites(session: Session) -> Sequence[Invite]:
    return INVITES.listed(session)


def find_invite(session: Session, code: str) -> Invite | None:
    """The invite with this code, revoked, expired or used up as it may be."""
    return INVITES.find(session, code)


def revoke_invite(session: Session, invite: str | int, *, now: float) -> bool:
    """Revoke by code or by id; False when there is no active invite of that name.

    Join tokens it already handed out stay valid: revoking an invite stops new joins,
    not the nodes that joined (revoke their tokens with ``tokens revoke``)."""
    return INVITES.revoke(session, invite, now=now)


def invite_state(invite: Invite, now: float) -> str:
    """active | revoked | expired | used up, as `invite list` shows it."""
    if invite.revoked_at is not None:
        return "revoked"
    if invite.expires_at is not None and invite.expires_at <= now:
        return "expired"
    if invite.uses >= invite.max_uses:
        return "used up"
    return "active"


def redeem_invite(session: Session, code: str, *, node_id: str, now: float) -> Redeemed:
    """Bind the invite to `node_id` and issue its join token, or raise InviteRefused."""
    invite = find_invite(session, code)
    if invite is None:
        raise InviteRefused(
            INVITE_UNKNOWN,
            "this tracker knows no such invite code; check it was copied whole, or ask "
            "the network's operator for a new invite",
        )
    if invite.revoked_at is not None:
        raise InviteRefused(
            INVITE_REVOKED,
            "the operator withdrew this invite; ask them for a new one",
        )
    previous = session.execute(
        select(InviteRedemption).where(
            InviteRedemption.invite_id == invite.id, InviteRedemption.node_id == node_id
        )
    ).scalar_one_or_none()
    if invite.expires_at is not None and invite.expires_at <= now and previous is None:
        raise InviteRefused(
            INVITE_EXPIRED,
            "this invite has expired; ask the network's operator for a new one",
        )
    if previous is None and not _spend_use(session, invite):
        raise InviteRefused(
            INVITE_USED_UP,
            f"this invite has been used by as many computers as it allows ({invite.max_uses}); "
            "ask the network's operator for a new one",
        )
    row, token = add_join_token(session, label=_token_label(invite, node_id), now=now)
    if previous is None:
        session.add(
            InviteRedemption(
                invite_id=invite.id, node_id=node_id, join_token_id=row.id, redeemed_at=now
            )
        )
    else:  # the same identity again: one live token per binding, no use spent
        old = session.get(JoinToken, previous.join_token_id) if previous.join_token_id else None
        if old is not None and old.revoked_at is None:
            old.revoked_at = now
        previous.join_token_id = row.id
        previous.redeemed_at = now
    invite.last_used_at = now
    session.flush()
    return Redeemed(invite.id, token, previous is not None)


def _spend_use(session: Session, invite: Invite) -> bool:
    """Take one use in a single conditional UPDATE; False when none is left.

    Reading ``uses`` and writing it back let concurrent redeemers all see the last
    use free; the database decides here, under its own row lock."""
    spent = session.execute(
        update(Invite)
        .where(
            Invite.id == invite.id,
            Invite.uses < Invite.max_uses,
            Invite.revoked_at.is_(None),
        )
        .values(uses=Invite.uses + 1)
        .execution_options(synchronize_session=False)
    )
    if spent.rowcount != 1:  # type: ignore[attr-defined]
        return False
    session.refresh(invite, ["uses"])
    return True


def _token_label(invite: Invite, node_id: str) -> str:
    return f"invite {invite.id} ({invite.label or 'no label'}) for node {node_id}"[:256]


def token_owner(session: Session, token: str) -> str | None:
    """The node id a join token from an invite is bound to; None for any other token."""
    query = (
        select(InviteRedemption.node_id)
        .join(JoinToken, JoinToken.id == InviteRedemption.join_token_id)
        .where(JoinToken.token_hash == JOIN_TOKENS.digest(token))
    )
    return session.execute(query).scalar_one_or_none()
