"""Perplexity of a recipe against float32 on the same fixed text, on the default model.

    python benchmarks/perplexity.py [--recipe q4]

The text is ``tests/data/perplexity_text.txt`` (shipped in the repo), tokenized with
the model's tokenizer, teacher-forced through two shards [0, 15) + [15, 30) as a
route computes it (``core.runtime.quality.perplexity``). Prints both perplexities, the
top-1 agreement on the same positions, and last ``ratio: X`` with X = recipe / fp32.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.models.default_model import ensure_default_model
from core.models.tokenizer import ChatTokenizer
from core.runtime import Shard
from core.runtime.quality import perplexity, top1_agreement
from core.runtime.quant import INT4_G32_INT8_HEAD, INT8_PER_CHANNEL, NO_QUANTIZATION

SCHEMES = {"fp32": NO_QUANTIZATION, "int8": INT8_PER_CHANNEL, "q4": INT4_G32_INT8_HEAD}
TEXT = Path(__file__).resolve().parent.parent / "tests" / "data" / "perplexity_text.txt"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--recipe", choices=sorted(SCHEMES), default="q4")
    args = parser.parse_args()
    folder = ensure_default_model()
    ids = ChatTokenizer.from_folder(folder).encode(TEXT.read_text(encoding="utf-8"))

    def chain(quant: str) -> list[Shard]:
        return [Shard.load(folder, a, b, weight_quantization=quant) for a, b in ((0, 15), (15, 30))]

    fp32, candidate = chain(NO_QUANTIZATION), chain(SCHEMES[args.recipe])
    with torch.inference_mode():
        ppl32, ppl = perplexity(fp32, ids), perplexity(candidate, ids)
        agreement = top1_agreement(fp32, candidate, [ids])
    print(f"model {folder.name}, text {TEXT.name}: {len(ids)} tokens, torch {torch.__version__}")
    print(f"perplexity fp32 {ppl32:.3f}, {args.recipe} {ppl:.3f}; top-1 agreement {agreement:.3f}")
    print(f"ratio: {ppl / ppl32:.4f}")


if __name__ == "__main__":
    main()
