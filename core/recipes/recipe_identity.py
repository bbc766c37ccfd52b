"""Recipe identity, node side: the axes, the three digests, the identity block.

A *recipe* is a model artifact plus the runtime settings that change what the
numbers are (dtypes, KV layout, tokenizer, adapter, backend, versions). Two
shards can sit on one route only if they agree on both halves, so the node
presents an identity block and a fingerprint claim; the tracker re-derives the
digests from the declared axes (docs/wire.md#fingerprint) and never
trusts the claim. The domain strings and the axis list are wire contract: the
tracker's copy must match byte for byte, which tests/data/recipe_fingerprint_vectors.json
pins. The node validates its own block with the tracker's rules before it
presents it, so a malformed block fails here, with a readable reason, not as a
refused registration.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from core.errors import FingerprintMismatch, RecipeIdentityError
from core.identity.signing import canonical_sha256

RECIPE_IDENTITY_SCHEMA_VERSION = 1

ARTIFACT_DIGEST_DOMAIN = "meshnet.model-artifact.v1"
RECIPE_DIGEST_DOMAIN = "meshnet.runtime-recipe.v1"
SHARD_BINDING_DIGEST_DOMAIN = "meshnet.shard-binding.v1"

# Membership matters, order does not (canonical JSON sorts keys): an axis left out
# here is one a node could change without changing its identity.
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
INT_AXES = frozenset({"boundary_schema_version", "protocol_schema_version"})

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_MOVING_REFS = frozenset({"main", "master", "head", "latest", "dev", "trunk"})


def _digest(domain: str, body: Mapping[str, Any]) -> str:
    return canonical_sha256({"domain": domain, "body": dict(body)})


def artifact_digest(
    *, source_digest: str, architecture: str, architecture_digest: str, layer_count: int
) -> str:
    """The artifact half of the fingerprint: which weights, cut from which source."""
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
    """The recipe half of the fingerprint: exactly the RECIPE_AXES, nothing else."""
    missing = [axis for axis in RECIPE_AXES if axis not in axes]
    if missing:
        raise RecipeIdentityError("recipe is missing required axes: " + ", ".join(missing))
    return _digest(RECIPE_DIGEST_DOMAIN, {axis: axes[axis] for axis in RECIPE_AXES})


def shard_binding_digest(
    *,
    source_digest: str,
    content_digest: str,
    architecture_digest: str,
    derivative_range: tuple[int, int] | None,
    shard_start: int,
    shard_end: int,
) -> str:
    """This shard's own bytes and exact range, bound to the source it came from.

    The route fingerprint is range-independent (hops own different ranges), so
    this is what pins each serving node to the blob it was admitted on.
    """
    return _digest(
        SHARD_BINDING_DIGEST_DOMAIN,
        {
            "source_digest": source_digest,
            "content_digest": content_digest,
            "architecture_digest": architecture_digest,
            "derivative_range": list(derivative_range) if derivative_range is not None else None,
            "shard_start": shard_start,
            "shard_end": shard_end,
        },
    )


def architecture_digest_of(model_dir: Path) -> str:
    """SHA-256 of the canonical JSON of ``config.json``: formatting does not count."""
    config = json.loads((Path(model_dir) / "config.json").read_text(encoding="utf-8"))
    return canonical_sha256(config)


@dataclass(frozen=True)
class PresentedIdentity:
    """A parsed, verified identity block with its digests derived, never copied."""

    artifact_id: str
    revision: str
    source_digest: str
    content_digest: str
    derivative_range: tuple[int, int] | None
    architecture: str
    architecture_digest: str
    layer_count: int
    shard_start: int
    shard_end: int
    axes: Mapping[str, Any]
    recipe_id: str
    recipe_version: str
    catalogue_version: str

    @property
    def is_derivative(self) -> bool:
        return self.derivative_range is not None

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
        return shard_binding_digest(
            source_digest=self.source_digest,
            content_digest=self.content_digest,
            architecture_digest=self.architecture_digest,
            derivative_range=self.derivative_range,
            shard_start=self.shard_start,
            shard_end=self.shard_end,
        )


# -- the tracker's parsing rules, applied to our own block --------------------


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise RecipeIdentityError(f"{what!r} must be a JSON object")
    return value


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise RecipeIdentityError(f"{what!r} must be a non-empty string")
    return value


def _hex64(value: Any, what: str) -> str:
    text = _text(value, what)
    if not _HEX64.match(text):
        raise RecipeIdentityError(f"{what!r} must be a lowercase SHA-256 hex digest")
    return text


def _integer(value: Any, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecipeIdentityError(f"{what!r} must be an integer")
    if value < minimum:
        raise RecipeIdentityError(f"{what!r} must be >= {minimum}, got {value}")
    return value


def _pin(value: Any, what: str) -> str:
    text = _text(value, what)
    lowered = text.strip().lower()
    if lowered in _MOVING_REFS or lowered.startswith("refs/"):
        raise RecipeIdentityError(f"{what!r} is a moving reference ({text!r}), not an exact pin")
    return text


def _derived_range(
    raw: Any, layer_count: int, content_digest: str
) -> tuple[str, tuple[int, int] | None]:
    """(source digest, split range) — a whole artifact is its own source."""
    if raw is None:
        return content_digest, None
    derived = _mapping(raw, "artifact.derived_from")
    source = _hex64(
        derived.get("source_artifact_digest"), "artifact.derived_from.source_artifact_digest"
    )
    start = _integer(derived.get("shard_start"), "derived_from.shard_start", 0)
    end = _integer(derived.get("shard_end"), "derived_from.shard_end", 1)
    if end <= start:
        raise RecipeIdentityError("'derived_from' covers no layers; an empty split proves nothing")
    if end > layer_count:
        raise RecipeIdentityError(
            f"'derived_from' claims layers {start}–{end}, but the source model has only "
            f"{layer_count} layers"
        )
    if source == content_digest:
        raise RecipeIdentityError(
            "a split artifact's source digest equals its own content digest; "
            "an artifact is not a split of itself"
        )
    return source, (start, end)


def _axes(recipe: Mapping[str, Any]) -> dict[str, Any]:
    axes: dict[str, Any] = {}
    for axis in RECIPE_AXES:
        if axis not in recipe:
            raise RecipeIdentityError(
                f"recipe is missing axis {axis!r}; an unstated axis cannot default"
            )
        value = recipe[axis]
        axes[axis] = (
            _integer(value, f"recipe.{axis}", 1)
            if axis in INT_AXES
            else _text(value, f"recipe.{axis}")
        )
    _pin(axes["tokenizer_revision"], "recipe.tokenizer_revision")
    return axes


def parse_identity(data: Any) -> PresentedIdentity:
    """Parse and verify an identity block by the tracker's rules (same order)."""
    doc = _mapping(data, "identity")
    schema_version = doc.get("schema_version")
    if schema_version != RECIPE_IDENTITY_SCHEMA_VERSION:
        raise RecipeIdentityError(
            f"identity block declares schema version {schema_version!r}; "
            f"version {RECIPE_IDENTITY_SCHEMA_VERSION} is expected"
        )
    artifact = _mapping(doc.get("artifact"), "identity.artifact")
    recipe = _mapping(doc.get("recipe"), "identity.recipe")
    layer_count = _integer(artifact.get("layer_count"), "artifact.layer_count", 1)
    content_digest = _hex64(artifact.get("content_digest"), "artifact.content_digest")
    source_digest, binding = _derived_range(
        artifact.get("derived_from"), layer_count, content_digest
    )

    shard_start = _integer(doc.get("shard_start"), "shard_start", 0)
    shard_end = _integer(doc.get("shard_end"), "shard_end", 1)
    if shard_end <= shard_start:
        raise RecipeIdentityError(
            f"shard owns layers {shard_start}–{shard_end}: a shard owning no layer computes nothing"
        )
    if shard_end > layer_count:
        raise RecipeIdentityError(
            f"shard owns layers {shard_start}–{shard_end}, but the artifact has only "
            f"{layer_count} layers"
        )
    if binding is not None and not (binding[0] <= shard_start and shard_end <= binding[1]):
        raise RecipeIdentityError(
            f"shard advertises layers {shard_start}–{shard_end}, but its split artifact only "
            f"contains layers {binding[0]}–{binding[1]}"
        )
    axes = _axes(recipe)
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
        claimed = (
            _hex64(claim.get("model_artifact_digest"), "fingerprint.model_artifact_digest"),
            _hex64(claim.get("runtime_recipe_digest"), "fingerprint.runtime_recipe_digest"),
        )
        if claimed != identity.key:
            raise FingerprintMismatch(
                "declared fingerprint is inconsistent with the artifact and recipe it was "
                "declared with; digests are recomputed from the axes"
            )
    return identity


