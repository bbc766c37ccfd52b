"""Can the live ranges of one fingerprint form a route the certifier accepts?

The certifier needs a chain of at least two distinct nodes covering every layer
(recipe_identity: each hop's receipt starts where the previous hop stopped, at or
inside the hop's own shard, and stops where its ticket says, at or before its
shard's end: ``effective_end``, as an audit replay stops). A hop may therefore
stop early: two nodes that each hold the whole model certify it, the first
running ``[0, k)`` and the second ``[k, L)``. Allocation and rebalancing use these
pure functions to keep at least one such chain alive: a newcomer completes one
when none exists, and no move may break the last one.

The rule in ranges: a chain exists exactly when the ranges cover ``[0, L)``
without a hole (an overlap is fine) and two *different* nodes hold layer 0 and
layer ``L - 1`` (one starting at 0, another ending at ``L``). Any walk from the
first to the last shrinks to one of distinct nodes: a node met twice runs
everything between its two visits, since its shard holds both points.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

# Above this many windows the search tries only a few lengths per start.
MAX_WINDOWS = 20_000

# (index into the ranges given, first layer it runs, layer where it stops)
ChainHop = tuple[int, int, int]


def has_certifying_chain(layer_count: int, ranges: Iterable[tuple[int, int]]) -> bool:
    """True when some chain of >= 2 distinct ranges covers ``[0, layer_count)``.

    ``ranges``: one per node (two nodes on the same range are two ranges).
    """
    return certifying_hops(layer_count, list(ranges)) is not None


def certifying_hops(layer_count: int, ranges: Sequence[tuple[int, int]]) -> list[ChainHop] | None:
    """One chain of >= 2 distinct ranges from layer 0 to ``layer_count``, or None.

    Each hop runs ``[start, stop)`` with ``shard start <= start < stop <= shard end``;
    the first starts at 0, each next one where the previous stopped, the last stops at
    ``layer_count``. Greedy: the range reaching furthest at each point, the first a
    range starting at 0, the last a different range ending at ``layer_count``.
    """
    valid = [i for i, (s, e) in enumerate(ranges) if 0 <= s < e <= layer_count]
    if layer_count < 2:
        return None
    firsts = sorted((i for i in valid if ranges[i][0] == 0), key=lambda i: -ranges[i][1])
    # The last hop starts as early as it can (but past layer 0): fewest middle hops.
    lasts = sorted(
        (i for i in valid if ranges[i][1] == layer_count), key=lambda i: max(ranges[i][0], 1)
    )
    if not firsts or not lasts:
        return None
    first, last = firsts[0], lasts[0]
    if first == last:  # the same range: the other one of either kind, if any
        options = [(first, lasts[1])] if len(lasts) > 1 else []
        options += [(firsts[1], last)] if len(firsts) > 1 else []
        if not options:
            return None
        first, last = min(options, key=lambda p: (max(ranges[p[1]][0], 1), -ranges[p[0]][1]))
    join = max(ranges[last][0], 1)
    walk = _walk(ranges, valid, first, join)
    if walk is None:
        return None
    walk.append((last, join, layer_count))
    return _distinct(walk)


def _walk(
    ranges: Sequence[tuple[int, int]], valid: Sequence[int], first: int, target: int
) -> list[ChainHop] | None:
    """Hops from layer 0 (by ``first``) to exactly ``target``, reaching furthest each time."""
    hops: list[ChainHop] = []
    node, position = first, 0
    while True:
        stop = min(ranges[node][1], target)
        hops.append((node, position, stop))
        if stop == target:
            return hops
        position = stop
        here = [i for i in valid if ranges[i][0] <= position < ranges[i][1]]
        if not here:
            return None  # a hole before the last hop's start
        node = max(here, key=lambda i: ranges[i][1])


def _distinct(walk: list[ChainHop]) -> list[ChainHop] | None:
    """The walk with each range met twice running once, from its first visit to its
    last stop (its shard holds both); None when fewer than two ranges remain."""
    hops: list[ChainHop] = []
    for node, start, stop in walk:
        seen = next((k for k, h in enumerate(hops) if h[0] == node), None)
        if seen is not None:
            start = hops[seen][1]
            del hops[seen:]
        hops.append((node, start, stop))
    return hops if len(hops) >= 2 else None


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
