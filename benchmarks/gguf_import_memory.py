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

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from core.models.default_model import find_default_gguf  # noqa: E402
from tests.support.import_memory import peak_growth  # noqa: E402


def main() -> None:
    source = find_default_gguf()
    mib = 1024 * 1024
    print(f"{source.name}: {source.stat().st_size / mib:.0f} MiB")
    with tempfile.TemporaryDirectory() as out:
        # the warm-up imports the same file: every library and pool is loaded before
        whole = peak_growth("whole", source, source, Path(out) / "whole")
        streamed = peak_growth("stream", source, source, Path(out) / "stream")
    print(f"whole    peak anon growth {whole / mib:7.0f} MiB")
    print(f"streamed peak anon growth {streamed / mib:7.0f} MiB")
    print(f"ratio: {whole / streamed:.2f}")


if __name__ == "__main__":
    main()
