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
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def peak_growth(mode: str, warm: Path, source: Path, out: Path) -> int:
    """Run one import in a fresh interpreter; its peak anonymous-memory growth in bytes."""
    out.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "tests.support.import_memory", mode]
    result = subprocess.run(
        [*argv, str(warm), str(source), str(out)],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(out)},
        capture_output=True,
        text=True,
        check=True,
    )
    return int(json.loads(result.stdout.strip().splitlines()[-1])["growth"])


def _anon_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("/proc/self/status has no RssAnon line")


def _measure(mode: str, warm: Path, source: Path, out: Path) -> int:
    import gguf
    from safetensors.torch import save_file

    from core.models.gguf_arch import hf_config_from_gguf
    from core.models.gguf_import import dequantized_tensors, import_gguf

    import_gguf(warm, out / "warm", model_id="warm")
    before = _anon_bytes()
    peak = [before]
    running = True

    def sample() -> None:
        while running:
            peak[0] = max(peak[0], _anon_bytes())
            time.sleep(0.002)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    if mode == "stream":
        import_gguf(source, out / "model", model_id="model")
    else:
        reader = gguf.GGUFReader(str(source))
        tensors = dequantized_tensors(reader, hf_config_from_gguf(reader))
        peak[0] = max(peak[0], _anon_bytes())  # every tensor is alive here
        save_file(tensors, str(out / "whole.safetensors"), metadata={"format": "pt"})
    running = False
    sampler.join()
    return max(peak[0], _anon_bytes()) - before


if __name__ == "__main__":
    mode, warm, source, out = sys.argv[1], *(Path(a) for a in sys.argv[2:5])
    if mode not in ("stream", "whole"):
        raise SystemExit(f"mode must be stream or whole, not {mode!r}")
    print(json.dumps({"growth": _measure(mode, warm, source, out)}))
