"""perplexity: a recipe's perplexity on a text input, the quality check a new recipe needs.

Input ``text`` (a UTF-8 file); params ``model``, ``recipe``, ``max_tokens`` (512).
The text's first ``max_tokens`` tokens are run through the whole model once and
the mean negative log-likelihood of each next token gives the perplexity.
"""

from __future__ import annotations

import math
import sys

import torch

from core.jobs.workloads.common import TaskSpec, read_spec, write_json
from core.jobs.workloads.model_common import load_model
from core.runtime.sessions import SessionManager


def main(spec: TaskSpec) -> int:
    source = spec.inputs.get(spec.text("input", "text") or "text")
    if source is None or not source.is_file():
        print("perplexity needs a text file input named 'text'", file=sys.stderr)
        return 2
    shard, tokenizer, recipe_id, _ = load_model(spec)
    limit = min(int(spec.number("max_tokens", 512)), shard.config.max_position_embeddings)
    ids = tokenizer.encode(source.read_text(encoding="utf-8"))[:limit]
    if len(ids) < 2:
        print("the text is shorter than two tokens; nothing to score", file=sys.stderr)
        return 2
    session = SessionManager(shard).open(len(ids))
    try:
        with torch.inference_mode():
            result = session.step(torch.tensor([ids], dtype=torch.int64), return_logits=True)
    finally:
        session.close()
    assert result.logits is not None
    logits = result.logits[0, :-1].float()
    targets = torch.tensor(ids[1:], dtype=torch.int64)
    nll = float(torch.nn.functional.cross_entropy(logits, targets))
    write_json(
        spec.out / "metrics.json",
        {
            "workload": "perplexity",
            "recipe_id": recipe_id,
            "tokens_scored": len(ids) - 1,
            "mean_nll": nll,
            "perplexity": math.exp(nll),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(read_spec()))
