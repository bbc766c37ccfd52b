"""One prepared check for a machine with a CUDA GPU: does MeshNet really work on it?

    python benchmarks/gpu_check.py [--skip-nodes] [--new-tokens 32]    # or: make gpu-check

MeshNet claims no GPU support until this script has run on a real card and its
lines are in the README. Each part prints one line with its ratio against the
CPU on the same machine (GPU figure / CPU figure, higher is better):

1. **doctor**: the real doctor (load, test forward, admission) of the default
   model on ``cuda:0`` with each catalogued recipe the GPU would use
   (``llama-bf16``, ``llama-fp32``, ``llama-q4``) against the CPU's default,
   tokens/s. fp16: the catalogue has no fp16 recipe, so none is certified; the
   line says so rather than measuring something no node can serve.
2. **int4 kernel**: ``llama-q4``'s ``Int4Linear`` with the CUDA tensor-core
   kernel (sm_80 and newer) against its plain fallback on the same GPU and the
   CPU kernel, ms per decode step over one layer's projections; outputs agree.
3. **two nodes on one GPU**: a tracker on loopback and two node processes on
   ``cuda:0`` (layers 0–15 and 15–30, ``llama-bf16``) until the recipe is
   certified and a greedy chat answers; decode tokens/s against the same
   two nodes on the CPU (``llama-fp32``).
4. **pause releases memory**: GPU memory allocated before loading a shard,
   with it, and after :meth:`DoctorOutcome.release` (what pause and stop call):
   what was loaded must come back.

Without a CUDA GPU it prints why and exits with status 2, having measured nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

NO_GPU = (
    "gpu_check: no CUDA GPU is visible to this torch ({why}); this script needs a machine "
    "with an NVIDIA GPU, its driver and the CUDA build of torch. Nothing was measured."
)
GPU_RECIPES = ("llama-bf16", "llama-fp32", "llama-q4")
PROMPT = "Explain in three sentences why the sky is blue."
MIB = 2**20


def cuda_problem() -> str | None:
    if torch.version.cuda is None:
        return f"torch {torch.__version__} is a CPU build"
    if not torch.cuda.is_available():
        return "torch.cuda.is_available() is False"
    return None


def ratio(gpu: float | None, cpu: float | None) -> str:
    return f"{gpu / cpu:.2f}" if gpu and cpu else "n/a"


def doctor(device: str, recipe_id: str | None) -> tuple[bool, float | None, str]:
    from core.doctor.checkup import DoctorRequest, run_doctor

    outcome = run_doctor(DoctorRequest(device=device, recipe_id=recipe_id, save=False))
    try:
        report = outcome.report
        return report.passed, report.tokens_per_second, report.recipe.recipe_id
    finally:
        outcome.release()


def check_doctor() -> None:
    cpu_ok, cpu_rate, cpu_recipe = doctor("cpu", None)
    print(f"doctor cpu {cpu_recipe}: passed={cpu_ok} {cpu_rate or 0:.1f} tokens/s")
    for recipe_id in GPU_RECIPES:
        ok, rate, _ = doctor("cuda:0", recipe_id)
        print(
            f"doctor cuda:0 {recipe_id}: passed={ok} {rate or 0:.1f} tokens/s "
            f"ratio vs cpu {ratio(rate, cpu_rate)}"
        )
    print("doctor cuda:0 fp16: not run: no fp16 recipe in core/recipes/catalogue.json")


def time_ms(step: Any, repeats: int = 50) -> float:
    for _ in range(5):
        step()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    began = time.perf_counter()
    for _ in range(repeats):
        step()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return (time.perf_counter() - began) / repeats * 1000


def check_int4() -> None:
    from core.runtime.quant4 import Int4Linear

    torch.manual_seed(0)
    shapes = [(960, 576), (576, 576), (3072, 576), (576, 1536)]  # SmolLM2's projections
    weights = [torch.randn(o, i) * 0.05 for o, i in shapes]

    def layer(device: str, pack: bool) -> tuple[list[Int4Linear], list[torch.Tensor]]:
        mods = []
        for w in weights:
            mod = Int4Linear.from_linear(w, None).to(device)
            if pack:
                mod.pack_for(torch.device(device))
            mods.append(mod)
        xs = [torch.randn(1, i, device=device) for _, i in shapes]
        return mods, xs

    results: dict[str, float] = {}
    outputs: dict[str, list[torch.Tensor]] = {}
    for name, device, pack in (("cuda-kernel", "cuda", True), ("cuda-plain", "cuda", False),
                               ("cpu", "cpu", True)):  # fmt: skip
        torch.manual_seed(1)
        mods, xs = layer(device, pack)
        kernels = {m.kernel for m in mods}
        results[name] = time_ms(
            lambda mods=mods, xs=xs: [m(x) for m, x in zip(mods, xs, strict=True)]
        )
        outputs[name] = [m(x.to(device)).float().cpu() for m, x in zip(mods, xs, strict=True)]
        print(f"int4 {name}: {results[name]:.3f} ms per layer step (kernels: {sorted(kernels)})")
    worst = max(
        (a - b).abs().max().item() / max(b.abs().max().item(), 1e-6)
        for a, b in zip(outputs["cuda-kernel"], outputs["cuda-plain"], strict=True)
    )
    print(
        f"int4 cuda kernel vs fallback: {results['cuda-plain'] / results['cuda-kernel']:.2f}x "
        f"faster, worst relative difference {worst:.2e}; "
        f"ratio vs cpu {results['cpu'] / results['cuda-kernel']:.2f}"
    )


def two_nodes(device: str, recipe_id: str, new_tokens: int) -> tuple[str, float]:
    from app.demo.processes import start_node, start_tracker
    from benchmarks.concurrent_sessions import one_session, wait_for_certified
    from core.models.default_model import ensure_default_model
    from core.models.tokenizer import ChatTokenizer

    model_dir = ensure_default_model()
    tokenizer = ChatTokenizer.from_folder(model_dir)
    ids = tokenizer.encode_chat([{"role": "user", "content": PROMPT}])
    workdir = Path(tempfile.mkdtemp(prefix="meshnet-gpu-check-"))
    tracker, url = start_tracker(workdir, lambda _n, _l: None, heartbeat_s=1.0)
    children = [tracker]
    try:
        for index, layers in enumerate([(0, 15), (15, 30)], start=1):
            children.append(
                start_node(
                    index,
                    workdir,
                    url,
                    model_dir,
                    layers,
                    lambda _n, _l: None,
                    ["--device", device],
                    recipe_id=recipe_id,
                )
            )
        recipe = wait_for_certified(url, timeout_s=600)
        run = asyncio.run(one_session(url, recipe, ids, new_tokens))
    finally:
        for child in reversed(children):
            child.stop()
    rate = len(run.steps) / (run.steps[-1][1] - run.steps[0][0])
    return tokenizer.decode(run.tokens), rate


def check_nodes(new_tokens: int) -> None:
    _, cpu_rate = two_nodes("cpu", "llama-fp32", new_tokens)
    print(f"two nodes cpu llama-fp32: certified, {cpu_rate:.1f} tokens/s decode")
    text, rate = two_nodes("cuda:0", "llama-bf16", new_tokens)
    print(
        f"two nodes on cuda:0 llama-bf16: certified, {rate:.1f} tokens/s decode, "
        f"ratio vs cpu {ratio(rate, cpu_rate)}; answer: {text.strip()[:80]!r}"
    )


def check_pause_release() -> None:
    from core.doctor.checkup import DoctorRequest, run_doctor

    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated(0)
    outcome = run_doctor(DoctorRequest(device="cuda:0", recipe_id="llama-bf16", save=False))
    loaded = torch.cuda.memory_allocated(0)
    outcome.release()
    torch.cuda.synchronize()
    after = torch.cuda.memory_allocated(0)
    reserved = torch.cuda.memory_reserved(0)
    kept = (after - before) / MIB
    print(
        f"pause releases memory: allocated {before / MIB:.0f} MiB before, "
        f"{loaded / MIB:.0f} MiB loaded, {after / MIB:.0f} MiB after release "
        f"({kept:.0f} MiB kept, {reserved / MIB:.0f} MiB still reserved by the allocator); "
        f"released: {kept < 16}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--skip-nodes", action="store_true", help="skip part 3 (minutes)")
    args = parser.parse_args()
    problem = cuda_problem()
    if problem is not None:
        print(NO_GPU.format(why=problem), file=sys.stderr)
        return 2
    props = torch.cuda.get_device_properties(0)
    print(
        f"gpu: {props.name}, {props.total_memory / 2**30:.0f} GiB, sm_{props.major}{props.minor}, "
        f"torch {torch.__version__} (CUDA {torch.version.cuda})"
    )
    check_doctor()
    check_int4()
    if not args.skip_nodes:
        check_nodes(args.new_tokens)
    check_pause_release()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
