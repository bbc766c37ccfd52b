"""Which CPU kernel computes the int8 weight-only matmul fastest, on the default model's shapes.

    python benchmarks/int8_kernels.py [--repeats 9]

For every projection shape of SmolLM2-135M (fused q|k|v, o, fused gate|up, down,
LM head) and batch 1 and 8 rows, each candidate in ``core.runtime.quant.KERNELS``
and the float32 ``mm`` it replaces run interleaved in rounds; a figure is the
lower quartile of the rounds (other processes on the machine only ever add
time). The figures decide ``quant.DEFAULT_KERNEL``. Last line: ``ratio`` = the
default kernel's summed time over float32's summed time at batch 1.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.runtime.quant import (
    DEFAULT_KERNEL,
    DEFAULT_ROWS_KERNEL,
    KERNELS,
    quantize_per_channel,
)

# (out, in) of SmolLM2-135M: qkv, o_proj, gate|up, down, lm_head
SHAPES = [(960, 576), (576, 576), (3072, 576), (576, 1536), (49152, 576)]


def quartile_us(fn: Callable[[], object], calls: int, rounds: list[float]) -> None:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    rounds.append((time.perf_counter() - start) / calls * 1e6)


def candidates(
    x: torch.Tensor, weight: torch.Tensor, q: torch.Tensor, scale: torch.Tensor
) -> dict[str, Callable[[], object]]:
    fns: dict[str, Callable[[], object]] = {"fp32 mm": lambda: torch.mm(x, weight.t())}
    for name, kernel in KERNELS.items():
        fns[name] = functools.partial(kernel, x, q, scale)
    return fns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; microseconds per call")
    totals: dict[int, dict[str, float]] = {1: {}, 8: {}}
    with torch.inference_mode():
        for out_f, in_f in SHAPES:
            weight = torch.randn(out_f, in_f) * 0.05
            q, scale = quantize_per_channel(weight)
            for rows in (1, 8):
                fns = candidates(torch.randn(rows, in_f), weight, q, scale)
                calls = 3 if out_f > 10_000 else 20
                times: dict[str, list[float]] = {name: [] for name in fns}
                for fn in fns.values():
                    fn()
                for _ in range(args.repeats):
                    for name, fn in fns.items():
                        quartile_us(fn, calls, times[name])
                line = []
                for name, t in times.items():
                    figure = sorted(t)[len(t) // 4]
                    totals[rows][name] = totals[rows].get(name, 0.0) + figure
                    line.append(f"{name} {figure:.0f}")
                print(f"({out_f}, {in_f}) x {rows} rows: " + ", ".join(line), flush=True)
    for rows, total in totals.items():
        ranked = sorted((v, k) for k, v in total.items() if k != "fp32 mm")
        print(
            f"sum over shapes, {rows} rows: fp32 mm {total['fp32 mm']:.0f}; "
            + ", ".join(f"{k} {v:.0f}" for v, k in ranked)
            + f"; fastest int8: {ranked[0][1]}"
        )
    print(f"default kernels: {DEFAULT_KERNEL} (one row), {DEFAULT_ROWS_KERNEL} (several rows)")
    print(f"ratio: {totals[1][DEFAULT_KERNEL] / totals[1]['fp32 mm']:.2f}")


if __name__ == "__main__":
    main()