# -- building the block this node presents ------------------------------------


class ManifestLike(Protocol):
    """The fields of core.models.manifest.ModelManifest the identity block uses."""

    @property
    def model_id(self) -> str: ...
    @property
    def revision(self) -> str: ...
    @property
    def content_digest(self) -> str: ...
    @property
    def architecture(self) -> str: ...
    @property
    def layer_count(self) -> int: ...


@dataclass(frozen=True)
class DerivedFrom:
    """Set when the local artifact is a split of a bigger source artifact."""

    source_artifact_digest: str
    shard_start: int
    shard_end: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "source_artifact_digest": self.source_artifact_digest,
            "shard_start": self.shard_start,
            "shard_end": self.shard_end,
        }


def build_identity_block(
    *,
    artifact_id: str,
    revision: str,
    content_digest: str,
    architecture: str,
    architecture_digest: str,
    layer_count: int,
    recipe_fields: Mapping[str, Any],
    shard_start: int,
    shard_end: int,
    derived_from: DerivedFrom | None = None,
) -> dict[str, Any]:
    """An identity block with its fingerprint claim, validated before it is returned.

    ``recipe_fields`` is the 11 axes plus recipe_id, recipe_version, catalogue_version
    (core.recipes.catalogue.RuntimeRecipe.identity_fields()).
    """
    block: dict[str, Any] = {
        "schema_version": RECIPE_IDENTITY_SCHEMA_VERSION,
        "artifact": {
            "artifact_id": artifact_id,
            "revision": revision,
            "content_digest": content_digest,
            "layer_count": layer_count,
            "architecture": architecture,
            "architecture_digest": architecture_digest,
            "derived_from": derived_from.to_dict() if derived_from is not None else None,
        },
        "recipe": dict(recipe_fields),
        "shard_start": shard_start,
        "shard_end": shard_end,
    }
    parsed = parse_identity(block)
    block["fingerprint"] = {
        "model_artifact_digest": parsed.model_artifact_digest,
        "runtime_recipe_digest": parsed.runtime_recipe_digest,
    }
    return block


def identity_block_for(
    manifest: ManifestLike,
    model_dir: Path,
    recipe_fields: Mapping[str, Any],
    shard_start: int,
    shard_end: int,
    derived_from: DerivedFrom | None = None,
) -> dict[str, Any]:
    """The block a node serving ``[shard_start, shard_end)`` of a local model presents."""
    return build_identity_block(
        artifact_id=manifest.model_id,
        revision=manifest.revision,
        content_digest=manifest.content_digest,
        architecture=manifest.architecture,
        architecture_digest=architecture_digest_of(model_dir),
        layer_count=manifest.layer_count,
        recipe_fields=recipe_fields,
        shard_start=shard_start,
        shard_end=shard_end,
        derived_from=derived_from,
    )
