"""Tables of network invites: the invite (its code hashed) and who redeemed it.

Kept apart from ``tables.py`` (same ``Base``), as the job tables are; the migration
``0009_invites.py`` must describe exactly these tables.
"""

from __future__ import annotations

from sqlalchemy import Float, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from tracker_service.store.tables import HEX64, NODE_ID_LEN, Base


class Invite(Base):
    """A shareable invitation to the network; only the SHA-256 of its code is stored."""

    __tablename__ = "invites"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    code_hash: Mapped[str] = mapped_column(String(HEX64), unique=True)
    label: Mapped[str] = mapped_column(String(256), default="")
    created_at: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    max_uses: Mapped[int] = mapped_column(Integer, default=1)
    uses: Mapped[int] = mapped_column(Integer, default=0)
    revoked_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    last_used_at: Mapped[float | None] = mapped_column(Float, nullable=True)


class InviteRedemption(Base):
    """One node identity that redeemed an invite, and the join token it was given."""

    __tablename__ = "invite_redemptions"
    __table_args__ = (UniqueConstraint("invite_id", "node_id", name="uq_invite_node"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    invite_id: Mapped[int] = mapped_column(ForeignKey("invites.id", ondelete="CASCADE"))
    node_id: Mapped[str] = mapped_column(String(NODE_ID_LEN))
    join_token_id: Mapped[int | None] = mapped_column(
        ForeignKey("join_tokens.id", ondelete="SET NULL"), nullable=True, index=True
    )
    redeemed_at: Mapped[float] = mapped_column(Float)
