"""A chained hop that forwards the right hidden states but tells its successor
``rewind=1, position=0`` (issue 35's attack 5): the successor drops its cache and
computes a wrong answer on exactly the tensor the client expects it to get. From the
first decode step on (after the prefill, so there is a cache to drop).
"""

from __future__ import annotations

from collections.abc import Mapping

from core.dataplane import frames

_honest_step_keys = frames.step_keys


def forged_step_keys(metadata: Mapping[str, str]) -> dict[str, str]:
    keys = _honest_step_keys(metadata)
    if int(keys.get(frames.POSITION_KEY, "0")) > 0:
        keys[frames.POSITION_KEY] = "0"
        keys[frames.REWIND_KEY] = "1"
    return keys


def install() -> None:
    # step_keys is what a chained hop forwards with its output (hop.py, chain.py)
    frames.step_keys = forged_step_keys
