"""Recipe-identity digests and field checks: the byte-exact half of the wire contract.

Split from :mod:`tracker_service.domain.recipe_identity` (which re-exports every name
here) so that module holds the parsing and certification logic. Nothing here
imports ``core``; ``tests/data/recipe_fingerprint_vectors.json`` pins it to the
node's implementation.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from tracker_service.errors import RecipeIdentityError

RECIPE_IDENTITY_SCHEMA_VERSION = 1

# Domain separation, byte-for-byte the node's. Changing one here without the
# node silently partitions every route.
ARTIFACT_DIGEST_DOMAIN = "meshnet.model-artifact.v1"
RECIPE_DIGEST_DOMAIN = "meshnet.runtime-recipe.v1"
SHARD_BINDING_DIGEST_DOMAIN = "meshnet.shard-binding.v1"

# The axes a recipe digest commits to. An axis missing here is an axis a node
# could change without changing its identity.
RECIPE_AXES: tuple[str, ...] = (
    "weight_quantization",
    "activation_dtype",
    "compute_dtype",
    "kv_dtype",
    "kv_layout",
    "tokenizer_revision",
    "architecture_adapter",
    "backend_id",
    "runtime_version",
    "boundary_schema_version",
    "protocol_schema_version",
)
_INT_AXES = frozenset({"boundary_schema_version", "protocol_schema_version"})

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_MOVING_REFS = frozenset({"main", "master", "head", "latest", "dev", "trunk"})


def canonical_sha256(value: Any) -> str:
    payload = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _digest(domain: str, body: Mapping[str, Any]) -> str:
    return canonical_sha256({"domain": domain, "body": dict(body)})


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise RecipeIdentityError(f"{what!r} must be a non-empty string")
    return value


def _hex64(value: Any, what: str) -> str:
    text = _text(value, what)
    if not _HEX64.match(text):
        raise RecipeIdentityError(f"{what!r} must be a SHA-256 hex digest")
    return text


def _integer(value: Any, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecipeIdentityError(f"{what!r} must be an integer")
    if value < minimum:
        raise RecipeIdentityError(f"{what!r} must be >= {minimum}")
    return value


def _pin(value: Any, what: str) -> str:
    text = _text(value, what)
    lowered = text.strip().lower()
    if lowered in _MOVING_REFS or lowered.startswith("refs/"):
        raise RecipeIdentityError(f"{what!r} is a moving reference, not an exact revision pin")
    return text


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise RecipeIdentityError(f"{what!r} must be a JSON object")
    return value


def artifact_digest(
    *, source_digest: str, architecture: str, architecture_digest: str, layer_count: int
) -> str:
    """The artifact half of the fingerprint, derived exactly as the node derives it."""
    return _digest(
        ARTIFACT_DIGEST_DOMAIN,
        {
            "source_digest": source_digest,
            "architecture": architecture,
            "architecture_digest": architecture_digest,
            "layer_count": layer_count,
        },
    )


def recipe_digest(axes: Mapping[str, Any]) -> str:
    """The recipe half of the fingerprint, derived exactly as the node derives it."""
    missing = [axis for axis in RECIPE_AXES if axis not in axes]
    if missing:
        raise RecipeIdentityError("recipe is missing required axes: " + ", ".join(missing))
    return _digest(RECIPE_DIGEST_DOMAIN, {axis: axes[axis] for axis in RECIPE_AXES})


def _parse_binding(
    raw_binding: Any, content_digest: str, layer_count: int
) -> tuple[str, tuple[int, int] | None]:
    """The source digest and split range of an artifact (itself when not a split)."""
    if raw_binding is None:
        return content_digest, None
    derived = _mapping(raw_binding, "artifact.derived_from")
    source_digest = _hex64(
        derived.get("source_artifact_digest"), "artifact.derived_from.source_artifact_digest"
    )
    binding = (
        _integer(derived.get("shard_start"), "derived_from.shard_start", 0),
        _integer(derived.get("shard_end"), "derived_from.shard_end", 1),
    )
    if binding[1] <= binding[0]:
        raise RecipeIdentityError("'derived_from' covers no layers; an empty split proves nothing")
    if binding[1] > layer_count:
        raise RecipeIdentityError(
            f"'derived_from' claims layers {binding[0]}–{binding[1]}, but the "
            f"source model has only {layer_count} layers"
        )
    if source_digest == content_digest:
        raise RecipeIdentityError(
            "a split artifact's source digest equals its own content digest; "
            "an artifact is not a split of itself"
        )
    return source_digest, binding


def _parse_axes(recipe: Mapping[str, Any]) -> dict[str, Any]:
    axes: dict[str, Any] = {}
    for axis in RECIPE_AXES:
        if axis not in recipe:
            raise RecipeIdentityError(
                f"recipe is missing axis {axis!r}; an unstated axis cannot default"
            )
        value = recipe[axis]
        if axis in _INT_AXES:
            axes[axis] = _integer(value, f"recipe.{axis}", 1)
        else:
            axes[axis] = _text(value, f"recipe.{axis}")
    _pin(axes["tokenizer_revision"], "recipe.tokenizer_revision")
    return axes
