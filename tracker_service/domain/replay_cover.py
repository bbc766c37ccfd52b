"""Allocation for audits: give every range a node that could replay it.

A hop is audited by replaying it on another node whose layers contain it
(auditability.py); a range no second node contains cannot be checked, and on a
public tracker a newcomer alone on one serves no user. So once the model is
covered, a joining node is asked to *contain* such a lone range before it is
asked to spread the swarm's load: :func:`choose_replayer` picks, among windows of
the node's room that contain at least one lone range, the one containing the most,
then the one that most raises the bottleneck, the longest, the first.

Pure functions of plain numbers, like allocation.py, which they complement.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tracker_service.domain.allocation import Choice, Placement, layer_rates

REASON_REPLAYER = "replayer"  # contains a range only one node holds, so it can be checked


def lone_ranges(placements: Sequence[Placement]) -> list[tuple[int, int]]:
    """The ranges (each once) that no other placement contains: nobody could replay them."""
    lone: list[tuple[int, int]] = []
    for index, p in enumerate(placements):
        contained = any(
            other.start <= p.start and p.end <= other.end
            for j, other in enumerate(placements)
            if j != index
        )
        if not contained and (p.start, p.end) not in lone:
            lone.append((p.start, p.end))
    return lone


def choose_replayer(
    layer_count: int,
    placements: Sequence[Placement],
    *,
    max_layers: int,
    speed: float,
    uplink: float = math.inf,
    model: str = "this model",
) -> Choice | None:
    """The range that lets the most lone ranges be checked, or None when none is lone
    or none fits in ``max_layers``. A node of room ``k`` takes ``k`` layers (more
    ranges fit in a longer window), never past the model's end."""
    lone = [r for r in lone_ranges(placements) if r[1] - r[0] <= max_layers]
    if not lone:
        return None
    length = min(max_layers, layer_count)
    rates = layer_rates(layer_count, placements)
    before = min(rates) if rates else 0.0
    holes_before = sum(1 for r in rates if r <= 0.0)
    added = min(speed / length, uplink)
    best: tuple[tuple[int, float, int], int, float, list[tuple[int, int]]] | None = None
    starts = {max(0, min(end - length, layer_count - length)) for _, end in lone}
    starts |= {min(start, layer_count - length) for start, _ in lone}
    for start in sorted(starts):
        end = start + length
        covered = [r for r in lone if start <= r[0] and r[1] <= end]
        if not covered:
            continue
        after = min(r + added if start <= i < end else r for i, r in enumerate(rates))
        key = (-len(covered), -round(after, 9), start)
        if best is None or key < best[0]:
            best = (key, start, after, covered)
    if best is None:
        return None
    _, start, after, covered = best
    end = start + length
    holes_after = sum(1 for i, r in enumerate(rates) if r <= 0.0 and not start <= i < end)
    named = ", ".join(f"{a}–{b}" for a, b in covered)
    sentence = (
        f"Layers {start}–{end} of {model}: the computer serving layers {named} is the only "
        "one holding them, so nobody can check its answers and it serves no one new; with "
        "this computer it can be checked."
        if len(covered) == 1
        else f"Layers {start}–{end} of {model}: layers {named} are each held by one "
        "computer only, so nobody can check their answers and they serve no one new; with "
        "this computer they can be checked."
    )
    return Choice(start, end, REASON_REPLAYER, sentence, before, after, holes_before, holes_after)
