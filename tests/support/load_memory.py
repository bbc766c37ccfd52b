"""Peak heap growth of one ``Shard.load``, measured in a fresh interpreter.

Used by tests/core/runtime/test_quantized_load.py and benchmarks/q4_load_memory.py;
the sampling is tests/support/import_memory.py's (RssAnon every 2 ms: torch's and
Python's heap, not the memory-mapped safetensors files). A warm-up load of the
small model WARM (all of it) under the same scheme first loads every library and kernel probe.

    python -m tests.support.load_memory SCHEME WARM MODEL START END

Prints ``{"growth": bytes, "weight_bytes": bytes}`` (the loaded shard's own bytes).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.support.import_memory import run_measured


def load_growth(scheme: str, warm: Path, model: Path, start: int, end: int) -> dict[str, int]:
    """Load layers [start, end) of ``model`` under ``scheme`` in a fresh interpreter."""
    args = (scheme, str(warm), str(model), str(start), str(end))
    return run_measured("tests.support.load_memory", *args, home=model.parent)


def _measure(scheme: str, warm: Path, model: Path, start: int, end: int) -> dict[str, int]:
    from core.runtime import Shard
    from core.runtime.config import ModelConfig
    from tests.support.import_memory import AnonPeak

    layers = ModelConfig.from_folder(warm).num_layers
    Shard.load(warm, 0, layers, weight_quantization=scheme)  # embedding, layers and head
    with AnonPeak() as peak:
        shard = Shard.load(model, start, end, weight_quantization=scheme)
    return {"growth": peak.growth, "weight_bytes": shard.weight_bytes()}


if __name__ == "__main__":
    scheme, warm, model = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    print(json.dumps(_measure(scheme, warm, model, int(sys.argv[4]), int(sys.argv[5]))))
