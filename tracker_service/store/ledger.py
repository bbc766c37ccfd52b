"""The certification ledger in the database: dark and certified recipes survive restarts.

Same contract as :class:`tracker_service.domain.recipe_identity.CertificationLedger`
(register / status / certify / to_dict), with the same refusals, plus revocation.
A promotion writes the evidence and flips the status in one transaction.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from tracker_service.domain.recipe_identity import (
    DARK_DETAIL,
    STATUS_CERTIFIED,
    STATUS_DARK,
    STATUS_UNKNOWN,
    UNKNOWN_DETAIL,
    DistributedForwardEvidence,
    PresentedIdentity,
    RecipeIdentityError,
    RecipeStatus,
    certified_detail,
    check_certification,
    parse_identity,
)
from tracker_service.store.db import Database
from tracker_service.store.tables import CertificationEvidence, Recipe

Key = tuple[str, str]
log = logging.getLogger(__name__)


def _key_filter(key: Key) -> tuple[Any, Any]:
    return (Recipe.model_artifact_digest == key[0], Recipe.runtime_recipe_digest == key[1])


def recipe_status(row: Recipe | None) -> RecipeStatus:
    if row is None:
        return RecipeStatus(STATUS_UNKNOWN, UNKNOWN_DETAIL)
    return RecipeStatus(row.status, row.detail, row.certified_at)


def get_recipe(session: Session, key: Key, *, for_update: bool = False) -> Recipe | None:
    query = select(Recipe).where(*_key_filter(key))
    if for_update:
        query = query.with_for_update()
    return session.execute(query).scalar_one_or_none()


def register_recipe(session: Session, identity: PresentedIdentity, *, now: float) -> RecipeStatus:
    """Make the fingerprint known (dark) unless it already is; return its status.

    INSERT .. ON CONFLICT DO NOTHING, so replicas registering the same new
    recipe at once neither fail nor duplicate it.
    """
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = (
        insert(Recipe)
        .values(
            model_artifact_digest=identity.model_artifact_digest,
            runtime_recipe_digest=identity.runtime_recipe_digest,
            artifact_id=identity.artifact_id,
            revision=identity.revision,
            architecture=identity.architecture,
            layer_count=identity.layer_count,
            recipe_id=identity.recipe_id,
            recipe_version=identity.recipe_version,
            catalogue_version=identity.catalogue_version,
            axes=dict(identity.axes),
            status=STATUS_DARK,
            detail=DARK_DETAIL,
            first_seen_at=now,
        )
        .on_conflict_do_nothing()
    )
    session.execute(statement)
    return recipe_status(get_recipe(session, identity.key))


def certify_recipe(
    session: Session, identity: PresentedIdentity, evidence: DistributedForwardEvidence
) -> RecipeStatus:
    """Promote within the caller's transaction, or raise RecipeIdentityError saying why.

    A revoked recipe is refused whatever the evidence: the operator's revocation
    stands until the operator lifts it. Evidence the new one replaces (a
    re-verification after a quarantine) is marked superseded."""
    row = get_recipe(session, identity.key, for_update=True)
    check_certification(identity, evidence, known=row is not None)
    assert row is not None  # check_certification refused unknown recipes
    if row.revoked_at is not None:
        raise RecipeIdentityError(
            f"the operator revoked this recipe ({row.revoked_reason}); it is not certified "
            "again until `meshnet-tracker recipes unrevoke` lifts the revocation"
        )
    superseded = (
        f"superseded by route session {evidence.route_session_id}: {row.reverify_reason}"
        if row.reverify_reason
        else f"superseded by route session {evidence.route_session_id}"
    )
    _revoke_live_evidence(session, row, superseded, now=evidence.certified_at)
    session.add(
        CertificationEvidence(
            recipe_pk=row.id,
            route_session_id=evidence.route_session_id,
            route_epoch=evidence.route_epoch,
            node_ids=list(evidence.node_ids),
            shard_ranges=[list(r) for r in evidence.shard_ranges],
            participants=[p.identity_block() for p in evidence.participants],
            tokens_generated=evidence.tokens_generated,
            layer_count=evidence.layer_count,
            certified_at=evidence.certified_at,
            synthetic=evidence.synthetic,
            revoked_reason="",
        )
    )
    session.flush()  # the evidence row is written first; the status flips in the same commit
    row.status = STATUS_CERTIFIED
    row.detail = certified_detail(evidence)
    row.certified_at = evidence.certified_at
    row.certified_route_session = evidence.route_session_id
    row.certified_node_count = len(set(evidence.node_ids))
    row.last_failure = ""
    row.reverify_reason = ""
    row.routing_version = (row.routing_version or 0) + 1  # a ledger change: planners re-read
    session.flush()
    return recipe_status(row)


def revoke_certification(session: Session, key: Key, *, reason: str, now: float) -> bool:
    """Revoke a recipe: dark (its evidence kept, marked revoked) and never certified
    again until :func:`lift_revocation`. False when unknown or already revoked."""
    row = get_recipe(session, key, for_update=True)
    if row is None or row.revoked_at is not None:
        return False
    why = f"certification revoked by the operator: {reason}"
    if row.status == STATUS_CERTIFIED:
        _send_dark(session, row, why, now=now)
    else:
        row.last_failure = why
    row.revoked_at = now
    row.revoked_reason = reason
    row.reverify_reason = ""
    return True


def lift_revocation(session: Session, key: Key, *, reason: str, now: float) -> bool:
    """The operator lifts a revocation: the recipe stays dark until the certifier
    certifies it again with a fresh forward. False when it is unknown or not revoked."""
    row = get_recipe(session, key, for_update=True)
    if row is None or row.revoked_at is None:
        return False
    row.revoked_at = None
    row.revoked_reason = ""
    row.last_failure = f"revocation lifted by the operator: {reason}; dark until certified again"
    row.routing_version = (row.routing_version or 0) + 1
    return True


def fail_reverification(session: Session, key: Key, why: str, *, now: float) -> bool:
    """A certified recipe awaiting re-verification that none passed: dark, with why."""
    row = get_recipe(session, key, for_update=True)
    if row is None or row.status != STATUS_CERTIFIED or not row.reverify_reason:
        return False
    _send_dark(session, row, f"{row.reverify_reason}; {why}", now=now)
    row.reverify_reason = ""
    return True


def _send_dark(session: Session, row: Recipe, why: str, *, now: float) -> None:
    """Dark again: the seed's sentence in ``detail``, the reason in its own field."""
    row.status = STATUS_DARK
    row.detail = DARK_DETAIL
    row.last_failure = why
    row.certified_at = None
    row.certified_route_session = None
    row.certified_node_count = None
    row.routing_version = (row.routing_version or 0) + 1  # a ledger change: planners re-read
    _revoke_live_evidence(session, row, why, now=now)


