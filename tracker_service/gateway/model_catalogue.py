"""Which models serve users: certified recipes with a live route right now.

A model is named by its artifact id (``smollm2-135m-instruct``); where an
artifact has several certified recipes, ``artifact:recipe`` picks one. Dark
recipes are never served; a request for a model that has only dark ones is
told so by name, with why it is dark.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from tracker_service.domain.recipe_identity import STATUS_CERTIFIED, coverage_gap
from tracker_service.domain.route_formation import Candidate
from tracker_service.gateway.errors import ModelNotFound, Unavailable
from tracker_service.services.route_planner import RoutePlanner
from tracker_service.store.db import Database
from tracker_service.store.ledger import list_recipes
from tracker_service.store.route_candidates import RecipeInfo, recipes_matching

NO_ROUTE_RETRY_S = 10
DARK_RETRY_S = 30


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

    def __init__(self, database: Database, planner: RoutePlanner) -> None:
        self._db = database
        self._planner = planner

    def listed(self) -> list[ServedModel]:
        with self._db.session() as session:
            rows = [
                (r.artifact_id, r.model_artifact_digest, r.runtime_recipe_digest, r.certified_at)
                for r in list_recipes(session)
                if r.status == STATUS_CERTIFIED
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
        gaps: list[str] = []
        for info in certified:
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
