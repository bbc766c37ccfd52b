"""The tests' one bounded wait: poll until a condition holds, or fail saying what."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(
    predicate: Callable[[], object],
    timeout_s: float = 30.0,
    what: str = "the condition",
    poll_s: float = 0.1,
) -> None:
    """Return once ``predicate()`` is true; an AssertionError naming ``what`` after
    ``timeout_s`` (a bound for a loaded machine, never a measurement)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(poll_s)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
