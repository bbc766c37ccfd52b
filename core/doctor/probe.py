"""The bounded real forward the doctor runs through a loaded shard.

Inputs are seeded: token ids for a first shard, random hidden states of the
model's width for any other (the probe cannot ask the previous hop for real
ones). The same inputs go through the shard three times — twice as one full
forward, once as a prefill plus single-position decode steps through the KV
cache — and the probe checks what a route depends on:

- finite: no NaN/inf in hidden states or logits;
- deterministic: the two full forwards agree exactly;
- incremental: decode through the cache equals the full forward within the
  recipe dtype's tolerance (this is what a multi-hop session does every step);
- tokens (last shard): greedy tokens from the cached steps equal the full
  forward's argmax, except where the top two logits are closer than the tolerance.

The decode steps are timed: one position per step through this shard is what
each hop of a route does per generated token, so steps/s is this shard's tokens/s.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from core.doctor.capability import CheckResult
from core.errors import Cancelled, DoctorError, MeshnetError, ProbeTimeout
from core.progress import STAGE_PROBE, Progress, ProgressCallback
from core.runtime.sessions import SamplingParams, SessionManager
from core.runtime.shard import Shard

log = logging.getLogger(__name__)

# Largest |incremental - full| allowed, relative to max(1, max|full|), by compute dtype,
# or by the dtype the weight products round activations to where that is coarser
# (llama-q4: float32 everywhere but bfloat16 into its int4 kernels, so a last-bit
# difference in attention becomes a bfloat16 rounding difference; measured 1.6e-2 on
# the default model's layers 15-30, greedy tokens all equal).
TOLERANCE = {torch.float32: 1e-3, torch.bfloat16: 8e-2, torch.float16: 2e-2}


_NAN_SENTENCE = (
    "The test forward produced invalid numbers (NaN or infinity). The model files may be "
    "damaged: delete and re-download the model, or try the float32 recipe."
)


@dataclass(frozen=True)
class ProbePlan:
    prompt_tokens: int = 8
    decode_tokens: int = 16
    seed: int = 20240611


@dataclass
class ProbeOutcome:
    checks: list[CheckResult] = field(default_factory=list)
    diagnostics: list[str] = field(default_factory=list)
    tokens_per_second: float | None = None
    completed: bool = False  # False: stopped early (deadline or an error), not a verdict

    @property
    def passed(self) -> bool:
        return self.completed and all(check.passed for check in self.checks)

    def add(self, name: str, passed: bool, detail: str, diagnostic: str | None = None) -> None:
        self.checks.append(CheckResult(name, passed, detail))
        if not passed and diagnostic:
            self.diagnostics.append(diagnostic)


class Deadline:
    """Checked between forward steps, so a slow machine stops instead of hanging."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._ends = clock() + seconds

    def check(self, stage: str) -> None:
        if self._clock() > self._ends:
            raise ProbeTimeout(
                f"The test forward did not finish within {self.seconds:.0f} s (it was at: "
                f"{stage}). This computer is too slow for this many layers; choose fewer layers."
            )


def probe_inputs(shard: Shard, length: int, seed: int) -> torch.Tensor:
    """Seeded inputs of the right kind and size for this shard's first layer."""
    generator = torch.Generator().manual_seed(seed)
    cfg = shard.config
    if shard.is_first:
        return torch.randint(0, cfg.vocab_size, (1, length), generator=generator)  # (1, T)
    hidden = torch.randn((1, length, cfg.hidden_size), generator=generator)  # (1, T, H)
    return hidden.to(shard.compute_dtype)


def _outputs(
    result_hidden: torch.Tensor | None, result_logits: torch.Tensor | None
) -> torch.Tensor:
    out = result_logits if result_logits is not None else result_hidden
    if out is None:
        raise DoctorError("the shard returned neither hidden states nor logits", reason="probe-bad")
    return out.detach().float().cpu()  # (1, T, H) or (1, T, V)


def _full_forward(manager: SessionManager, shard: Shard, inputs: torch.Tensor) -> torch.Tensor:
    session = manager.open(inputs.shape[1])
    try:
        result = session.step(inputs, return_logits=shard.is_last)
        return _outputs(result.hidden, result.logits)
    finally:
        session.close()


def probe_steps(plan: ProbePlan) -> int:
    """Progress units of one probe: two full forwards, the prefill, each decode step."""
    return 3 + plan.decode_tokens


def _step_reporter(progress: ProgressCallback | None, plan: ProbePlan) -> Callable[[int], None]:
    total = probe_steps(plan)

    def step(done: int) -> None:
        if progress is not None:
            progress(
                Progress(
                    STAGE_PROBE,
                    done,
                    total,
                    "Checking this computer computes its layers correctly…",
                )
            )

    return step


def _incremental(
    manager: SessionManager,
    shard: Shard,
    inputs: torch.Tensor,
    plan: ProbePlan,
    deadline: Deadline,
    step: Callable[[int], None] = lambda _done: None,
) -> tuple[torch.Tensor, list[int], float]:
    """Prefill, then one position per step; returns (outputs, greedy tokens, decode seconds)."""
    session = manager.open(inputs.shape[1], sampling=SamplingParams(temperature=0.0))
    try:
        prefill = session.step(inputs[:, : plan.prompt_tokens], return_logits=shard.is_last)
        step(3)
        pieces = [_outputs(prefill.hidden, prefill.logits)]
        tokens: list[int] = []
        started = time.perf_counter()
        for position in range(plan.prompt_tokens, plan.prompt_tokens + plan.decode_tokens):
            deadline.check(f"decode step {position - plan.prompt_tokens + 1}")
            decoded = session.step(inputs[:, position : position + 1], return_logits=shard.is_last)
            pieces.append(_outputs(decoded.hidden, decoded.logits))
            if decoded.token_ids is not None:
                tokens.append(int(decoded.token_ids[0]))
            step(4 + position - plan.prompt_tokens)
        elapsed = time.perf_counter() - started
        return torch.cat(pieces, dim=1), tokens, elapsed
    finally:
        session.close()


