"""Every rejection the seed's parse_identity names, as (name, mutation, error, message part).

Shared by the in-process tests and the HTTP tests (each must answer 422 with its reason).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from tracker_service.domain.recipe_identity import FingerprintMismatch, RecipeIdentityError

Mutation = Callable[[dict[str, Any]], None]
OTHER_HEX = hashlib.sha256(b"other").hexdigest()


def _set(path: str, value: Any) -> Mutation:
    def mutate(block: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target = block
        for part in parents:
            target = target[part]
        target[last] = value

    return mutate


def _drop(path: str) -> Mutation:
    def mutate(block: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target = block
        for part in parents:
            target = target[part]
        del target[last]

    return mutate


def _derived(start: int, end: int, source: str = OTHER_HEX) -> Mutation:
    return _set(
        "artifact.derived_from",
        {"source_artifact_digest": source, "shard_start": start, "shard_end": end},
    )


def _both(*mutations: Mutation) -> Mutation:
    def mutate(block: dict[str, Any]) -> None:
        for mutation in mutations:
            mutation(block)

    return mutate


def _wrong_claim(block: dict[str, Any]) -> None:
    block["fingerprint"] = {"model_artifact_digest": OTHER_HEX, "runtime_recipe_digest": OTHER_HEX}


REJECTIONS: list[tuple[str, Mutation, type[RecipeIdentityError], str]] = [
    ("schema-version", _set("schema_version", 2), RecipeIdentityError, "schema version"),
    ("artifact-not-object", _set("artifact", "x"), RecipeIdentityError, "identity.artifact"),
    ("recipe-not-object", _set("recipe", None), RecipeIdentityError, "identity.recipe"),
    ("layer-count-zero", _set("artifact.layer_count", 0), RecipeIdentityError, ">= 1"),
    ("layer-count-bool", _set("artifact.layer_count", True), RecipeIdentityError, "integer"),
    (
        "content-digest-not-hex",
        _set("artifact.content_digest", "abc"),
        RecipeIdentityError,
        "SHA-256",
    ),
    ("derived-not-object", _set("artifact.derived_from", 5), RecipeIdentityError, "derived_from"),
    (
        "derived-source-not-hex",
        _derived(0, 30, "nope"),
        RecipeIdentityError,
        "source_artifact_digest",
    ),
    ("derived-empty-split", _derived(10, 10), RecipeIdentityError, "covers no layers"),
    ("derived-beyond-model", _derived(0, 31), RecipeIdentityError, "only 30 layers"),
    (
        "derived-source-is-self",
        lambda b: _derived(0, 30, b["artifact"]["content_digest"])(b),
        RecipeIdentityError,
        "not a split of itself",
    ),
    (
        "shard-empty",
        _both(_set("shard_start", 5), _set("shard_end", 5)),
        RecipeIdentityError,
        "no layer",
    ),
    ("shard-end-zero", _set("shard_end", 0), RecipeIdentityError, ">= 1"),
    ("shard-start-negative", _set("shard_start", -1), RecipeIdentityError, ">= 0"),
    ("shard-beyond-artifact", _set("shard_end", 31), RecipeIdentityError, "only 30 layers"),
    ("shard-outside-split", _derived(0, 15), RecipeIdentityError, "split artifact only contains"),
    ("missing-axis", _drop("recipe.kv_layout"), RecipeIdentityError, "cannot default"),
    (
        "int-axis-not-int",
        _set("recipe.boundary_schema_version", "1"),
        RecipeIdentityError,
        "integer",
    ),
    ("int-axis-zero", _set("recipe.protocol_schema_version", 0), RecipeIdentityError, ">= 1"),
    ("text-axis-empty", _set("recipe.compute_dtype", "  "), RecipeIdentityError, "non-empty"),
    (
        "tokenizer-moving-ref",
        _set("recipe.tokenizer_revision", "main"),
        RecipeIdentityError,
        "moving",
    ),
    (
        "revision-moving-ref",
        _set("artifact.revision", "refs/heads/x"),
        RecipeIdentityError,
        "moving",
    ),
    ("revision-latest", _set("artifact.revision", "Latest"), RecipeIdentityError, "moving"),
    ("artifact-id-missing", _drop("artifact.artifact_id"), RecipeIdentityError, "artifact_id"),
    ("architecture-empty", _set("artifact.architecture", ""), RecipeIdentityError, "architecture"),
    (
        "architecture-digest-bad",
        _set("artifact.architecture_digest", "x" * 64),
        RecipeIdentityError,
        "SHA-256",
    ),
    ("recipe-id-missing", _drop("recipe.recipe_id"), RecipeIdentityError, "recipe_id"),
    (
        "recipe-version-missing",
        _drop("recipe.recipe_version"),
        RecipeIdentityError,
        "recipe_version",
    ),
    (
        "catalogue-version-missing",
        _drop("recipe.catalogue_version"),
        RecipeIdentityError,
        "catalogue",
    ),
    (
        "fingerprint-not-object",
        _set("fingerprint", []),
        RecipeIdentityError,
        "identity.fingerprint",
    ),
    (
        "fingerprint-not-hex",
        _set("fingerprint", {"model_artifact_digest": "x"}),
        RecipeIdentityError,
        "SHA-256",
    ),
    ("fingerprint-claim-wrong", _wrong_claim, FingerprintMismatch, "recomputes"),
]