def _revoke_live_evidence(session: Session, row: Recipe, why: str, *, now: float) -> None:
    session.execute(
        update(CertificationEvidence)
        .where(
            CertificationEvidence.recipe_pk == row.id, CertificationEvidence.revoked_at.is_(None)
        )
        .values(revoked_at=now, revoked_reason=why)
    )


def evidence_of(row: CertificationEvidence, key: Key) -> DistributedForwardEvidence:
    """A stored row as the evidence it was; raises RecipeIdentityError when it no longer parses."""
    return DistributedForwardEvidence(
        route_session_id=row.route_session_id,
        route_epoch=row.route_epoch,
        node_ids=tuple(str(n) for n in row.node_ids),
        shard_ranges=tuple((int(r[0]), int(r[1])) for r in row.shard_ranges),
        tokens_generated=row.tokens_generated,
        layer_count=row.layer_count,
        fingerprint=key,
        participants=tuple(parse_identity(block) for block in row.participants),
        synthetic=bool(row.synthetic),
        certified_at=row.certified_at,
    )


def evidence_problem(row: CertificationEvidence, key: Key) -> str | None:
    """Why a stored evidence row no longer certifies its recipe, or None when it does."""
    try:
        evidence = evidence_of(row, key)
        if not evidence.participants:
            return "the evidence names no participant"
        check_certification(evidence.participants[0], evidence, known=True)
    except (RecipeIdentityError, TypeError, ValueError, IndexError) as exc:
        return str(exc)
    return None


