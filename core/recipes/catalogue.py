"""The recipes this node ships, and the axes of the recipe it has really loaded.

A catalogue entry names a recipe and fixes the axes a user chooses (dtypes,
KV layout, adapter, backend). The axes nobody chooses — the tokenizer's bytes,
the runtime's version — are read from what is on disk and in memory, so the
fingerprint describes the loaded shard rather than the intention behind it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import core
from core.errors import ModelError, RecipeError
from core.recipes.recipe_identity import RECIPE_AXES

CATALOGUE_PATH = Path(__file__).with_name("catalogue.json")
BOUNDARY_SCHEMA_VERSION = 1
PROTOCOL_SCHEMA_VERSION = 1

# Axes a catalogue entry must fix; the rest are measured from the loaded shard.
CHOSEN_AXES: tuple[str, ...] = (
    "weight_quantization",
    "activation_dtype",
    "compute_dtype",
    "kv_dtype",
    "kv_layout",
    "architecture_adapter",
)


@dataclass(frozen=True)
class Recipe:
    recipe_id: str
    recipe_version: str
    backend_id: str
    architecture: str  # the runtime adapter family it applies to (core/runtime/families)
    axes: Mapping[str, str] = field(default_factory=dict)

    @property
    def compute_dtype(self) -> str:
        return self.axes["compute_dtype"]

    @property
    def kv_dtype(self) -> str:
        return self.axes["kv_dtype"]

    @property
    def weight_quantization(self) -> str:
        return self.axes["weight_quantization"]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Recipe:
        try:
            axes = {name: str(data["axes"][name]) for name in CHOSEN_AXES}
            return cls(
                recipe_id=str(data["recipe_id"]),
                recipe_version=str(data["recipe_version"]),
                backend_id=str(data["backend_id"]),
                architecture=str(data["architecture"]),
                axes=axes,
            )
        except (KeyError, TypeError) as exc:
            raise RecipeError(f"recipe catalogue entry is incomplete: missing {exc}") from exc


@dataclass(frozen=True)
class RecipeCatalogue:
    catalogue_version: str
    recipes: tuple[Recipe, ...]

    def get(self, recipe_id: str) -> Recipe:
        for recipe in self.recipes:
            if recipe.recipe_id == recipe_id:
                return recipe
        known = ", ".join(r.recipe_id for r in self.recipes)
        raise RecipeError(
            f"unknown recipe {recipe_id!r}; this node knows: {known}", reason="unknown-recipe"
        )

    def choose(self, recipe_id: str | None, architecture: str, device: str) -> Recipe:
        """The recipe named, else :meth:`default_for` this architecture and device."""
        return self.get(recipe_id) if recipe_id else self.default_for(architecture, device)

    def default_for(self, architecture: str, device: str) -> Recipe:
        """float32 on a CPU (bfloat16 matmuls there are slow and less exact),
        bfloat16 on an accelerator (half the memory per layer); dense weights: a
        quantized recipe is only ever chosen by name."""
        dtype = "float32" if device == "cpu" else "bfloat16"
        for recipe in self.recipes:
            if (
                recipe.architecture == architecture
                and recipe.compute_dtype == dtype
                and recipe.weight_quantization == "none"
            ):
                return recipe
        raise RecipeError(
            f"no recipe in the catalogue runs a {architecture!r} model in {dtype} on {device}",
            reason="unknown-recipe",
        )


def load_catalogue(path: Path | None = None) -> RecipeCatalogue:
    source = CATALOGUE_PATH if path is None else path
    data = json.loads(source.read_text(encoding="utf-8"))
    return RecipeCatalogue(
        catalogue_version=str(data["catalogue_version"]),
        recipes=tuple(Recipe.from_dict(entry) for entry in data["recipes"]),
    )


class _ConfigLike(Protocol):
    @property
    def architecture(self) -> str: ...


class LoadedShardLike(Protocol):
    """What recipe resolution reads from core.runtime.shard.Shard."""

    @property
    def config(self) -> _ConfigLike: ...
    @property
    def compute_dtype(self) -> Any: ...
    @property
    def kv_dtype(self) -> Any: ...
    @property
    def weight_quantization(self) -> str: ...


def dtype_name(dtype: Any) -> str:
    """``torch.bfloat16`` -> ``"bfloat16"`` (the recipe's spelling)."""
    return str(dtype).removeprefix("torch.")


def tokenizer_revision(model_dir: Path) -> str:
    """The SHA-256 of ``tokenizer.json``: the exact bytes a client must tokenize with."""
    path = Path(model_dir) / "tokenizer.json"
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise ModelError(
            f"{path} is missing or unreadable; re-import the model", reason="missing-tokenizer"
        ) from exc


@dataclass(frozen=True)
class RuntimeRecipe:
    """A catalogue recipe with every one of the 11 axes resolved for a loaded shard."""

    recipe: Recipe
    catalogue_version: str
    axes: Mapping[str, Any]

    @property
    def recipe_id(self) -> str:
        return self.recipe.recipe_id

    @property
    def recipe_version(self) -> str:
        return self.recipe.recipe_version

    @property
    def backend_id(self) -> str:
        return self.recipe.backend_id

    def identity_fields(self) -> dict[str, Any]:
        """The identity block's ``recipe`` object."""
        fields = {axis: self.axes[axis] for axis in RECIPE_AXES}
        fields.update(
            recipe_id=self.recipe_id,
            recipe_version=self.recipe_version,
            catalogue_version=self.catalogue_version,
        )
        return fields


def resolve_runtime_recipe(
    recipe: Recipe, shard: LoadedShardLike, model_dir: Path, catalogue_version: str
) -> RuntimeRecipe:
    """The recipe's axes as the loaded shard really runs them.

    Refuses when the shard was loaded with other dtypes or for another adapter
    family than the recipe names: presenting that fingerprint would be a lie a
    route only discovers as garbage tokens.
    """
    loaded = {
        "compute_dtype": dtype_name(shard.compute_dtype),
        "kv_dtype": dtype_name(shard.kv_dtype),
        # Hidden states cross the wire in the compute dtype (runtime_api.md StepResult).
        "activation_dtype": dtype_name(shard.compute_dtype),
        # What the loaded modules store: "none" or "int8-per-channel" (runtime/quant.py).
        "weight_quantization": shard.weight_quantization,
    }
    for axis, value in loaded.items():
        if recipe.axes[axis] != value:
            raise RecipeError(
                f"recipe {recipe.recipe_id} expects {axis} {recipe.axes[axis]}, but the loaded "
                f"shard runs {value}; reload the shard with the recipe's settings",
                reason="recipe-mismatch",
            )
    if shard.config.architecture != recipe.architecture:
        raise RecipeError(
            f"recipe {recipe.recipe_id} is for {recipe.architecture} models, but the loaded "
            f"model is {shard.config.architecture}",
            reason="recipe-mismatch",
        )
    axes: dict[str, Any] = {
        **loaded,
        "kv_layout": recipe.axes["kv_layout"],
        "architecture_adapter": recipe.axes["architecture_adapter"],
        "backend_id": recipe.backend_id,
        "tokenizer_revision": tokenizer_revision(model_dir),
        "runtime_version": core.__version__,
        "boundary_schema_version": BOUNDARY_SCHEMA_VERSION,
        "protocol_schema_version": PROTOCOL_SCHEMA_VERSION,
    }
    return RuntimeRecipe(recipe=recipe, catalogue_version=catalogue_version, axes=axes)
