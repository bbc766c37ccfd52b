"""`meshnet generate`: one-process generation through the shard runtime equals
transformers' greedy tokens, on the packaged default model and on a tiny random
Gemma 3 folder; --json carries the ids and the text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from app.cli.meshnet import main
from core.models.tokenizer import ChatTokenizer
from tests.core.runtime.family_models import build_family_model

ROOT = Path(__file__).resolve().parents[2]


def byte_tokenizer(folder: Path) -> None:
    """A 256-id byte-level tokenizer: every id of the tiny model's vocabulary is one byte."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    byte_chars = sorted(alphabet)
    vocab = {ch: i for i, ch in enumerate(byte_chars)}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.save(str(folder / "tokenizer.json"))


@pytest.fixture(scope="module")
def tiny_gemma3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = build_family_model(tmp_path_factory.mktemp("generate-gemma3"), "gemma3")
    byte_tokenizer(folder)
    return folder


def reference_greedy(folder: Path, ids: list[int], n: int) -> list[int]:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    x = torch.tensor([ids])
    with torch.inference_mode():
        for _ in range(n):
            x = torch.cat((x, model(x).logits[0, -1].argmax().view(1, 1)), dim=1)
    return x[0, len(ids) :].tolist()


def test_generate_json_on_the_default_model_equals_transformers_greedy(
    default_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["generate", "--model", str(default_model_dir), "--prompt", "The capital of France is"]
    assert main([*argv, "--max-tokens", "8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    tokenizer = ChatTokenizer.from_folder(default_model_dir)
    assert out["prompt_ids"] == tokenizer.encode("The capital of France is")
    assert out["recipe_id"] == "llama-fp32"
    assert 1 <= len(out["token_ids"]) <= 8
    expected = reference_greedy(default_model_dir, out["prompt_ids"], len(out["token_ids"]))
    assert out["token_ids"] == expected
    assert out["text"] == tokenizer.decode(out["token_ids"])
    assert "Paris" in out["text"]


def test_generate_runs_a_tiny_random_gemma3_folder_as_a_command(tiny_gemma3: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "app.cli.meshnet", "generate", "--model", str(tiny_gemma3)]
    done = subprocess.run(
        [*command, "--prompt", "hello", "--max-tokens", "12", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert len(out["prompt_ids"]) == 5  # one id per byte
    assert out["recipe_id"] == "gemma3-fp32"
    assert out["token_ids"] == reference_greedy(tiny_gemma3, out["prompt_ids"], 12)
    assert out["text"] == ChatTokenizer.from_folder(tiny_gemma3).decode(out["token_ids"])


def test_generate_bf16_recipe_by_its_short_name(
    tiny_gemma3: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["generate", "--model", str(tiny_gemma3), "--prompt", "hi", "--max-tokens", "3"]
    assert main([*argv, "--recipe", "bf16", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["recipe_id"] == "gemma3-bf16" and len(out["token_ids"]) == 3


def test_generate_refuses_another_familys_recipe(
    tiny_gemma3: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["generate", "--model", str(tiny_gemma3), "--prompt", "hi", "--recipe", "llama-fp32"]
    assert main(argv) == 2
    assert "[recipe-mismatch]" in capsys.readouterr().err


def test_generate_refuses_zero_tokens(
    tiny_gemma3: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["generate", "--model", str(tiny_gemma3), "--prompt", "hi", "--max-tokens", "0"]
    assert main(argv) == 2
    assert "[bad-max-tokens]" in capsys.readouterr().err
