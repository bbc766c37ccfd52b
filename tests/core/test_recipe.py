"""Recipe fingerprints (node side), the identity block, and the recipe catalogue."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import core
from core.errors import FingerprintMismatch, RecipeError, RecipeIdentityError
from core.models.manifest import ModelManifest
from core.recipes.catalogue import load_catalogue, resolve_runtime_recipe
from core.recipes.recipe_identity import (
    RECIPE_AXES,
    architecture_digest_of,
    identity_block_for,
    parse_identity,
    recipe_digest,
)
from core.runtime.shard import Shard
from tests.core.build_vectors import RECIPE_VECTORS, build_recipe_vectors, render

SEED_AXES = (
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


def _data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RECIPE_VECTORS.read_text(encoding="utf-8"))
    return data


def _by_hand(domain: str, body: dict[str, Any]) -> str:
    """The docs/wire.md#fingerprint formula written out without core's helpers."""
    text = json.dumps(
        {"domain": domain, "body": body}, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_axes_and_domains_match_the_seed_byte_for_byte() -> None:
    assert set(RECIPE_AXES) == set(SEED_AXES) and len(RECIPE_AXES) == 11
    assert _data()["domains"] == {
        "artifact": "meshnet.model-artifact.v1",
        "recipe": "meshnet.runtime-recipe.v1",
        "shard_binding": "meshnet.shard-binding.v1",
    }


def test_committed_vector_file_equals_a_fresh_build() -> None:
    assert RECIPE_VECTORS.read_text(encoding="utf-8") == render(build_recipe_vectors())


def test_vectors_include_a_derived_split_and_a_rejection_for_each_error_kind() -> None:
    data = _data()
    assert len(data["vectors"]) >= 3
    assert any(v["identity"]["artifact"]["derived_from"] for v in data["vectors"])
    assert {r["error"] for r in data["rejections"]} == {
        "RecipeIdentityError",
        "FingerprintMismatch",
    }


@pytest.mark.parametrize("vector", _data()["vectors"], ids=lambda v: v["name"])
def test_each_vector_reproduces_its_digests(vector: dict[str, Any]) -> None:
    parsed = parse_identity(vector["identity"])
    assert {
        "model_artifact_digest": parsed.model_artifact_digest,
        "runtime_recipe_digest": parsed.runtime_recipe_digest,
        "shard_binding_digest": parsed.shard_binding_digest,
    } == vector["expected"]


@pytest.mark.parametrize("vector", _data()["vectors"], ids=lambda v: v["name"])
def test_each_vector_matches_the_formula_computed_by_hand(vector: dict[str, Any]) -> None:
    block, domains = vector["identity"], _data()["domains"]
    artifact, derived = block["artifact"], block["artifact"]["derived_from"]
    source = derived["source_artifact_digest"] if derived else artifact["content_digest"]
    artifact_body = {
        "source_digest": source,
        "architecture": artifact["architecture"],
        "architecture_digest": artifact["architecture_digest"],
        "layer_count": artifact["layer_count"],
    }
    binding_body = {
        "source_digest": source,
        "content_digest": artifact["content_digest"],
        "architecture_digest": artifact["architecture_digest"],
        "derivative_range": [derived["shard_start"], derived["shard_end"]] if derived else None,
        "shard_start": block["shard_start"],
        "shard_end": block["shard_end"],
    }
    recipe_body = {axis: block["recipe"][axis] for axis in SEED_AXES}
    assert vector["expected"] == {
        "model_artifact_digest": _by_hand(domains["artifact"], artifact_body),
        "runtime_recipe_digest": _by_hand(domains["recipe"], recipe_body),
        "shard_binding_digest": _by_hand(domains["shard_binding"], binding_body),
    }


@pytest.mark.parametrize("rejection", _data()["rejections"], ids=lambda r: r["name"])
def test_each_rejection_raises_its_named_error(rejection: dict[str, Any]) -> None:
    with pytest.raises(RecipeIdentityError) as info:
        parse_identity(rejection["identity"])
    assert type(info.value).__name__ == rejection["error"]


def test_recipe_digest_ignores_non_axis_fields_but_not_axes() -> None:
    axes = copy.deepcopy(_data()["vectors"][0]["identity"]["recipe"])
    base = recipe_digest(axes)
    assert recipe_digest({**axes, "recipe_id": "renamed"}) == base
    assert recipe_digest({**axes, "kv_layout": "paged"}) != base


def test_fingerprint_mismatch_is_a_recipe_identity_error_with_its_own_reason() -> None:
    block = copy.deepcopy(_data()["vectors"][0]["identity"])
    block["fingerprint"]["model_artifact_digest"] = "0" * 64
    with pytest.raises(FingerprintMismatch) as info:
        parse_identity(block)
    assert info.value.reason == "fingerprint-mismatch"


def test_catalogue_ships_fp32_and_bf16_llama_recipes() -> None:
    catalogue = load_catalogue()
    fp32, bf16 = catalogue.get("llama-fp32"), catalogue.get("llama-bf16")
    assert (fp32.compute_dtype, fp32.kv_dtype) == ("float32", "float32")
    assert (bf16.compute_dtype, bf16.kv_dtype) == ("bfloat16", "bfloat16")
    for recipe in (fp32, bf16):
        assert recipe.backend_id == "meshnet-torch"
        assert recipe.axes["kv_layout"] == "contiguous-bhsd"
        assert recipe.axes["architecture_adapter"] == "meshnet.llama.v1"
        assert recipe.axes["weight_quantization"] == "none"
    assert catalogue.default_for("llama", "cpu") == fp32
    assert catalogue.default_for("llama", "cuda") == bf16


def test_unknown_recipe_names_the_known_ones() -> None:
    with pytest.raises(RecipeError) as info:
        load_catalogue().get("gpt-9")
    assert "llama-fp32" in str(info.value)


def test_runtime_recipe_axes_come_from_the_loaded_shard_and_folder(tiny_model_dir: Path) -> None:
    catalogue = load_catalogue()
    shard = Shard.load(tiny_model_dir, 1, 3, compute_dtype="bfloat16", kv_dtype="bfloat16")
    runtime = resolve_runtime_recipe(
        catalogue.get("llama-bf16"), shard, tiny_model_dir, catalogue.catalogue_version
    )
    token_sha = hashlib.sha256((tiny_model_dir / "tokenizer.json").read_bytes()).hexdigest()
    assert runtime.axes["compute_dtype"] == "bfloat16"
    assert runtime.axes["kv_dtype"] == "bfloat16"
    assert runtime.axes["tokenizer_revision"] == token_sha
    assert runtime.axes["runtime_version"] == core.__version__
    assert runtime.axes["boundary_schema_version"] == 1
    assert set(runtime.axes) == set(RECIPE_AXES)


def test_a_shard_loaded_with_other_dtypes_cannot_claim_the_recipe(tiny_model_dir: Path) -> None:
    catalogue = load_catalogue()
    shard = Shard.load(tiny_model_dir, 0, 2)  # float32
    with pytest.raises(RecipeError) as info:
        resolve_runtime_recipe(catalogue.get("llama-bf16"), shard, tiny_model_dir, "1")
    assert info.value.reason == "recipe-mismatch"
    assert "float32" in str(info.value)


def test_identity_block_of_a_local_model_parses_and_carries_a_consistent_claim(
    tiny_model_dir: Path,
) -> None:
    catalogue = load_catalogue()
    manifest = ModelManifest.load(tiny_model_dir)
    shard = Shard.load(tiny_model_dir, 2, 4)
    runtime = resolve_runtime_recipe(catalogue.get("llama-fp32"), shard, tiny_model_dir, "1")
    block = identity_block_for(manifest, tiny_model_dir, runtime.identity_fields(), 2, 4)
    parsed = parse_identity(json.loads(json.dumps(block)))
    assert block["artifact"]["artifact_id"] == manifest.model_id == "tiny-llama"
    assert block["artifact"]["content_digest"] == manifest.content_digest
    assert block["artifact"]["architecture_digest"] == architecture_digest_of(tiny_model_dir)
    assert block["artifact"]["layer_count"] == 4
    assert (parsed.shard_start, parsed.shard_end) == (2, 4)
    assert tuple(block["fingerprint"].values()) == parsed.key


def test_identity_block_refuses_a_range_past_the_model(tiny_model_dir: Path) -> None:
    manifest = ModelManifest.load(tiny_model_dir)
    fields = dict(_data()["vectors"][0]["identity"]["recipe"])
    with pytest.raises(RecipeIdentityError) as info:
        identity_block_for(manifest, tiny_model_dir, fields, 2, 5)
    assert "only 4 layers" in str(info.value)


def test_int8_recipe_has_its_own_fingerprint_and_is_never_a_default(tiny_model_dir: Path) -> None:
    catalogue = load_catalogue()
    int8, fp32 = catalogue.get("llama-int8"), catalogue.get("llama-fp32")
    assert int8.weight_quantization == "int8-per-channel"
    assert {**int8.axes, "weight_quantization": "none"} == fp32.axes
    assert catalogue.default_for("llama", "cpu") == fp32
    dense = Shard.load(tiny_model_dir, 0, 2)
    quantized = Shard.load(tiny_model_dir, 0, 2, weight_quantization="int8-per-channel")
    runtime8 = resolve_runtime_recipe(int8, quantized, tiny_model_dir, "1")
    runtime32 = resolve_runtime_recipe(fp32, dense, tiny_model_dir, "1")
    assert runtime8.axes["weight_quantization"] == "int8-per-channel"
    assert recipe_digest(runtime8.axes) != recipe_digest(runtime32.axes)
    for recipe, shard in ((int8, dense), (fp32, quantized)):  # neither may claim the other
        with pytest.raises(RecipeError) as info:
            resolve_runtime_recipe(recipe, shard, tiny_model_dir, "1")
        assert info.value.reason == "recipe-mismatch"


def test_q4_recipe_has_its_own_fingerprint_and_is_never_a_default(tiny_model_dir: Path) -> None:
    catalogue = load_catalogue()
    q4, int8 = catalogue.get("llama-q4"), catalogue.get("llama-int8")
    assert q4.weight_quantization == "int4-g32-int8-head"
    assert {**q4.axes, "weight_quantization": "int8-per-channel"} == int8.axes
    assert catalogue.default_for("llama", "cpu").recipe_id == "llama-fp32"
    shard4 = Shard.load(tiny_model_dir, 0, 2, weight_quantization="int4-g32-int8-head")
    shard8 = Shard.load(tiny_model_dir, 0, 2, weight_quantization="int8-per-channel")
    runtime4 = resolve_runtime_recipe(q4, shard4, tiny_model_dir, "1")
    runtime8 = resolve_runtime_recipe(int8, shard8, tiny_model_dir, "1")
    assert recipe_digest(runtime4.axes) != recipe_digest(runtime8.axes)
    with pytest.raises(RecipeError) as info:  # an int8 shard cannot claim the q4 recipe
        resolve_runtime_recipe(q4, shard8, tiny_model_dir, "1")
    assert info.value.reason == "recipe-mismatch"
