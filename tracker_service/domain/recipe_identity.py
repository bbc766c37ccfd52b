"""Tracker-side artifact and runtime recipe identity.

The node computes a compatibility fingerprint in ``core.recipes.recipe_identity``. This module
recomputes it, and the recomputation is the entire point: a fingerprint on the
wire is a *claim*. If the tracker stored what a node asserted, a node could
assert the digest of a certified recipe while running an uncertified one, and
admission and route selection would wave it through. So the tracker derives the
digest from the *axes* the node declared and refuses any block whose claim does
not match. A node can lie about its axes (a real forward catches that); it
cannot lie about the digest of the axes it declared.

This module does **not** import ``core``: the two implementations are pinned by
``tests/data/recipe_fingerprint_vectors.json``; if they drift, a test fails
rather than a route quietly failing to form, or worse, quietly forming.

Recipes arrive **dark**: registered, visible, not routable for users. Only a
real distributed forward (at least two distinct nodes, covering the whole model,
emitting real tokens) takes a recipe out of the dark (:class:`CertificationLedger`,
persisted by ``tracker_service.store.ledger``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tracker_service.domain.recipe_digests import (
    ARTIFACT_DIGEST_DOMAIN,
    RECIPE_AXES,
    RECIPE_DIGEST_DOMAIN,
    RECIPE_IDENTITY_SCHEMA_VERSION,
    SHARD_BINDING_DIGEST_DOMAIN,
    _digest,
    _hex64,
    _integer,
    _mapping,
    _parse_axes,
    _parse_binding,
    _pin,
    _text,
    artifact_digest,
    canonical_sha256,
    recipe_digest,
)
from tracker_service.errors import FingerprintMismatch, RecipeIdentityError

# The seed's public names, all importable from here.
__all__ = [
    "ARTIFACT_DIGEST_DOMAIN",
    "DARK_DETAIL",
    "MIN_CERTIFYING_NODES",
    "RECIPE_AXES",
    "RECIPE_DIGEST_DOMAIN",
    "RECIPE_IDENTITY_SCHEMA_VERSION",
    "SHARD_BINDING_DIGEST_DOMAIN",
    "STATUS_CERTIFIED",
    "STATUS_DARK",
    "STATUS_UNKNOWN",
    "UNKNOWN_DETAIL",
    "CertificationLedger",
    "DistributedForwardEvidence",
    "FingerprintMismatch",
    "PresentedIdentity",
    "RecipeIdentityError",
    "RecipeStatus",
    "artifact_digest",
    "canonical_sha256",
    "certified_detail",
    "check_certification",
    "coverage_gap",
    "parse_identity",
    "recipe_digest",
]


STATUS_UNKNOWN = "unknown"
STATUS_DARK = "dark"
STATUS_CERTIFIED = "certified"
MIN_CERTIFYING_NODES = 2


@dataclass(frozen=True)
class PresentedIdentity:
    """One node's declared artifact/recipe identity, with digests re-derived here.

    ``model_artifact_digest`` and ``runtime_recipe_digest`` are computed by the
    tracker from the declared axes, never copied from the report.
    """

    artifact_id: str
    revision: str
    source_digest: str
    content_digest: str
    derivative_range: tuple[int, int] | None
    architecture: str
    architecture_digest: str
    layer_count: int
    is_derivative: bool
    shard_start: int
    shard_end: int
    axes: Mapping[str, Any]
    recipe_id: str
    recipe_version: str
    catalogue_version: str

    @property
    def model_artifact_digest(self) -> str:
        return artifact_digest(
            source_digest=self.source_digest,
            architecture=self.architecture,
            architecture_digest=self.architecture_digest,
            layer_count=self.layer_count,
        )

    @property
    def runtime_recipe_digest(self) -> str:
        return recipe_digest(self.axes)

    @property
    def key(self) -> tuple[str, str]:
        return (self.model_artifact_digest, self.runtime_recipe_digest)

    @property
    def shard_binding_digest(self) -> str:
        """This participant's own bytes and exact range, bound to the source.

        The route fingerprint (:attr:`key`) is range-independent on purpose:
        shards on one route own different ranges. So the fingerprint cannot tell
        two different splits of one source apart, and a derivative could assert
        the right source and recipe and inherit certification earned by bytes it
        does not hold. This digest commits to the derivative's own content hash
        and exact range, so certification can be recipe-wide while every serving
        node stays pinned to the blob it was admitted on.
        """
        return _digest(
            SHARD_BINDING_DIGEST_DOMAIN,
            {
                "source_digest": self.source_digest,
                "content_digest": self.content_digest,
                "architecture_digest": self.architecture_digest,
                "derivative_range": list(self.derivative_range)
                if self.derivative_range is not None
                else None,
                "shard_start": self.shard_start,
                "shard_end": self.shard_end,
            },
        )

    @property
    def tokenizer_revision(self) -> str:
        return str(self.axes["tokenizer_revision"])

    @property
    def architecture_adapter(self) -> str:
        return str(self.axes["architecture_adapter"])

    def fingerprint_dict(self) -> dict[str, Any]:
        return {
            "model_artifact_digest": self.model_artifact_digest,
            "runtime_recipe_digest": self.runtime_recipe_digest,
            "recipe_id": self.recipe_id,
            "recipe_version": self.recipe_version,
            "catalogue_version": self.catalogue_version,
        }

    def identity_block(self) -> dict[str, Any]:
        """The schema-1 block this identity parses from (with its derived claim).

        What the store keeps, so evidence can be re-parsed and re-checked later.
        """
        derived = None
        if self.derivative_range is not None:
            derived = {
                "source_artifact_digest": self.source_digest,
                "shard_start": self.derivative_range[0],
                "shard_end": self.derivative_range[1],
            }
        return {
            "schema_version": RECIPE_IDENTITY_SCHEMA_VERSION,
            "artifact": {
                "artifact_id": self.artifact_id,
                "revision": self.revision,
                "content_digest": self.content_digest,
                "layer_count": self.layer_count,
                "architecture": self.architecture,
                "architecture_digest": self.architecture_digest,
                "derived_from": derived,
            },
            "recipe": {
                **dict(self.axes),
                "recipe_id": self.recipe_id,
                "recipe_version": self.recipe_version,
                "catalogue_version": self.catalogue_version,
            },
            "shard_start": self.shard_start,
            "shard_end": self.shard_end,
            "fingerprint": {
                "model_artifact_digest": self.model_artifact_digest,
                "runtime_recipe_digest": self.runtime_recipe_digest,
            },
        }


def parse_identity(data: Any) -> PresentedIdentity:
    """Parse and *verify* a node's identity block.

    Raises when the block is malformed, when a split artifact does not name the
    exact source it was cut from, when a shard advertises layers its artifact
    does not contain, or when the declared fingerprint does not match the digest
    of the axes it was declared with.
    """
    doc = _mapping(data, "identity")
    schema_version = doc.get("schema_version")
    if schema_version != RECIPE_IDENTITY_SCHEMA_VERSION:
        raise RecipeIdentityError(
            f"identity block declares schema version {schema_version!r}; this tracker "
            f"reads version {RECIPE_IDENTITY_SCHEMA_VERSION}"
        )
    artifact = _mapping(doc.get("artifact"), "identity.artifact")
    recipe = _mapping(doc.get("recipe"), "identity.recipe")
    layer_count = _integer(artifact.get("layer_count"), "artifact.layer_count", 1)
    content_digest = _hex64(artifact.get("content_digest"), "artifact.content_digest")
    source_digest, binding = _parse_binding(
        artifact.get("derived_from"), content_digest, layer_count
    )

    shard_start = _integer(doc.get("shard_start"), "shard_start", 0)
    shard_end = _integer(doc.get("shard_end"), "shard_end", 1)
    if shard_end <= shard_start:
        raise RecipeIdentityError("a Shard owning no layer computes nothing")
    if shard_end > layer_count:
        raise RecipeIdentityError(
            f"Shard owns layers {shard_start}–{shard_end}, but the artifact has only "
            f"{layer_count} layers"
        )
    if binding is not None and not (binding[0] <= shard_start and shard_end <= binding[1]):
        raise RecipeIdentityError(
            f"Shard advertises layers {shard_start}–{shard_end}, but its split "
            f"artifact only contains layers {binding[0]}–{binding[1]}"
        )
    axes = _parse_axes(recipe)

    identity = PresentedIdentity(
        artifact_id=_text(artifact.get("artifact_id"), "artifact.artifact_id"),
        revision=_pin(artifact.get("revision"), "artifact.revision"),
        source_digest=source_digest,
        content_digest=content_digest,
        derivative_range=binding,
        architecture=_text(artifact.get("architecture"), "artifact.architecture"),
        architecture_digest=_hex64(
            artifact.get("architecture_digest"), "artifact.architecture_digest"
        ),
        layer_count=layer_count,
        is_derivative=binding is not None,
        shard_start=shard_start,
        shard_end=shard_end,
        axes=axes,
        recipe_id=_text(recipe.get("recipe_id"), "recipe.recipe_id"),
        recipe_version=_text(recipe.get("recipe_version"), "recipe.recipe_version"),
        catalogue_version=_text(recipe.get("catalogue_version"), "recipe.catalogue_version"),
    )

    declared = doc.get("fingerprint")
    if declared is not None:
        claim = _mapping(declared, "identity.fingerprint")
        claimed_artifact = _hex64(
            claim.get("model_artifact_digest"), "fingerprint.model_artifact_digest"
        )
        claimed_recipe = _hex64(
            claim.get("runtime_recipe_digest"), "fingerprint.runtime_recipe_digest"
        )
        if (claimed_artifact, claimed_recipe) != identity.key:
            raise FingerprintMismatch(
                "declared fingerprint is inconsistent with the artifact and recipe "
                "claim; the tracker recomputes compatibility digests"
            )
    return identity


def coverage_gap(ranges: Iterable[tuple[int, int]], layer_count: int) -> str | None:
    """Why `ranges` fail to tile ``[0, layer_count)``, or None when they do.

    Overlaps are legal (the tracker tells a hop where the previous one stopped).
    A hole is not: its layers are never computed, and the route would emit
    fluent tokens from a truncated model.
    """
    ordered = sorted(ranges)
    if not ordered:
        return "the route owns no layers"
    if ordered[0][0] != 0:
        return f"layers 0–{ordered[0][0]} are owned by no Shard on the route"
    covered = 0
    for start, end in ordered:
        if start > covered:
            return f"layers {covered}–{start} are owned by no Shard on the route"
        covered = max(covered, end)
    if covered < layer_count:
        return f"layers {covered}–{layer_count} are owned by no Shard on the route"
    if covered > layer_count:
        return f"the route claims {covered} layers, but the model has only {layer_count}"
    return None


def _owns(participant: PresentedIdentity, shard_range: Iterable[int]) -> bool:
    """Did this participant's admitted shard hold what its receipt says it computed?

    The recorded range comes from the hop's signed receipt. A hop starts where the
    previous one stopped (its effective start), so the receipt may begin inside the
    shard; it stops where its ticket said (``effective_end``: the next hop takes over
    there, as when two nodes each hold the whole model), so it may end inside the
    shard too. It never reaches outside the shard, and the certifier accepts only a
    receipt matching its ticket exactly (certifier.check_receipts). Without overlap
    this is the seed's exact equality.
    """
    start, end = tuple(shard_range)
    return participant.shard_start <= start < end <= participant.shard_end


@dataclass(frozen=True)
class DistributedForwardEvidence:
    """A real distributed forward: the only thing that certifies a recipe.

    ``shard_ranges`` are what each hop's signed receipt says it computed, never
    copied from the participant's own identity, so the range check can fail.
    """

    route_session_id: str
    route_epoch: int
    node_ids: tuple[str, ...]
    shard_ranges: tuple[tuple[int, int], ...]
    tokens_generated: int
    layer_count: int
    fingerprint: tuple[str, str]
    participants: tuple[PresentedIdentity, ...]
    synthetic: bool = False
    certified_at: float = field(default_factory=time.time)

    def rejection(self) -> str | None:
        if self.synthetic:
            return (
                "evidence comes from a synthetic worker; only a real distributed "
                "forward certifies a recipe"
            )
        if len(self.participants) != len(self.node_ids):
            return "participant identities do not match the certifying node list"
        if len(self.shard_ranges) != len(self.participants):
            return "participant identities do not match the recorded effective ranges"
        for participant, shard_range in zip(self.participants, self.shard_ranges, strict=True):
            if participant.key != self.fingerprint:
                return "a participant fingerprint differs from the certifying route"
            if participant.layer_count != self.layer_count:
                return "a participant artifact layer count differs from the certifying route"
            if not _owns(participant, shard_range):
                return "a participant identity does not match its recorded effective range"
        distinct = set(self.node_ids)
        if len(distinct) < MIN_CERTIFYING_NODES:
            return (
                f"evidence covers {len(distinct)} distinct node(s); a distributed "
                f"forward requires at least {MIN_CERTIFYING_NODES}"
            )
        if len(distinct) != len(self.node_ids):
            return "the same node is counted more than once in the certifying route"
        if self.tokens_generated < 1:
            return "the certifying forward generated no tokens"
        return coverage_gap(self.shard_ranges, self.layer_count)


@dataclass(frozen=True)
class RecipeStatus:
    status: str
    detail: str = ""
    certified_at: float | None = None

    @property
    def may_serve(self) -> bool:
        return self.status == STATUS_CERTIFIED

    @property
    def may_certify(self) -> bool:
        """A dark recipe may be routed to *certify* it, and for nothing else.

        Without this, certification is unreachable by construction: serving
        needs certification, which needs a real distributed forward, which
        needs a route.
        """
        return self.status in (STATUS_DARK, STATUS_CERTIFIED)

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "detail": self.detail, "certified_at": self.certified_at}


DARK_DETAIL = "registered; dark until a real distributed forward certifies it"
UNKNOWN_DETAIL = "this recipe has never been registered with the tracker"


def check_certification(
    identity: PresentedIdentity, evidence: DistributedForwardEvidence, *, known: bool
) -> None:
    """Raise RecipeIdentityError saying why `evidence` cannot promote `identity`.

    Shared by the in-memory ledger and the persisted one, so both refuse alike.
    """
    if not known:
        raise RecipeIdentityError(
            "this fingerprint is not registered; unknown recipes cannot be certified"
        )
    if evidence.fingerprint != identity.key:
        raise RecipeIdentityError(
            "certification evidence fingerprint does not match the recipe being promoted"
        )
    if evidence.layer_count != identity.layer_count:
        raise RecipeIdentityError(
            "certification evidence layer count does not match the artifact being promoted"
        )
    rejection = evidence.rejection()
    if rejection is not None:
        raise RecipeIdentityError(f"this evidence does not certify: {rejection}")


def certified_detail(evidence: DistributedForwardEvidence) -> str:
    return (
        f"certified by route session {evidence.route_session_id} across "
        f"{len(set(evidence.node_ids))} nodes"
    )


class CertificationLedger:
    """Which recipes the tracker has seen, and which a real forward has proven.

    In memory; ``tracker_service.store.ledger.PersistentLedger`` is the same
    contract over the database, which is what the service uses.
    """

    def __init__(self) -> None:
        self._dark: set[tuple[str, str]] = set()
        self._certified: dict[tuple[str, str], RecipeStatus] = {}

    def register(self, identity: PresentedIdentity) -> RecipeStatus:
        key = identity.key
        if key in self._certified:
            return self._certified[key]
        self._dark.add(key)
        return RecipeStatus(STATUS_DARK, DARK_DETAIL)

    def status(self, identity: PresentedIdentity | tuple[str, str]) -> RecipeStatus:
        key = identity if isinstance(identity, tuple) else identity.key
        if key in self._certified:
            return self._certified[key]
        if key in self._dark:
            return RecipeStatus(STATUS_DARK, DARK_DETAIL)
        return RecipeStatus(STATUS_UNKNOWN, UNKNOWN_DETAIL)

    def certify(
        self, identity: PresentedIdentity, evidence: DistributedForwardEvidence
    ) -> RecipeStatus:
        """Promote a recipe out of the dark, or raise saying why the evidence is short."""
        key = identity.key
        check_certification(identity, evidence, known=key in self._dark or key in self._certified)
        status = RecipeStatus(
            STATUS_CERTIFIED, certified_detail(evidence), certified_at=evidence.certified_at
        )
        self._certified[key] = status
        self._dark.discard(key)
        return status

    def to_dict(self) -> dict[str, Any]:
        return {
            "dark": [list(key) for key in sorted(self._dark)],
            "certified": {
                "/".join(key): status.to_dict() for key, status in sorted(self._certified.items())
            },
        }
