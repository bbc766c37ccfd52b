"""A shard fetches only the weight files that hold its layers (offline, hub layout)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.errors import ConfigError
from core.models.hub import fetch_shard, files_for_layers
from core.models.hub_client import hub_downloader
from core.models.manifest import ModelManifest
from core.progress import Progress

LAYERS = 4


def _weight_map() -> dict[str, str]:
    mapping = {"model.embed_tokens.weight": "model-00001-of-00003.safetensors"}
    for layer in range(LAYERS):
        filename = (
            "model-00002-of-00003.safetensors" if layer < 2 else "model-00003-of-00003.safetensors"
        )
        mapping[f"model.layers.{layer}.mlp.up_proj.weight"] = filename
    mapping["model.norm.weight"] = "model-00003-of-00003.safetensors"
    mapping["lm_head.weight"] = "model-00004-of-00004.safetensors"
    return mapping


def test_first_shard_needs_embedding_and_its_layers_only() -> None:
    assert files_for_layers(_weight_map(), 0, 2, LAYERS, tied=False) == (
        "model-00001-of-00003.safetensors",
        "model-00002-of-00003.safetensors",
    )


def test_last_shard_needs_norm_and_head_and_tied_embedding() -> None:
    assert files_for_layers(_weight_map(), 2, 4, LAYERS, tied=False) == (
        "model-00003-of-00003.safetensors",
        "model-00004-of-00004.safetensors",
    )
    assert "model-00001-of-00003.safetensors" in files_for_layers(
        _weight_map(), 2, 4, LAYERS, tied=True
    )


def test_range_outside_the_model_is_refused_with_numbers() -> None:
    with pytest.raises(ConfigError, match="layers 2–9, model has 4"):
        files_for_layers(_weight_map(), 2, 9, LAYERS, tied=False)


def test_moving_revision_is_refused() -> None:
    with pytest.raises(ConfigError, match="not an exact commit"):
        hub_downloader("org/model", "main")


@pytest.fixture
def hub_repo(tmp_path: Path) -> Path:
    transformers = pytest.importorskip("transformers")
    import torch

    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=128,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=LAYERS,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=False,
    )
    repo = tmp_path / "repo"
    transformers.LlamaForCausalLM(config).save_pretrained(repo, max_shard_size="20KB")
    (repo / "tokenizer.json").write_text("{}")
    (repo / "tokenizer_config.json").write_text("{}")
    return repo


def test_fetch_shard_downloads_only_the_files_its_layers_need(
    hub_repo: Path, tmp_path: Path
) -> None:
    requested: list[str] = []

    def local_downloader(filename: str, local_dir: Path, on_bytes: object = None) -> Path:
        requested.append(filename)
        source = hub_repo / filename
        if not source.is_file():
            raise FileNotFoundError(filename)
        shutil.copyfile(source, local_dir / filename)
        return local_dir / filename

    index = json.loads((hub_repo / "model.safetensors.index.json").read_text())
    all_weights = set(index["weight_map"].values())
    expected = set(files_for_layers(index["weight_map"], 1, 3, LAYERS, tied=False))
    assert expected < all_weights  # the repo really is split finer than the shard

    sizes = {p.name: p.stat().st_size for p in hub_repo.iterdir()}
    ordered = sorted(expected)
    total = sum(sizes[name] for name in ordered)
    seen: list[Progress] = []
    folder = fetch_shard(
        local_downloader,
        tmp_path / "shard",
        model_id="tiny",
        revision="0" * 40,
        start=1,
        end=3,
        progress=seen.append,
        sizes=sizes,
    )
    before_each = [sum(sizes[name] for name in ordered[:i]) for i in range(len(ordered) + 1)]
    assert [(p.stage, p.done, p.total) for p in seen] == [
        ("fetch", done, total) for done in before_each
    ]
    assert seen[0].message.startswith("Fetching ") and seen[-1].message == "Fetched layers 1–3."
    # each file's events name it, so the app need not parse the sentence
    assert [p.item for p in seen[:-1]] == ordered and seen[-1].item == ""
    assert seen[0].data()["item"] == ordered[0] and "item" not in seen[-1].data()
    fetched = {p.name for p in folder.glob("*.safetensors")}
    assert fetched == expected
    manifest = ModelManifest.load(folder)
    assert manifest.layer_count == LAYERS
    assert manifest.source["layers"] == [1, 3]
    assert manifest.verify(folder) == []
    assert not all_weights - expected & set(requested)


def test_layers_past_the_model_are_refused_before_any_weight_is_fetched(
    hub_repo: Path, tmp_path: Path
) -> None:
    requested: list[str] = []

    def local_downloader(filename: str, local_dir: Path, on_bytes: object = None) -> Path:
        requested.append(filename)
        shutil.copyfile(hub_repo / filename, local_dir / filename)
        return local_dir / filename

    with pytest.raises(ConfigError, match=r"org/tiny has 4 layers, so layers 2–9 do not exist"):
        fetch_shard(
            local_downloader,
            tmp_path / "shard",
            model_id="tiny",
            revision="0" * 40,
            start=2,
            end=9,
            repo_id="org/tiny",
        )
    assert not [name for name in requested if name.endswith(".safetensors")]
