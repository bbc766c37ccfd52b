"""Which models serve users: certified recipes with a live route right now.

A model is named by its artifact id (``smollm2-135m-instruct``); where an
artifact has several certified recipes, ``artifact:recipe`` picks one. Dark
recipes are never served; a request for a model that has only dark ones is
told so by name, with why it is dark. A certified recipe serves only when the
operator allowed its source (its model artifact digest) under its name
(store/model_sources.py): a fake certified by colluding nodes under a known name
is never served, nor listed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from tracker_service.domain.recipe_identity import STATUS_CERTIFIED, coverage_gap
from tracker_service.domain.route_formation import Candidate
from tracker_service.errors import ModelNotFound, Unavailable
from tracker_service.services.route_planner import RoutePlanner
from tracker_service.store.db import Database
from tracker_service.store.ledger import list_recipes
from tracker_service.store.model_sources import (
    SOURCE_ALLOWED,
    allow_first_sources,
    served_statuses,
    status_of,
)
from tracker_service.store.route_candidates import RecipeInfo, recipes_matching

NO_ROUTE_RETRY_S = 10
DARK_RETRY_S = 30
SOURCE_NOT_ALLOWED = "model_source_not_allowed"


@dataclass(frozen=True)
class ServedModel:
    id: str
    info: RecipeInfo
    candidates: tuple[Candidate, ...]
    created: int


def split_name(model: str) -> tuple[str, str | None]:
    artifact, _, recipe = model.partition(":")
    return artifact, recipe or None


class ModelCatalogue:
    """Blocking (database); async callers run it in a thread."""

    def __init__(
        self,
        database: Database,
        planner: RoutePlanner,
        *,
        trust_first_source: bool = False,
        allowed_sources: str = "",
    ) -> None:
        """``trust_first_source``: a private network's operator allows, once for each
        name, the first source certified under it (``serve --trust-first-model-source``);
        ``allowed_sources``: ``serve --allow-model-source`` (NAME=DIGEST,...)."""
        self._db = database
        self._planner = planner
        self._trust_first = trust_first_source
        self._allowed = allowed_sources

    def sources(self) -> dict[tuple[str, str], str]:
        """(name, artifact digest) -> allowed/denied, as the operator decided (with
        trust-first, a name nobody decided yet gets its first certified source)."""
        if self._trust_first:
            with self._db.sessions.begin() as session:
                allow_first_sources(session, time.time())
        with self._db.session() as session:
            return served_statuses(session, self._allowed)

    def listed(self) -> list[ServedModel]:
        statuses = self.sources()
        with self._db.session() as session:
            rows = [
                (r.artifact_id, r.model_artifact_digest, r.runtime_recipe_digest, r.certified_at)
                for r in list_recipes(session)
                if r.status == STATUS_CERTIFIED
                and status_of(statuses, r.artifact_id, r.model_artifact_digest) == SOURCE_ALLOWED
            ]
        served: dict[str, ServedModel] = {}
        for artifact_id, artifact_digest, recipe_digest, certified_at in rows:
            if artifact_id in served:
                continue
            info, candidates = self._planner.candidates((artifact_digest, recipe_digest))
            if info is None or _gap(info, candidates) is not None:
                continue
            served[artifact_id] = ServedModel(
                artifact_id, info, tuple(candidates), int(certified_at or time.time())
            )
        return list(served.values())

    def resolve(self, model: str) -> ServedModel:
        """The certified recipe of `model` with a live route; ModelNotFound or Unavailable."""
        artifact_id, recipe_id = split_name(model)
        with self._db.session() as session:
            recipes = recipes_matching(session, artifact_id=artifact_id, recipe_id=recipe_id)
        if not recipes:
            names = ", ".join(m.id for m in self.listed()) or "none right now"
            raise ModelNotFound(
                f"the model '{model}' does not exist on this tracker; GET /v1/models lists the "
                f"models that serve now ({names})",
                param="model",
            )
        certified = [r for r in recipes if r.status == STATUS_CERTIFIED]
        if not certified:
            dark = "; ".join(f"recipe {r.recipe_id} is {r.status}" for r in recipes)
            raise Unavailable(
                f"the model '{model}' has no certified recipe ({dark}): a dark recipe serves "
                "users only after a real distributed forward over two or more nodes certifies "
                "it; the tracker certifies it by itself once enough nodes serve it",
                code="recipe_dark",
                param="model",
                retry_after_s=DARK_RETRY_S,
            )
        statuses = self.sources()
        approved = [
            r for r in certified if status_of(statuses, artifact_id, r.key[0]) == SOURCE_ALLOWED
        ]
        if not approved:
            unapproved = ", ".join(sorted({r.key[0][:12] for r in certified}))
            raise Unavailable(
                f"the model '{model}' is certified only from weights the operator has not "
                f"allowed under this name (source {unapproved}): certification proves nodes "
                "answer, not that their weights are this model; the operator allows a source "
                "with `meshnet-tracker models allow`",
                code=SOURCE_NOT_ALLOWED,
                param="model",
            )
        gaps: list[str] = []
        for info in approved:
            info_now, candidates = self._planner.candidates(info.key)
            gap = _gap(info, candidates)
            if info_now is not None and gap is None:
                return ServedModel(artifact_id, info_now, tuple(candidates), int(time.time()))
            gaps.append(f"recipe {info.recipe_id}: {gap}")
        raise Unavailable(
            f"the model '{model}' is certified but no live route serves it now "
            f"({'; '.join(gaps)}); retry when its nodes are back",
            retry_after_s=NO_ROUTE_RETRY_S,
        )


def _gap(info: RecipeInfo, candidates: list[Candidate] | tuple[Candidate, ...]) -> str | None:
    if not candidates:
        return "no live reachable node serves it"
    return coverage_gap([(c.start, c.end) for c in candidates], info.layer_count)
