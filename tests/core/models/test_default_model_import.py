"""The packaged GGUF becomes a standard model folder that any reader loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import ModelError
from core.models.default_model import DEFAULT_MODEL_ID, ensure_default_model, find_default_gguf
from core.models.local import list_local_models, resolve_model
from core.models.manifest import MANIFEST_NAME, ModelManifest
from core.models.tokenizer import ChatTokenizer
from core.progress import Progress

SAMPLES = [
    "Hello world! 12345 The year 2024.",
    "  spaces\tand\nnewlines  ",
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n",
    "naïve café ünïcödé 日本語 🙂",
]


def test_import_writes_every_file_with_its_digest(default_model_dir: Path) -> None:
    manifest = ModelManifest.load(default_model_dir)
    assert manifest.model_id == DEFAULT_MODEL_ID
    assert manifest.layer_count == 30
    assert set(manifest.files) >= {
        "model.safetensors",
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
    }
    assert manifest.verify(default_model_dir) == []
    assert manifest.revision.startswith("gguf-sha256-")
    config = json.loads((default_model_dir / "config.json").read_text())
    assert config["num_hidden_layers"] == 30 and config["tie_word_embeddings"] is True


def test_import_is_idempotent(default_model_dir: Path) -> None:
    before = (default_model_dir / "model.safetensors").stat().st_mtime_ns
    again = ensure_default_model(default_model_dir.parent)
    assert again == default_model_dir
    assert (default_model_dir / "model.safetensors").stat().st_mtime_ns == before


def test_interrupted_import_leaves_no_complete_looking_folder(tmp_path: Path) -> None:
    class Interrupted(Exception):
        pass

    seen: list[Progress] = []

    def interrupt(progress: Progress) -> None:
        seen.append(progress)
        if progress.stage == "import" and progress.done == 5:  # amid the tensors
            raise Interrupted

    with pytest.raises(Interrupted):
        ensure_default_model(tmp_path, progress=interrupt)
    assert not (tmp_path / DEFAULT_MODEL_ID).exists()
    assert list(tmp_path.iterdir()) == []
    assert list_local_models(tmp_path) == []
    assert [p.done for p in seen] == [0, 1, 1, 2, 3, 4, 5]  # one shape, counting up
    assert seen[-1].total > 5 and seen[-1].message == "Unpacking the default model…"


def test_corrupted_file_is_reported_by_verify(default_model_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", MANIFEST_NAME):
        (copy / name).write_bytes((default_model_dir / name).read_bytes())
    (copy / "config.json").write_text("{}")
    problems = ModelManifest.load(copy).verify(copy)
    assert "config.json does not match its recorded SHA-256" in problems
    assert "model.safetensors is missing" in problems


def test_list_and_resolve_find_the_imported_model(default_model_dir: Path) -> None:
    root = default_model_dir.parent
    assert [m.model_id for m in list_local_models(root)] == [DEFAULT_MODEL_ID]
    assert resolve_model(DEFAULT_MODEL_ID, root) == default_model_dir
    assert resolve_model(str(default_model_dir), root) == default_model_dir
    with pytest.raises(ModelError, match="not on this machine"):
        resolve_model("no-such-model", root)


def test_tokenizer_matches_transformers_reading_the_gguf(default_model_dir: Path) -> None:
    transformers = pytest.importorskip("transformers")
    gguf = find_default_gguf()
    reference = transformers.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    ours = ChatTokenizer.from_folder(default_model_dir)
    for text in SAMPLES:
        assert ours.encode(text) == reference.encode(text, add_special_tokens=False)
        assert ours.decode(ours.encode(text), skip_special_tokens=False) == text


def test_chat_template_matches_transformers(default_model_dir: Path) -> None:
    transformers = pytest.importorskip("transformers")
    reference = transformers.AutoTokenizer.from_pretrained(default_model_dir)
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    expected = reference.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert ChatTokenizer.from_folder(default_model_dir).apply_chat_template(messages) == expected


@pytest.mark.slow
def test_transformers_loads_the_folder_and_answers_like_the_gguf(default_model_dir: Path) -> None:
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    import torch

    gguf = find_default_gguf()
    ours = transformers.AutoModelForCausalLM.from_pretrained(default_model_dir)
    original = transformers.AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    tokenizer = ChatTokenizer.from_folder(default_model_dir)
    ids = torch.tensor([tokenizer.encode_chat([{"role": "user", "content": "Name a colour."}])])
    with torch.inference_mode():
        torch.testing.assert_close(ours(ids).logits, original(ids).logits.float())
        answer = ours.generate(ids, max_new_tokens=12, do_sample=False)
    assert tokenizer.decode(answer[0, ids.shape[1] :].tolist()).strip()
