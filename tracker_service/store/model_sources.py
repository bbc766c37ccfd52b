"""Which model sources the operator allowed to serve under a model name.

A recipe's *source* is its model artifact digest (the weights' bytes). Certification
proves that nodes answer, not that their weights are the model their name says: two
colluding identities can certify a fake under a popular name. So the gateway serves a
name only from sources the operator allowed (``meshnet-tracker models allow``); any
other source under that name stays unserved, and the status page says so. A private
network started with ``serve --trust-first-model-source`` allows the first source
certified under each name by itself (recorded here, so ``models list`` shows it).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Boolean, Float, String, Text, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from tracker_service.domain.recipe_identity import STATUS_CERTIFIED
from tracker_service.store.tables import HEX64, ID_TEXT_LEN, Base, Recipe

SOURCE_ALLOWED = "allowed"
SOURCE_DENIED = "denied"
SOURCE_UNAPPROVED = "unapproved"
TRUST_FIRST_NOTE = "the first source certified under this name (serve --trust-first-model-source)"


class ModelSource(Base):
    """The operator's word on one (model name, artifact digest)."""

    __tablename__ = "model_sources"
    artifact_id: Mapped[str] = mapped_column(String(ID_TEXT_LEN), primary_key=True)
    model_artifact_digest: Mapped[str] = mapped_column(String(HEX64), primary_key=True)
    allowed: Mapped[bool] = mapped_column(Boolean)
    note: Mapped[str] = mapped_column(Text, default="")
    changed_at: Mapped[float] = mapped_column(Float)


@dataclass(frozen=True)
class SourceView:
    artifact_id: str
    model_artifact_digest: str
    status: str  # allowed or denied
    note: str
    changed_at: float


def set_source(
    session: Session, artifact_id: str, digest: str, *, allowed: bool, note: str, now: float
) -> bool:
    """Allow or deny one source; False when it already was so (nothing changed)."""
    row = session.get(ModelSource, (artifact_id, digest))
    if row is not None and row.allowed == allowed:
        return False
    if row is None:
        row = ModelSource(artifact_id=artifact_id, model_artifact_digest=digest)
        session.add(row)
    row.allowed, row.note, row.changed_at = allowed, note, now
    return True


def list_sources(session: Session) -> list[SourceView]:
    rows = session.scalars(
        select(ModelSource).order_by(ModelSource.artifact_id, ModelSource.changed_at)
    )
    return [
        SourceView(
            r.artifact_id,
            r.model_artifact_digest,
            SOURCE_ALLOWED if r.allowed else SOURCE_DENIED,
            r.note,
            r.changed_at,
        )
        for r in rows
    ]


def source_statuses(session: Session) -> dict[tuple[str, str], str]:
    """(artifact id, digest) -> allowed/denied, for every source the operator named."""
    return {(v.artifact_id, v.model_artifact_digest): v.status for v in list_sources(session)}


def status_of(statuses: dict[tuple[str, str], str], artifact_id: str, digest: str) -> str:
    return statuses.get((artifact_id, digest), SOURCE_UNAPPROVED)


def names_decided(statuses: dict[tuple[str, str], str]) -> set[str]:
    """Model names the operator has said anything about (trust-first skips those)."""
    return {artifact_id for artifact_id, _ in statuses}


def parse_allowed(setting: str) -> list[tuple[str, str]]:
    """``NAME=DIGEST,...`` (``serve --allow-model-source``) as (name, digest or prefix)."""
    pairs: list[tuple[str, str]] = []
    for item in setting.split(","):
        name, _, digest = item.strip().partition("=")
        if name.strip() and digest.strip():
            pairs.append((name.strip(), digest.strip().lower()))
    return pairs


def allow_first_sources(session: Session, now: float) -> None:
    """Trust-first (a private network): each name nobody decided yet gets its earliest
    certified source allowed, recorded so that ``models list`` shows it."""
    decided = names_decided(source_statuses(session))
    certified = session.execute(
        select(Recipe.artifact_id, Recipe.model_artifact_digest)
        .where(Recipe.status == STATUS_CERTIFIED)
        .order_by(Recipe.certified_at, Recipe.id)
    ).all()
    for artifact_id, digest in certified:
        if artifact_id not in decided:
            set_source(session, artifact_id, digest, allowed=True, note=TRUST_FIRST_NOTE, now=now)
            decided.add(artifact_id)


def served_statuses(session: Session, allowed_setting: str = "") -> dict[tuple[str, str], str]:
    """Every source the operator decided, plus the recipes' sources the serve option
    allows (an explicit deny in the store wins over it)."""
    statuses = source_statuses(session)
    allowed = parse_allowed(allowed_setting)
    if allowed:
        for artifact_id, digest in session.execute(
            select(Recipe.artifact_id, Recipe.model_artifact_digest).distinct()
        ).all():
            if any(artifact_id == n and digest.startswith(d) for n, d in allowed):
                statuses.setdefault((artifact_id, digest), SOURCE_ALLOWED)
    return statuses
