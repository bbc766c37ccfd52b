"""Which CPU kernel computes the int8 projections fastest, weights streamed as decode reads them.

    python benchmarks/int8_kernels.py [--layers 30] [--repeats 5]

A decode step reads every projection of every layer once, and a model's weights
do not stay in cache between steps; so each figure here runs the projections of
``--layers`` layers of SmolLM2-135M (fused q|k|v, o, fused gate|up, down), each
layer with its own weights, and the tied 49152-row LM head, once per round: the
weights a step reads, from memory, not one matrix kept in cache. Candidates:
float32 ``mm`` (the fp32 recipe, (in, out)-contiguous weights as the runtime
stores them), every weight-only kernel in ``core.runtime.quant.KERNELS``
(float32 activations), the catalogued ``llama-int8``'s layer (``quant_digits``:
float32 activations as three int8 digits through fbgemm's exact int8 product;
``DEFAULT_KERNEL`` where fbgemm is not exact). Rounds interleave the candidates;
a figure is the lower quartile of the rounds in ms per step, wall and CPU time
(other processes on the machine only ever add time). Last line: ``ratio`` = float32's
time over the catalogued recipe's default kernel, one row (how many times
faster it is; below 1 means slower).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.runtime.fbgemm_int8 import fbgemm_is_exact
from core.runtime.quant import DEFAULT_KERNEL, KERNELS, Int8Linear, quantize_per_channel
from core.runtime.quant_digits import Int8DigitsLinear

# (out, in) of SmolLM2-135M's projections per layer, and its LM head
LAYER_SHAPES = [(960, 576), (576, 576), (3072, 576), (576, 1536)]
HEAD_SHAPE = (49152, 576)
DIGITS = "weight-only int8, activations as three int8 digits on fbgemm (llama-int8)"


def build(
    layers: int,
) -> tuple[list[torch.Tensor], list[Int8Linear], list[Int8DigitsLinear]]:
    """Distinct weights for every projection: float32 (in, out)-contiguous, int8 (plain,
    digits)."""
    dense, int8, digits = [], [], []
    for out_f, in_f in [s for _ in range(layers) for s in LAYER_SHAPES] + [HEAD_SHAPE]:
        weight = torch.randn(out_f, in_f) * 0.05
        dense.append(weight.t().contiguous().t())
        q, scale = quantize_per_channel(weight)
        int8.append(Int8Linear(q, scale, None))
        digits.append(Int8DigitsLinear(q, scale, None))
    return dense, int8, digits


def candidates(
    rows: int,
    dense: list[torch.Tensor],
    int8: list[Int8Linear],
    digits: list[Int8DigitsLinear],
) -> dict[str, Callable[[], None]]:
    xs = {i: torch.randn(rows, i) for i in {s[1] for s in LAYER_SHAPES}}

    def fp32() -> None:
        for w in dense:
            torch.mm(xs[w.shape[1]], w.t())

    def weight_only(kernel: str) -> Callable[[], None]:
        fn = KERNELS[kernel]

        def run() -> None:
            for lin in int8:
                fn(xs[lin.in_features], lin.qweight, lin.scale)

        return run

    fns: dict[str, Callable[[], None]] = {"fp32 mm": fp32}
    fns.update({f"weight-only {k}": weight_only(k) for k in KERNELS})

    def catalogued() -> None:
        for lin in digits:
            lin.matmul(xs[lin.in_features])

    fns[DIGITS] = catalogued
    return fns


def quartile(values: list[float]) -> float:
    return sorted(values)[len(values) // 4]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layers", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.manual_seed(0)
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.layers} layers "
        f"with distinct weights + LM head, fbgemm exact here: {fbgemm_is_exact()}, "
        f"load average {os.getloadavg()[0]:.2f}; ms per step (lower quartile)"
    )
    dense, int8, digits = build(args.layers)
    one_row: dict[str, tuple[float, float]] = {}
    with torch.inference_mode():
        for rows in (1, 8):
            fns = candidates(rows, dense, int8, digits)
            wall: dict[str, list[float]] = {name: [] for name in fns}
            cpu: dict[str, list[float]] = {name: [] for name in fns}
            for fn in fns.values():
                fn()  # warm-up
            for _ in range(args.repeats):
                for name, fn in fns.items():
                    start, start_cpu = time.perf_counter(), time.process_time()
                    fn()
                    wall[name].append((time.perf_counter() - start) * 1e3)
                    cpu[name].append((time.process_time() - start_cpu) * 1e3)
            for name in fns:
                ms, cpu_ms = quartile(wall[name]), quartile(cpu[name])
                print(f"{rows} row(s): {name}: {ms:.1f} ms (CPU {cpu_ms:.1f} ms)", flush=True)
            if rows == 1:
                one_row = {name: (quartile(wall[name]), quartile(cpu[name])) for name in fns}
    (fp32, fp32_cpu) = one_row["fp32 mm"]
    (recipe, recipe_cpu) = one_row[DIGITS if fbgemm_is_exact() else f"weight-only {DEFAULT_KERNEL}"]
    print(f"load average {os.getloadavg()[0]:.2f}; CPU-time ratio {fp32_cpu / recipe_cpu:.2f}")
    print(f"ratio: {fp32 / recipe:.2f}")


if __name__ == "__main__":
    main()
