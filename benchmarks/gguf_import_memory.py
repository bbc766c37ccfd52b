"""Peak memory of importing the packaged GGUF: streamed (today's import) vs whole model.

    python benchmarks/gguf_import_memory.py

Each import runs in a fresh interpreter after a warm-up import of the same file
(so every library and allocator pool is already loaded). A thread samples
RssAnon, the process's anonymous resident memory (heap: torch's tensors and
Python's objects, not the memory-mapped GGUF or shared libraries), every 2 ms;
a figure is the peak sample minus the value just before the import. "whole"
decodes every tensor into one dict, then ``save_file``s it, as the import did
before it streamed. Both include what the ``gguf`` package's reader holds for
the file's metadata (SmolLM2's 49k-token vocabulary and merges, ~120 MiB) and
the streamed one its largest tensor (the 108 MiB embedding) as it is decoded.
Last line: ``ratio`` = whole's peak over the streamed one's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from core.models.default_model import find_default_gguf  # noqa: E402

_MEASURE = """
import json, sys, threading, time
from pathlib import Path
import gguf
from safetensors.torch import save_file
from core.models.gguf_import import import_gguf, dequantized_tensors
from core.models.gguf_arch import hf_config_from_gguf
mode, source, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])

def anon():
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) * 1024

import_gguf(source, out / "warm", model_id="warm")
before = anon()
peak = [before]
running = True
def sample():
    while running:
        peak[0] = max(peak[0], anon())
        time.sleep(0.002)
sampler = threading.Thread(target=sample, daemon=True)
sampler.start()
if mode == "stream":
    import_gguf(source, out / "model", model_id="model")
else:
    reader = gguf.GGUFReader(str(source))
    tensors = dequantized_tensors(reader, hf_config_from_gguf(reader))
    peak[0] = max(peak[0], anon())
    save_file(tensors, str(out / "whole.safetensors"), metadata={"format": "pt"})
running = False
sampler.join()
peak[0] = max(peak[0], anon())
print(json.dumps({"growth": peak[0] - before}))
"""


def peak_growth(mode: str, source: Path) -> int:
    with tempfile.TemporaryDirectory() as out:
        result = subprocess.run(
            [sys.executable, "-c", _MEASURE, mode, str(source), out],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        )
    return int(json.loads(result.stdout.strip().splitlines()[-1])["growth"])


def main() -> None:
    source = find_default_gguf()
    mib = 1024 * 1024
    print(f"{source.name}: {source.stat().st_size / mib:.0f} MiB")
    whole = peak_growth("whole", source)
    print(f"whole    peak anon growth {whole / mib:7.0f} MiB")
    streamed = peak_growth("stream", source)
    print(f"streamed peak anon growth {streamed / mib:7.0f} MiB")
    print(f"ratio: {whole / streamed:.2f}")


if __name__ == "__main__":
    main()
