"""Greedy decode speed of the runtime against transformers, on the default model.

    python benchmarks/runtime_vs_transformers.py [--new-tokens 48] [--repeats 3] [--recipe int8]

Measured side by side in one process, same prompt, same number of new tokens,
same torch thread count, torch.inference_mode, float32 everywhere, one warm-up
run each. Runs are interleaved (a, b, c, a, b, c, ...) and each configuration
reports its best run, so load from other processes on the machine penalises
all three alike instead of whichever happened to run during it.

  (a) transformers ``generate`` (do_sample=False, min_new_tokens so it never stops early)
  (b) the runtime as one shard [0, 30)
  (c) the runtime as two shards in one process [0, 15) + [15, 30)

Then the runtime's decode ms/token at context 16 and at context 1,024, and last
``ratio: X`` with X = (c) / (a) in tokens/s.

``--recipe int8`` loads (b) and (c) as the llama-int8 recipe (weight-only int8,
core/runtime/quant.py); transformers stays float32, the reference. Then the
"same greedy tokens" line compares int8 against float32 and may say False.
``--recipe q4`` likewise loads llama-q4 (4-bit groups, int8 head; quant4.py). Every
run also prints the runtime's resident weight bytes (packed weights, scales and zeros
included) against transformers' float32 parameters.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.models.default_model import ensure_default_model
from core.runtime import SessionManager, Shard, generate_local
from core.runtime.quant import INT4_G32_INT8_HEAD, INT8_PER_CHANNEL, NO_QUANTIZATION

# int8 is the catalogued llama-int8 recipe (weight-only int8)
SCHEMES = {"fp32": NO_QUANTIZATION, "int8": INT8_PER_CHANNEL, "q4": INT4_G32_INT8_HEAD}
PROMPT = "Write a short story about a lighthouse keeper who finds a message in a bottle."


def prompt_ids(folder: Path) -> list[int]:
    from core.models.tokenizer import ChatTokenizer

    tok = ChatTokenizer.from_folder(folder)
    return tok.encode(tok.apply_chat_template([{"role": "user", "content": PROMPT}]))


HF_BYTES: list[int] = []  # transformers' float32 parameter bytes, once loaded


def hf_runner(folder: Path, ids: list[int], new_tokens: int) -> Callable[[], list[int]]:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    HF_BYTES.append(sum(p.numel() * p.element_size() for p in model.parameters()))
    inputs = torch.tensor([ids])

    def run() -> list[int]:
        out = model.generate(
            inputs,
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            do_sample=False,
            pad_token_id=model.config.eos_token_id,
        )
        return out[0, len(ids) :].tolist()

    return run


def runtime_runner(shards: list[Shard], ids: list[int], new_tokens: int) -> Callable[[], list[int]]:
    return lambda: list(generate_local(shards, ids, new_tokens))


def best_tokens_per_s(run: Callable[[], list[int]], new_tokens: int, times: list[float]) -> None:
    start = time.perf_counter()
    out = run()
    times.append(time.perf_counter() - start)
    assert len(out) == new_tokens, f"generated {len(out)} tokens, expected {new_tokens}"


def decode_ms_per_token(
    shard: Shard, contexts: list[int], steps: int, repeats: int
) -> dict[int, float]:
    """Prefill each context once, then time `steps` single-token steps after it, rewinding
    to the context between rounds; rounds alternate between contexts; best round wins."""
    g = torch.Generator().manual_seed(0)
    manager = SessionManager(shard)
    sessions, first_token = {}, {}
    for context in contexts:
        session = manager.open(context + steps + 1)
        prefix = torch.randint(100, 10_000, (1, context), generator=g)
        for chunk in prefix.split(256, dim=1):
            result = session.step(chunk)
        assert result.token_ids is not None
        sessions[context], first_token[context] = session, result.token_ids.view(1, 1)
    best = dict.fromkeys(contexts, float("inf"))
    for _ in range(repeats + 1):  # the first round is a warm-up like the others
        for context, session in sessions.items():
            session.rewind(context)
            x = first_token[context]
            start = time.perf_counter()
            for _ in range(steps):
                token_ids = session.step(x).token_ids
                assert token_ids is not None
                x = token_ids.view(1, 1)
            best[context] = min(best[context], (time.perf_counter() - start) / steps * 1000)
    manager.close_all()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--new-tokens", type=int, default=48)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--recipe", choices=sorted(SCHEMES), default="fp32")
    args = parser.parse_args()
    n, repeats = args.new_tokens, args.repeats
    quant = SCHEMES[args.recipe]

    folder = ensure_default_model()
    ids = prompt_ids(folder)
    whole = [Shard.load(folder, 0, 30, weight_quantization=quant)]
    halves = [
        Shard.load(folder, 0, 15, weight_quantization=quant),
        Shard.load(folder, 15, 30, weight_quantization=quant),
    ]
    runners = {
        "(a) transformers generate": hf_runner(folder, ids, n),
        "(b) runtime, one shard [0,30)": runtime_runner(whole, ids, n),
        "(c) runtime, two shards [0,15)+[15,30)": runtime_runner(halves, ids, n),
    }
    print(
        f"model {folder.name}, prompt {len(ids)} tokens, {n} new tokens, "
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, float32 activations, "
        f"runtime weights {quant} ({whole[0].weight_bytes() / 1e6:.0f} MB), best of {repeats}"
    )
    times: dict[str, list[float]] = {name: [] for name in runners}
    with torch.inference_mode():
        outputs = {name: run() for name, run in runners.items()}  # warm-up
        same = len({tuple(o) for o in outputs.values()}) == 1
        for _ in range(repeats):
            for name, run in runners.items():
                best_tokens_per_s(run, n, times[name])
        rate = {name: n / min(t) for name, t in times.items()}
        for name, t in times.items():
            print(
                f"{name}: {rate[name]:.2f} tokens/s "
                f"(runs {', '.join(f'{x:.2f}' for x in t)} s; median "
                f"{n / statistics.median(t):.2f} tokens/s)"
            )
        print(f"same greedy tokens from all three: {same}")
        ms = decode_ms_per_token(whole[0], [16, 1024], 32, repeats)
        ms16, ms1k = ms[16], ms[1024]
    print(f"runtime decode at context 16: {ms16:.1f} ms/token")
    print(f"runtime decode at context 1024: {ms1k:.1f} ms/token ({ms1k / ms16:.2f}x of context 16)")
    resident = whole[0].weight_bytes()
    print(
        f"resident weight bytes: runtime {resident / 1e6:.1f} MB, transformers float32 "
        f"{HF_BYTES[0] / 1e6:.1f} MB, ratio {resident / HF_BYTES[0]:.3f}"
    )
    a, c = rate["(a) transformers generate"], rate["(c) runtime, two shards [0,15)+[15,30)"]
    print(f"ratio: {c / a:.2f}")


if __name__ == "__main__":
    main()
