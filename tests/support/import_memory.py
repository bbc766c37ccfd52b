"""Peak heap growth of one GGUF import, measured in a fresh interpreter.

Used by tests/core/models/test_gguf_stream_import.py and benchmarks/gguf_import_memory.py.
The import runs in its own process so its memory is its own. A warm-up import first
loads every library and allocator pool the import touches. A thread then samples
RssAnon (anonymous resident memory: torch's and Python's heap, not the memory-mapped
GGUF or shared libraries, whose pages the kernel may drop and refault at will under
load) every 2 ms; the growth is the peak sample minus the value before. tracemalloc
does not see torch's CPU allocations, and ru_maxrss counts file-backed pages too.

    python -m tests.support.import_memory stream|whole WARM.gguf SOURCE.gguf OUT_DIR

``whole`` is what the import did before it streamed: every tensor decoded into one
dict, then ``save_file``. Prints ``{"growth": bytes}``.

``AnonPeak`` (the sampler) and ``run_measured`` (a measuring module in a fresh
interpreter) serve any such measurement: tests/support/load_memory.py measures a
shard's load with them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_measured(module: str, *args: str, home: Path) -> dict[str, int]:
    """Run ``python -m module *args`` in a fresh interpreter from the repository root; the
    JSON object of numbers it prints last (``{"growth": bytes, ...}``)."""
    result = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(home)},
        capture_output=True,
        text=True,
        check=True,
    )
    return {k: int(v) for k, v in json.loads(result.stdout.strip().splitlines()[-1]).items()}


def peak_growth(mode: str, warm: Path, source: Path, out: Path) -> int:
    """Run one import in a fresh interpreter; its peak anonymous-memory growth in bytes."""
    out.mkdir(parents=True, exist_ok=True)
    args = (mode, str(warm), str(source), str(out))
    return run_measured("tests.support.import_memory", *args, home=out)["growth"]


def _anon_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("/proc/self/status has no RssAnon line")


class AnonPeak:
    """While the ``with`` block runs, a thread samples this process's RssAnon every 2 ms;
    ``growth`` is the peak sample (``sample()`` adds one at a chosen moment) minus the
    value on entry."""

    def __init__(self) -> None:
        self.before = self.peak = 0
        self._running = False
        self._thread = threading.Thread(target=self._sample_until_stopped, daemon=True)

    def __enter__(self) -> AnonPeak:
        self.before = self.peak = _anon_bytes()
        self._running = True
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._running = False
        self._thread.join()
        self.sample()

    def sample(self) -> None:
        self.peak = max(self.peak, _anon_bytes())

    def _sample_until_stopped(self) -> None:
        while self._running:
            self.sample()
            time.sleep(0.002)

    @property
    def growth(self) -> int:
        return self.peak - self.before


def _measure(mode: str, warm: Path, source: Path, out: Path) -> int:
    import gguf
    from safetensors.torch import save_file

    from core.models.gguf_import import dequantized_tensors, import_gguf
    from core.runtime.gguf_arch import hf_config_from_gguf

    import_gguf(warm, out / "warm", model_id="warm", unpack=True)
    with AnonPeak() as peak:
        if mode == "stream":
            import_gguf(source, out / "model", model_id="model", unpack=True)
        else:
            reader = gguf.GGUFReader(str(source))
            tensors = dequantized_tensors(reader, hf_config_from_gguf(reader))
            peak.sample()  # every tensor is alive here
            save_file(tensors, str(out / "whole.safetensors"), metadata={"format": "pt"})
    return peak.growth


if __name__ == "__main__":
    mode, warm, source, out = sys.argv[1], *(Path(a) for a in sys.argv[2:5])
    if mode not in ("stream", "whole"):
        raise SystemExit(f"mode must be stream or whole, not {mode!r}")
    print(json.dumps({"growth": _measure(mode, warm, source, out)}))
