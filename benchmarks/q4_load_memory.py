"""Peak memory of loading a llama-q4 shard, against loading the same shard in float32.

    python benchmarks/q4_load_memory.py [--layers N]

A random Llama (hidden 1024, MLP 2816, 8 heads over 4 KV heads, vocabulary 8192,
its own LM head; 12 layers by default, 626 MiB in float32) is written once into a
temporary folder, and the whole of it is loaded as one shard in a fresh
interpreter per load (tests/support/load_memory.py: a warm-up load of a tiny model
first, then RssAnon sampled every 2 ms; a figure is the peak minus the value just
before the load). The reference is the load under weight_quantization "none": the
shard's float32 bytes, what a q4 load used to peak near, since it read the whole
shard in float32 before quantizing it (it freed each float32 weight as its module
was replaced, so it peaked somewhat below: 127 MiB against 172 on the 176 MiB model
of tests/core/runtime/test_quantized_load.py). Today's q4 load quantizes each layer
as it is read, so it peaks near its packed bytes plus about one layer in float32.
Last line: ``ratio`` = the float32 load's peak over the q4 load's.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from core.runtime.quant import INT4_G32_INT8_HEAD  # noqa: E402
from tests.core.runtime.conftest import build_tiny  # noqa: E402
from tests.support.load_memory import load_growth  # noqa: E402

SHAPE = dict(
    hidden_size=1024,
    intermediate_size=2816,
    num_attention_heads=8,
    num_key_value_heads=4,
    vocab_size=8192,
    tie_word_embeddings=False,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=12)
    layers = parser.parse_args().layers
    mib = 1024 * 1024
    with tempfile.TemporaryDirectory() as tmp:
        warm = build_tiny(Path(tmp) / "warm")
        model = build_tiny(Path(tmp) / "model", num_hidden_layers=layers, **SHAPE)
        fp32 = load_growth("none", warm, model, 0, layers)
        q4 = load_growth(INT4_G32_INT8_HEAD, warm, model, 0, layers)
    print(
        f"random Llama, {layers} layers, hidden {SHAPE['hidden_size']}, MLP "
        f"{SHAPE['intermediate_size']}, vocabulary {SHAPE['vocab_size']}: "
        f"{fp32['weight_bytes'] / mib:.0f} MiB in float32"
    )
    print(
        f"float32 load ('none'):         peak anon growth {fp32['growth'] / mib:7.0f} MiB, "
        f"shard {fp32['weight_bytes'] / mib:.0f} MiB"
    )
    print(
        f"q4 load (quantized as read):    peak anon growth {q4['growth'] / mib:7.0f} MiB, "
        f"shard {q4['weight_bytes'] / mib:.0f} MiB"
    )
    print(f"ratio: {fp32['growth'] / q4['growth']:.2f}")


if __name__ == "__main__":
    main()
