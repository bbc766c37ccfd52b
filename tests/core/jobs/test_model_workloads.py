"""perplexity and batch_generate with the real default model, through the runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.jobs.runner import SubprocessRunner


@pytest.mark.slow
def test_perplexity_scores_a_text_with_a_recipe(tmp_path: Path, default_model_dir: Path) -> None:
    text = tmp_path / "text.txt"
    text.write_text("The quick brown fox jumps over the lazy dog. " * 8)
    payload = {
        "workload": "perplexity",
        "params": {"model": str(default_model_dir), "max_tokens": "64"},
    }
    out = SubprocessRunner().run(payload, tmp_path / "task", {"text": text})
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["tokens_scored"] == 63
    # Repeated text is very predictable: far below a uniform guess over the vocabulary.
    assert 1.0 < metrics["perplexity"] < 100.0


@pytest.mark.slow
def test_batch_generate_completes_every_prompt(tmp_path: Path, default_model_dir: Path) -> None:
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('{"prompt": "The capital of France is"}\n"One, two, three,"\n')
    payload = {
        "workload": "batch_generate",
        "params": {"model": str(default_model_dir), "max_new_tokens": "5"},
    }
    out = SubprocessRunner().run(payload, tmp_path / "task", {"prompts": prompts})
    lines = [json.loads(x) for x in (out / "completions.jsonl").read_text().splitlines()]
    assert [x["prompt"] for x in lines] == ["The capital of France is", "One, two, three,"]
    assert all(x["completion"] for x in lines)
    assert json.loads((out / "metrics.json").read_text())["prompts"] == 2
