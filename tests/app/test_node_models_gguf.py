"""`meshnet-node models import-gguf PATH [--name NAME] [--unpack]`: a GGUF becomes a local
model that `models list` shows and `meshnet generate` runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli.node import main as node_main
from app.cli.node_models import gguf_model_id
from core.models.local import list_local_models
from core.one_process_generate import generate
from core.paths import models_dir
from tests.core.models.test_gguf_families import write_gguf


def test_import_gguf_names_lists_and_generates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_gguf(tmp_path / "Tiny-Qwen3.Q8_0.gguf", "qwen3")
    assert node_main(["models", "import-gguf", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out == {"path": str(models_dir() / "tiny-qwen3.q8_0"), "model_id": "tiny-qwen3.q8_0"}
    assert node_main(["models", "import-gguf", str(path), "--name", "mine"]) == 0
    assert sorted(m.model_id for m in list_local_models()) == ["mine", "tiny-qwen3.q8_0"]
    result = generate("mine", "t t", 4)
    assert result.recipe_id == "qwen3-fp32" and len(result.token_ids) == 4
    # the weights stay the GGUF; --unpack writes float32 safetensors, the same model
    assert sorted(p.name for p in (models_dir() / "mine").glob("model.*")) == ["model.gguf"]
    assert node_main(["models", "import-gguf", str(path), "--name", "open", "--unpack"]) == 0
    assert sorted(p.name for p in (models_dir() / "open").glob("model.*")) == ["model.safetensors"]
    assert generate("open", "t t", 4).token_ids == result.token_ids


def test_a_missing_file_and_a_bad_name_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert node_main(["models", "import-gguf", str(tmp_path / "none.gguf")]) == 2
    assert "no GGUF file at" in capsys.readouterr().err
    path = write_gguf(tmp_path / "x.gguf", "llama")
    assert node_main(["models", "import-gguf", str(path), "--name", "../escape"]) == 2
    assert "must be letters, digits" in capsys.readouterr().err
    assert list_local_models() == []


def test_model_id_from_the_file_name() -> None:
    assert gguf_model_id(Path("/x/Gemma-3-270M Q4_K_M.gguf")) == "gemma-3-270m-q4_k_m"