def _relative_error(a: torch.Tensor, b: torch.Tensor) -> float:
    scale = max(1.0, float(b.abs().max()))
    return float((a - b).abs().max()) / scale


def _check_tokens(
    outcome: ProbeOutcome, full: torch.Tensor, tokens: list[int], plan: ProbePlan, tol: float
) -> None:
    logits = full[0, plan.prompt_tokens :]  # (D, V): positions the decode steps produced
    top2 = logits.topk(2, dim=-1)
    scale = max(1.0, float(full.abs().max()))
    disagreements = [
        i
        for i, token in enumerate(tokens)
        if token != int(top2.indices[i, 0])
        and float(top2.values[i, 0] - top2.values[i, 1]) > tol * scale
    ]
    vocab = full.shape[-1]
    in_range = all(0 <= t < vocab for t in tokens)
    outcome.add(
        "tokens",
        in_range and not disagreements and len(tokens) == plan.decode_tokens,
        f"{len(tokens)} greedy tokens, {len(disagreements)} differ from the full forward",
        "The tokens this computer picks differ from its own full computation; the model "
        "cannot be served reliably here. Try the float32 recipe or update your drivers.",
    )


def run_probe(
    shard: Shard,
    plan: ProbePlan,
    deadline: Deadline,
    progress: ProgressCallback | None = None,
) -> ProbeOutcome:
    """All checks on one loaded shard; raises ProbeTimeout past the deadline.

    ``progress`` hears each forward step (stage "probe"); a :class:`Cancelled`
    it raises stops the probe and passes through (a stop is not a verdict).
    """
    step = _step_reporter(progress, plan)
    step(0)
    outcome = ProbeOutcome()
    manager = SessionManager(shard)
    length = plan.prompt_tokens + plan.decode_tokens
    inputs = probe_inputs(shard, length, plan.seed)
    tol = max(TOLERANCE.get(d, 2e-2) for d in (shard.compute_dtype, shard.product_dtype))
    try:
        full = _full_forward(manager, shard, inputs)
        deadline.check("first full forward")
        step(1)
        finite = bool(torch.isfinite(full).all())
        outcome.add(
            "finite",
            finite,
            "all outputs finite" if finite else "outputs contain NaN or infinity",
            _NAN_SENTENCE,
        )
        expected_width = shard.config.vocab_size if shard.is_last else shard.config.hidden_size
        shape_ok = tuple(full.shape) == (1, length, expected_width)
        outcome.add(
            "shape",
            shape_ok,
            f"output {tuple(full.shape)}, expected {(1, length, expected_width)}",
            "The shard's output has the wrong size for this model; re-download the model.",
        )
        again = _full_forward(manager, shard, inputs)
        deadline.check("second full forward")
        step(2)
        same = torch.equal(full, again)
        outcome.add(
            "deterministic",
            same,
            "two runs agree exactly"
            if same
            else f"two runs differ by {_relative_error(again, full):.2e}",
            "Two identical runs gave different results on this device; update the GPU driver "
            "or run on the CPU.",
        )
        incremental, tokens, decode_s = _incremental(manager, shard, inputs, plan, deadline, step)
        error = _relative_error(incremental, full) if finite else float("inf")
        outcome.add(
            "incremental",
            error <= tol,
            f"cached decode vs full forward: relative error {error:.2e} (limit {tol:.0e})",
            "Step-by-step generation disagrees with the full computation on this device; "
            "try the float32 recipe or update the GPU driver.",
        )
        if shard.is_last:
            _check_tokens(outcome, full, tokens, plan, tol)
        outcome.tokens_per_second = plan.decode_tokens / decode_s if decode_s > 0 else None
        outcome.completed = True
    except (ProbeTimeout, Cancelled):
        raise
    except MeshnetError as exc:
        # The runtime refuses non-finite logits itself; that is a failed check, not a crash.
        if exc.reason.startswith("non-finite"):
            outcome.add("finite", False, f"{exc.reason}: {exc}", _NAN_SENTENCE)
        else:
            outcome.add(
                "forward", False, f"{exc.reason}: {exc}", f"The test forward could not run: {exc}"
            )
        outcome.completed = True
    except torch.OutOfMemoryError as exc:  # e.g. allocating a KV cache on a full GPU
        outcome.add(
            "forward",
            False,
            f"out of memory: {exc}",
            "Not enough memory to run the test forward with these layers. Close other "
            "programs (games, browsers) or choose fewer layers.",
        )
        outcome.completed = True
    except RuntimeError as exc:  # any other torch failure is a verdict on this device
        outcome.add(
            "forward",
            False,
            f"torch error: {exc}",
            f"The test forward failed on this device ({exc}); update the GPU driver or run "
            "on the CPU.",
        )
        outcome.completed = True
    return outcome
