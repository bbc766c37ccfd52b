"""Run one task's workload: an allowlisted module in a fresh subprocess.

Fail closed: a payload naming a workload that is not on the allowlist, or
carrying an ``argv`` (a command line would run unsandboxed on the host), is
refused before anything executes. The workload runs with its task folder as
cwd, a wall-clock timeout (its whole process group is killed), and an
environment reduced to a whitelist, so no token, key or ``MESHNET_*`` secret of
the node reaches workload code. This tier is isolation from mistakes, not from
malice; a container tier can implement the same ``run`` later.

Contract with a workload module::

    spec.json  <- {task_id, params, inputs: {name: local path}, out}
    argv       <- python -m <module> --spec spec.json --out out/
    outputs    -> files under out/ (metrics.json required; out/ckpt/step-N.json optional)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.errors import Cancelled, TaskExecutionError

WORKLOADS: Mapping[str, str] = {
    "selftest": "core.jobs.workloads.selftest",
    "perplexity": "core.jobs.workloads.perplexity",
    "batch_generate": "core.jobs.workloads.batch_generate",
}

# The only environment a workload inherits.
TASK_ENV_WHITELIST = ("PATH", "HOME", "PYTHONPATH", "LANG", "LC_ALL", "TMPDIR")
# A failed workload reports the last this many characters of its output (the seed's 800).
STDERR_TAIL_CHARS = 800
DEFAULT_TIMEOUT_S = 600.0


def task_env(source: Mapping[str, str] | None = None) -> dict[str, str]:
    env = os.environ if source is None else source
    return {k: env[k] for k in TASK_ENV_WHITELIST if k in env}


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Linux: the workload gets SIGKILL when the executor dies (kill -9 included)."""
    os.setsid()
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def stderr_tail(raw: bytes) -> str:
    return raw.decode(errors="replace")[-STDERR_TAIL_CHARS:]


class SubprocessRunner:
    def __init__(
        self,
        workloads: Mapping[str, str] = WORKLOADS,
        timeout_seconds: float = DEFAULT_TIMEOUT_S,
        python: str = sys.executable,
    ) -> None:
        self.workloads = dict(workloads)
        self.timeout_seconds = timeout_seconds
        self.python = python

    def module_for(self, payload: Mapping[str, Any]) -> str:
        if "argv" in payload or "command" in payload:
            raise TaskExecutionError(
                "argv payloads are refused: this executor runs only allowlisted workloads "
                f"({', '.join(sorted(self.workloads))})"
            )
        workload = payload.get("workload")
        if not isinstance(workload, str) or workload not in self.workloads:
            raise TaskExecutionError(
                f"workload {workload!r} is not on this executor's allowlist "
                f"({', '.join(sorted(self.workloads))}); refusing to run it"
            )
        return self.workloads[workload]

    def run(
        self,
        payload: Mapping[str, Any],
        workdir: Path,
        inputs: Mapping[str, Path],
        cancel: threading.Event | None = None,
    ) -> Path:
        """Execute one task payload in `workdir`; return its output folder. Setting
        `cancel` (the lease was lost) kills the workload: its result would be thrown away."""
        module = self.module_for(payload)
        outdir = workdir / "out"
        outdir.mkdir(parents=True, exist_ok=True)
        spec_path = workdir / "spec.json"
        spec_path.write_text(
            json.dumps(
                {
                    "task_id": payload.get("task_id", ""),
                    "task_index": payload.get("task_index", 0),
                    "params": payload.get("params") or {},
                    "inputs": {name: str(path) for name, path in inputs.items()},
                }
            )
        )
        timeout = self.timeout_seconds
        requested = payload.get("timeout_seconds")
        if isinstance(requested, int | float) and requested > 0:
            timeout = min(timeout, float(requested))
        stderr_path = workdir / "stderr.log"
        with stderr_path.open("wb") as stderr:
            proc = subprocess.Popen(
                [self.python, "-m", module, "--spec", str(spec_path), "--out", str(outdir)],
                cwd=workdir,
                stdin=subprocess.DEVNULL,
                stdout=stderr,
                stderr=stderr,
                env=task_env(),
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
                start_new_session=sys.platform != "linux",
            )
            try:
                code = _wait(proc, timeout, cancel)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                raise TaskExecutionError(
                    f"task exceeded its {timeout:g}s wall clock and was killed; "
                    f"last output:\n{stderr_tail(stderr_path.read_bytes())}"
                ) from None
            except BaseException:
                _kill_group(proc)
                raise
        if code != 0:
            raise TaskExecutionError(
                f"workload {payload.get('workload')} exited {code}:\n"
                f"{stderr_tail(stderr_path.read_bytes())}"
            )
        if not (outdir / "metrics.json").is_file():
            raise TaskExecutionError("the workload wrote no out/metrics.json: nothing to commit")
        return outdir


def _wait(proc: subprocess.Popen[bytes], timeout: float, cancel: threading.Event | None) -> int:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return proc.wait(timeout=min(0.2, max(0.0, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                raise
        if cancel is not None and cancel.is_set():
            _kill_group(proc)
            raise Cancelled("the workload was stopped: its lease was lost")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        proc.kill()
    proc.wait()
