"""`meshnet generate`: a whole model as one shard in this process, for quick checks
and scripts. The same runtime, recipes and tokenizer a route uses, minus the network.

A model is a folder (a managed one with its manifest, or any Hugging Face folder with
``config.json``, safetensors and ``tokenizer.json``) or the id of a local model.
``--recipe`` takes a catalogue id or a short name (fp32, bf16, int8) that picks the
model family's recipe of that kind; by default the family's float32 recipe.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from core.errors import ConfigError, RecipeError
from core.models.local import resolve_model
from core.models.tokenizer import ChatTokenizer
from core.recipes.catalogue import Recipe, RecipeCatalogue, load_catalogue
from core.runtime import ModelConfig, Shard, generate_local

log = logging.getLogger(__name__)

# short recipe names -> (compute dtype, weight quantization)
_SHORT = {
    "fp32": ("float32", "none"),
    "bf16": ("bfloat16", "none"),
    "int8": ("float32", "int8-per-channel"),
    "q4": ("float32", "int4-g32-int8-head"),
}


@dataclass(frozen=True)
class Generation:
    model: str
    recipe_id: str
    prompt_ids: list[int]
    token_ids: list[int]
    text: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def model_folder(model: str | None) -> Path:
    """A folder holding config.json as it is, else a local model id (or the default)."""
    if model is not None and (Path(model).expanduser() / "config.json").is_file():
        return Path(model).expanduser()
    return resolve_model(model)


def pick_recipe(catalogue: RecipeCatalogue, name: str | None, architecture: str) -> Recipe:
    if name is None:
        return catalogue.default_for(architecture, "cpu")
    if name in _SHORT:
        dtype, quant = _SHORT[name]
        for recipe in catalogue.recipes:
            if (
                recipe.architecture == architecture
                and recipe.compute_dtype == dtype
                and recipe.weight_quantization == quant
            ):
                return recipe
        raise RecipeError(
            f"no {name} recipe is catalogued for {architecture} models; try fp32",
            reason="unknown-recipe",
        )
    recipe = catalogue.get(name)
    if recipe.architecture != architecture:
        raise RecipeError(
            f"recipe {name} is for {recipe.architecture} models, this model is {architecture}; "
            "leave --recipe out to use the model's own",
            reason="recipe-mismatch",
        )
    return recipe


def generate(
    model: str | None,
    prompt: str,
    max_tokens: int,
    *,
    recipe: str | None = None,
    chat: bool = False,
    device: str = "cpu",
) -> Generation:
    """Greedy generation of up to ``max_tokens`` tokens, stopping at an end-of-text token."""
    if max_tokens < 1:
        raise ConfigError(
            f"max_tokens is {max_tokens}; ask for at least 1 token", reason="bad-max-tokens"
        )
    folder = model_folder(model)
    config = ModelConfig.from_folder(folder)
    chosen = pick_recipe(load_catalogue(), recipe, config.architecture)
    tokenizer = ChatTokenizer.from_folder(folder)
    text = tokenizer.apply_chat_template([{"role": "user", "content": prompt}]) if chat else prompt
    prompt_ids = tokenizer.encode(text)
    shard = Shard.load(
        folder,
        0,
        config.num_layers,
        compute_dtype=chosen.compute_dtype,
        kv_dtype=chosen.kv_dtype,
        device=device,
        weight_quantization=chosen.weight_quantization,
    )
    log.info("generating with %s on %s", chosen.recipe_id, folder)
    tokens = list(generate_local([shard], prompt_ids, max_tokens, stop_ids=tokenizer.eos_token_ids))
    return Generation(
        model=str(folder),
        recipe_id=chosen.recipe_id,
        prompt_ids=prompt_ids,
        token_ids=tokens,
        text=tokenizer.decode(tokens),
    )
