"""batch_generate: completions for a JSONL of prompts with a local model.

Input ``prompts`` (one JSON object per line with ``prompt``, or a bare string);
params ``model``, ``recipe``, ``max_new_tokens`` (32), ``chat=1`` to apply the
chat template. Writes ``completions.jsonl`` (one line per prompt, in order).
"""

from __future__ import annotations

import json
import sys

import torch

from core.jobs.workloads.common import TaskSpec, read_spec, write_json
from core.jobs.workloads.model_common import load_model
from core.runtime.generate import generate_local


def _prompts(text: str) -> list[str]:
    prompts = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        value = json.loads(line)
        prompt = value.get("prompt") if isinstance(value, dict) else value
        if not isinstance(prompt, str):
            raise SystemExit(f"line {number}: expected a string or an object with 'prompt'")
        prompts.append(prompt)
    return prompts


def main(spec: TaskSpec) -> int:
    source = spec.inputs.get("prompts")
    if source is None or not source.is_file():
        print("batch_generate needs a JSONL input named 'prompts'", file=sys.stderr)
        return 2
    prompts = _prompts(source.read_text(encoding="utf-8"))
    shard, tokenizer, recipe_id, _ = load_model(spec)
    max_new = int(spec.number("max_new_tokens", 32))
    stops = tokenizer.eos_token_ids
    lines, produced = [], 0
    with torch.inference_mode():
        for prompt in prompts:
            ids = (
                tokenizer.encode_chat([{"role": "user", "content": prompt}])
                if spec.flag("chat")
                else tokenizer.encode(prompt)
            )
            tokens = [t for t in generate_local([shard], ids, max_new, stop_ids=stops)]
            produced += len(tokens)
            completion = tokenizer.decode([t for t in tokens if t not in stops])
            lines.append(json.dumps({"prompt": prompt, "completion": completion}))
    (spec.out / "completions.jsonl").write_text("\n".join(lines) + ("\n" if lines else ""))
    write_json(
        spec.out / "metrics.json",
        {
            "workload": "batch_generate",
            "recipe_id": recipe_id,
            "prompts": len(prompts),
            "tokens_generated": produced,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(read_spec()))
