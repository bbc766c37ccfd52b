"""Loading a whole model for a batch workload, at a recipe's compute dtype."""

from __future__ import annotations

from pathlib import Path

from core.jobs.workloads.common import TaskSpec
from core.models.local import resolve_model
from core.models.tokenizer import ChatTokenizer
from core.recipes.catalogue import load_catalogue
from core.runtime.config import ModelConfig
from core.runtime.shard import Shard


def load_model(spec: TaskSpec) -> tuple[Shard, ChatTokenizer, str, Path]:
    """(whole-model shard, tokenizer, recipe id, folder) for the task's params:
    ``model`` (id or folder; default the embedded model), ``recipe`` (default the
    catalogue's choice for the architecture on this device), ``device`` (cpu)."""
    folder = resolve_model(spec.text("model"))
    config = ModelConfig.from_folder(folder)
    device = spec.text("device", "cpu") or "cpu"
    catalogue = load_catalogue()
    recipe_id = spec.text("recipe")
    recipe = (
        catalogue.get(recipe_id)
        if recipe_id
        else catalogue.default_for(config.architecture, device)
    )
    shard = Shard.load(
        folder,
        0,
        config.num_layers,
        compute_dtype=recipe.compute_dtype,
        kv_dtype=recipe.kv_dtype,
        device=device,
    )
    return shard, ChatTokenizer.from_folder(folder), recipe.recipe_id, folder