def recheck_certified(session: Session, *, now: float) -> list[tuple[Key, str]]:
    """Re-verify every certified recipe's live evidence; send dark those that fail.

    Evidence is judged again when loaded, under today's rules: a row edited in
    the database, or one a fixed rule would now refuse, must not keep a recipe
    routable for users.
    """
    darkened: list[tuple[Key, str]] = []
    query = select(Recipe).where(Recipe.status == STATUS_CERTIFIED).with_for_update()
    for row in session.execute(query).scalars().all():
        key = (row.model_artifact_digest, row.runtime_recipe_digest)
        for evidence in evidence_for(session, row.id):
            if evidence.revoked_at is not None:
                continue
            problem = evidence_problem(evidence, key)
            if problem is not None:
                why = f"certification evidence {evidence.route_session_id} no longer verifies: "
                _send_dark(session, row, why + problem, now=now)
                darkened.append((key, why + problem))
                break
    return darkened


def list_recipes(session: Session) -> Sequence[Recipe]:
    query = select(Recipe).order_by(Recipe.artifact_id, Recipe.recipe_id, Recipe.recipe_version)
    return session.execute(query).scalars().all()


def evidence_for(session: Session, recipe_pk: int) -> Sequence[CertificationEvidence]:
    query = (
        select(CertificationEvidence)
        .where(CertificationEvidence.recipe_pk == recipe_pk)
        .order_by(CertificationEvidence.id)
    )
    return session.execute(query).scalars().all()


class PersistentLedger:
    """The seed's ledger contract over the database, one transaction per call."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def register(self, identity: PresentedIdentity) -> RecipeStatus:
        with self._db.sessions.begin() as session:
            return register_recipe(session, identity, now=time.time())

    def status(self, identity: PresentedIdentity | Key) -> RecipeStatus:
        key = identity if isinstance(identity, tuple) else identity.key
        with self._db.session() as session:
            return recipe_status(get_recipe(session, key))

    def certify(
        self, identity: PresentedIdentity, evidence: DistributedForwardEvidence
    ) -> RecipeStatus:
        """Promote a recipe out of the dark in one transaction, or raise saying why."""
        with self._db.sessions.begin() as session:
            return certify_recipe(session, identity, evidence)

    def recheck(self) -> list[tuple[Key, str]]:
        """Re-verify stored evidence (on load); the recipes sent dark, with why."""
        with self._db.sessions.begin() as session:
            darkened = recheck_certified(session, now=time.time())
        for key, why in darkened:
            log.warning("recipe %s/%s sent dark: %s", key[0][:12], key[1][:12], why)
        return darkened

    def revoke(self, key: Key, *, reason: str) -> bool:
        with self._db.sessions.begin() as session:
            return revoke_certification(session, key, reason=reason, now=time.time())

    def unrevoke(self, key: Key, *, reason: str) -> bool:
        with self._db.sessions.begin() as session:
            return lift_revocation(session, key, reason=reason, now=time.time())

    def to_dict(self) -> dict[str, Any]:
        with self._db.session() as session:
            rows = list_recipes(session)
        return {
            "dark": sorted(
                [r.model_artifact_digest, r.runtime_recipe_digest]
                for r in rows
                if r.status == STATUS_DARK
            ),
            "certified": {
                f"{r.model_artifact_digest}/{r.runtime_recipe_digest}": recipe_status(r).to_dict()
                for r in sorted(
                    rows, key=lambda r: (r.model_artifact_digest, r.runtime_recipe_digest)
                )
                if r.status == STATUS_CERTIFIED
            },
        }
