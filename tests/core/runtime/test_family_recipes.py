"""Each family has its catalogued recipes (own adapter axis), a committed fingerprint
vector, and passes the doctor's probe on its first and last shard."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.doctor.probe import Deadline, ProbePlan, run_probe
from core.recipes.catalogue import load_catalogue, resolve_runtime_recipe
from core.recipes.recipe_identity import architecture_digest_of, parse_identity
from core.runtime import ModelConfig, Shard
from core.runtime.families import ADAPTERS
from tests.core.runtime.family_models import FAMILY_MODELS, build_family_model

VECTORS = Path(__file__).resolve().parents[2] / "data" / "recipe_fingerprint_vectors.json"


@pytest.fixture(scope="module")
def family_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {n: build_family_model(tmp_path_factory.mktemp(n), n) for n in FAMILY_MODELS}


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_every_family_has_a_float_recipe_with_its_own_adapter_axis(device: str) -> None:
    catalogue = load_catalogue()
    adapters = {}
    for adapter in ADAPTERS:
        recipe = catalogue.default_for(adapter.name, device)
        assert recipe.compute_dtype == ("float32" if device == "cpu" else "bfloat16")
        adapters[adapter.name] = recipe.axes["architecture_adapter"]
    assert len(set(adapters.values())) == len(ADAPTERS), adapters


def test_every_family_adapter_has_a_committed_fingerprint_vector() -> None:
    vectors = json.loads(VECTORS.read_text(encoding="utf-8"))["vectors"]
    adapters_with_vectors = set()
    for vector in vectors:
        identity = parse_identity(vector["identity"])
        assert identity.model_artifact_digest == vector["expected"]["model_artifact_digest"]
        assert identity.runtime_recipe_digest == vector["expected"]["runtime_recipe_digest"]
        adapters_with_vectors.add(identity.axes["architecture_adapter"])
    catalogue = load_catalogue()
    for adapter in ADAPTERS:
        expected = catalogue.default_for(adapter.name, "cpu").axes["architecture_adapter"]
        assert expected in adapters_with_vectors, f"no vector for {adapter.name}"


def test_a_window_or_cap_change_is_another_artifact(
    family_dirs: dict[str, Path], tmp_path: Path
) -> None:
    """The family's own fields are hashed through the config digest, not new axes."""
    source = family_dirs["gemma2"] / "config.json"
    config = json.loads(source.read_text(encoding="utf-8"))
    config["attn_logit_softcapping"] = 50.0
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    assert architecture_digest_of(tmp_path) != architecture_digest_of(family_dirs["gemma2"])


@pytest.mark.parametrize("name", FAMILY_MODELS)
def test_the_doctors_probe_passes_and_the_recipe_resolves_for_each_family(
    name: str, family_dirs: dict[str, Path]
) -> None:
    folder = family_dirs[name]
    (folder / "tokenizer.json").write_text("{}", encoding="utf-8")  # the recipe hashes its bytes
    catalogue = load_catalogue()
    recipe = catalogue.default_for(ModelConfig.from_folder(folder).architecture, "cpu")
    for start, end in ((0, 2), (2, 4)):
        shard = Shard.load(folder, start, end)
        outcome = run_probe(shard, ProbePlan(), Deadline(600))
        assert outcome.completed
        assert [c for c in outcome.checks if not c.passed] == []
        resolved = resolve_runtime_recipe(recipe, shard, folder, catalogue.catalogue_version)
        assert resolved.axes["architecture_adapter"] == recipe.axes["architecture_adapter"]
