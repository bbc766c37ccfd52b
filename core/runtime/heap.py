"""Give the C heap's free pages back to the operating system (glibc's ``malloc_trim``).

Loading a quantized shard allocates one layer's float32 tensors, quantizes them and
frees them, layer after layer, while the small packed weights it keeps land between
them. glibc keeps freed chunks below the top of its heap resident, so how much of
that freed float32 the process still holds depends on where the packed weights
landed: loading benchmarks/q4_load_memory.py's 604 MiB model under llama-q4 (100 MiB
of weights) peaked at 129 to 295 MiB of anonymous memory from one run to the next,
all of it but the weights free heap (``malloc_trim`` brought it to 99 MiB every
time). Trimming after each layer: 161 to 183 MiB, for ~0.2 s more load time there
(re-faulting the pages given back); trimming after every tensor as well gave
130 to 165 MiB but doubled the load time.

Elsewhere (macOS, Windows, musl) this does nothing.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import sys
from collections.abc import Callable

log = logging.getLogger(__name__)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError) as exc:  # not glibc
        log.debug("no malloc_trim here (%s); free heap stays with the process", exc)
        return None
    return trim


def release_free_heap() -> None:
    """Return every whole free page of the C heap to the OS (where glibc can)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
