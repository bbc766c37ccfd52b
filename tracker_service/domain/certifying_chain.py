"""Can the live ranges of one fingerprint form a route the certifier accepts?

The certifier needs a chain of at least two distinct nodes covering every layer
(recipe_identity: each hop's receipt starts where the previous hop stopped, at
or inside the hop's own shard, and ends where that shard ends). So a network of
nodes that each hold the whole model never certifies: the first hop already
reaches the last layer. Allocation and rebalancing use these pure functions to
keep at least one such chain alive: a newcomer completes one when none exists
(two whole-model nodes: the second takes ``[0, k)`` with ``k < layer_count`` and
the first runs from ``k`` on), and no move may break the last one.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

# Above this many windows the search tries only a few lengths per start.
MAX_WINDOWS = 20_000


def has_certifying_chain(layer_count: int, ranges: Iterable[tuple[int, int]]) -> bool:
    """True when some chain of >= 2 distinct ranges covers ``[0, layer_count)``.

    A hop runs from the previous hop's end (inside or at the start of its own
    range) to its range's end; positions only grow, so no range repeats.
    """
    shapes = sorted({(s, e) for s, e in ranges if 0 <= s < e <= layer_count}, key=lambda r: r[1])
    reached: list[int] = []  # ends < layer_count reachable from layer 0, ascending
    for start, end in shapes:
        if end == layer_count:
            continue
        linked = start == 0 or _any_in(reached, start, end)
        if linked and (not reached or reached[-1] != end):
            reached.append(end)
    return any(_any_in(reached, s, e) for s, e in shapes if e == layer_count)


def _any_in(sorted_points: Sequence[int], low: int, high: int) -> bool:
    """Some point p with low <= p < high."""
    i = bisect.bisect_left(sorted_points, low)
    return i < len(sorted_points) and sorted_points[i] < high


def completing_windows(
    layer_count: int, ranges: Sequence[tuple[int, int]], max_layers: int
) -> list[tuple[int, int]]:
    """The windows (length <= max_layers) that would give ``ranges`` a certifying chain."""
    top = min(max_layers, layer_count)
    if top < 1:
        return []
    lengths = list(range(top, 0, -1))
    if layer_count * top > MAX_WINDOWS:  # the full room, one less, half and a quarter
        lengths = sorted({top, top - 1, (top + 1) // 2, (top + 3) // 4} - {0}, reverse=True)
    found = []
    for k in lengths:
        for start in range(0, layer_count - k + 1):
            window = (start, start + k)
            if has_certifying_chain(layer_count, [*ranges, window]):
                found.append(window)
    return found
