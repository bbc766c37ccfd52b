"""Which layers should a node serve? Swarm-aware placement over the live registry.

The swarm's *bottleneck* is its slowest layer: the total serving rate of every
node that holds it (a node measured at ``t`` tokens/s through its shard adds
``t`` to each of its layers). A request needs every layer, so the bottleneck
bounds what the whole swarm can serve, and a layer nobody holds (a *hole*)
makes it zero.

A joining node brings a speed (layer-tokens per second: a node of speed ``S``
serving ``k`` layers runs ``S / k`` tokens/s through its shard), room for
``max_layers`` layers and, when it knows it, its uplink in tokens/s (every
token leaves a node once, whatever ``k``: it serves ``min(S / k, uplink)``).
:func:`choose_range` tries every position for its full length and a few
shorter lengths and keeps, in order:

1. the fewest layers left uncovered (holes first);
2. the highest resulting bottleneck (shorter ranges concentrate the node's
   speed, so a fast node may take fewer layers where the swarm is thin; a
   node its uplink limits gains nothing from a shorter range);
3. among results within ``tie`` of the best, the longest range (fewer hops per
   route), then the weakest window, then the least served, then the first.

Petals has each server take the blocks with the least total throughput; this
maximises the swarm's bottleneck directly and picks the length as well.
:func:`plan_moves` applies the same rule to nodes already serving: a node
moves only when that lifts the bottleneck by a clear margin, one move at a
time so two idle nodes never swap back and forth.

Everything here is a pure function of plain numbers, so the swarm simulator
(``benchmarks/swarm_sim.py``) drives exactly this code in-process.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from tracker_service.domain.certifying_chain import completing_windows, has_certifying_chain

REASON_HOLE = "hole"
REASON_BOTTLENECK = "bottleneck"
REASON_BALANCED = "balanced"
REASON_TOO_LITTLE_MEMORY = "too-little-memory"
REASON_CHAIN = "chain"  # completes a chain of distinct nodes the certifier can run through
REASON_ARBITER = "arbiter"  # replays a hop two nodes disagree on (disputes.py)

# A result within 2 % of the best bottleneck counts as a tie: prefer fewer hops.
DEFAULT_TIE = 0.02
# Rebalancing: a move must lift the bottleneck by 20 % (or close a hole).
DEFAULT_MOVE_MARGIN = 0.20


class Placement(NamedTuple):
    """A node as allocation sees it: its range and tokens/s through that range."""

    start: int
    end: int
    rate: float


@dataclass(frozen=True)
class Choice:
    """A suggested range, with the numbers behind it and a sentence for the contributor."""

    start: int | None  # None: no useful range fits (reason too-little-memory)
    end: int | None
    reason: str
    sentence: str
    bottleneck_before: float
    bottleneck_after: float
    holes_before: int
    holes_after: int

    @property
    def fits(self) -> bool:
        return self.start is not None


def layer_rates(layer_count: int, placements: Iterable[Placement]) -> list[float]:
    """Total serving rate of every layer (a difference array: O(nodes + layers))."""
    delta = [0.0] * (layer_count + 1)
    for start, end, rate in placements:
        start, end = max(0, start), min(layer_count, end)
        if start < end:
            delta[start] += rate
            delta[end] -= rate
    rates, running = [], 0.0
    for index in range(layer_count):
        running += delta[index]
        rates.append(running if running > 1e-12 else 0.0)
    return rates


def hole_runs(rates: Sequence[float]) -> list[tuple[int, int]]:
    """Maximal runs of layers no node holds, as [start, end) ranges."""
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for index, rate in enumerate(rates):
        if rate <= 0.0 and start is None:
            start = index
        elif rate > 0.0 and start is not None:
            runs.append((start, index))
            start = None
    if start is not None:
        runs.append((start, len(rates)))
    return runs


def candidate_lengths(max_layers: int, layer_count: int) -> list[int]:
    """The lengths tried: the full room, half and a quarter of it (distinct, longest first)."""
    top = min(max_layers, layer_count)
    if top < 1:
        return []
    return sorted({top, max(1, math.ceil(top / 2)), max(1, math.ceil(top / 4))}, reverse=True)


def choose_range(
    layer_count: int,
    rates: Sequence[float],
    *,
    max_layers: int,
    speed: float,
    lengths: Sequence[int] | None = None,
    tie: float = DEFAULT_TIE,
    model: str = "this model",
    uplink: float = math.inf,
) -> Choice:
    """The range a node of this room and speed should serve (see the module docstring).

    ``rates`` are the layer rates *without* this node; ``speed`` is in
    layer-tokens/s, ``uplink`` in tokens/s (unknown: no limit). Never raises
    for a verdict: a node that fits no layer gets a Choice with ``start=None``
    and a sentence saying so.
    """
    holes_before = sum(1 for r in rates if r <= 0.0)
    before = min(rates) if rates else 0.0
    if max_layers < 1 or layer_count < 1:
        return Choice(
            None,
            None,
            REASON_TOO_LITTLE_MEMORY,
            f"This computer has room for no layer of {model}: even one layer needs more memory "
            "than is free. Close other programs, raise the memory cap or choose a smaller model.",
            before,
            before,
            holes_before,
            holes_before,
        )
    best = _search(rates, layer_count, max_layers, speed, lengths, tie, uplink)
    start, end, holes_after, after = best
    return Choice(
        start,
        end,
        *_why(rates, start, end, holes_before, holes_after, before, after, model),
        bottleneck_before=before,
        bottleneck_after=after,
        holes_before=holes_before,
        holes_after=holes_after,
    )


def _window_mins(r: np.ndarray, lengths: Sequence[int]) -> dict[int, np.ndarray]:
    """Minimum of every window of each length (a sparse table: O(n log n) array ops)."""
    levels = [r]  # levels[j][i] = min(r[i : i + 2**j])
    top = max(lengths)
    while 2 ** len(levels) <= top:
        prev, half = levels[-1], 2 ** (len(levels) - 1)
        levels.append(np.minimum(prev[:-half], prev[half:]))
    mins: dict[int, np.ndarray] = {}
    for k in lengths:
        j = k.bit_length() - 1
        level, count = levels[j], len(r) - k + 1
        mins[k] = np.minimum(level[:count], level[k - 2**j : k - 2**j + count])
    return mins


def _search(
    rates: Sequence[float],
    layer_count: int,
    max_layers: int,
    speed: float,
    lengths: Sequence[int] | None,
    tie: float,
    uplink: float = math.inf,
) -> tuple[int, int, int, float]:
    """(start, end, holes left, bottleneck after) of the best window.

    Vectorised over every window of every tried length: the simulator calls
    this tens of thousands of times, the tracker once per asking node.
    """
    n = layer_count
    r = np.asarray(rates, dtype=np.float64)
    inf = np.array([np.inf])
    prefix_min = np.minimum.accumulate(np.concatenate([inf, r]))  # [i] = min(r[:i])
    suffix_min = np.minimum.accumulate(np.concatenate([r, inf])[::-1])[::-1]  # [i] = min(r[i:])
    zeros = np.concatenate([[0], np.cumsum(r <= 0.0)])
    sums = np.concatenate([[0.0], np.cumsum(r)])
    total_holes = int(zeros[n])
    tried = [k for k in (lengths or candidate_lengths(max_layers, n)) if 1 <= k <= n]
    if not tried:
        tried = [max(1, min(max_layers, n))]
    lows = _window_mins(r, tried)
    per_length = []
    for k in tried:
        count = n - k + 1
        outside = np.minimum(prefix_min[:count], suffix_min[k:])
        after = np.minimum(lows[k] + min(speed / k, uplink), outside)
        holes = total_holes - (zeros[k:] - zeros[:count])
        per_length.append((k, holes, after))
    fewest = min(int(holes.min()) for _, holes, _ in per_length)
    top = max(float(after[holes == fewest].max(initial=-1.0)) for _, holes, after in per_length)
    best: tuple[int, float, float, int, float] | None = None  # (-k, low, sum, start, after)
    for k, holes, after in per_length:
        near = np.flatnonzero((holes == fewest) & (after >= top * (1.0 - tie)))
        if len(near) == 0:
            continue
        low, window_sum = lows[k][near], sums[near + k] - sums[near]
        i = near[np.lexsort((near, window_sum, low))[0]]  # weakest, least served, first
        key = (-k, float(lows[k][i]), float(sums[i + k] - sums[i]), int(i), float(after[i]))
        if best is None or key[:4] < best[:4]:
            best = key
    assert best is not None  # the window reaching `top` is always near it
    neg_k, _low, _sum, start, after_best = best
    return start, start - neg_k, fewest, after_best


def _why(
    rates: Sequence[float],
    start: int,
    end: int,
    holes_before: int,
    holes_after: int,
    before: float,
    after: float,
    model: str,
) -> tuple[str, str]:
    """(reason, sentence) for a chosen range."""
    span = f"Layers {start}–{end} of {model}"
    if holes_before:
        closed = holes_before - holes_after
        if holes_after == 0:
            return REASON_HOLE, (
                f"{span} have no server right now: serving them closes the last hole, "
                "so the model can be served end to end."
            )
        return REASON_HOLE, (
            f"{span} have no server right now: serving them closes {closed} of the "
            f"{holes_before} uncovered layers."
        )
    servers = min(rates[start:end])
    if after > before * (1.0 + 1e-9):
        return REASON_BOTTLENECK, (
            f"{span} have the fewest servers right now ({servers:.1f} tokens/s at their "
            f"slowest): serving them raises the swarm's bottleneck from {before:.1f} to "
            f"{after:.1f} tokens/s."
        )
    return REASON_BALANCED, (
        f"{span} are among the least served right now ({servers:.1f} tokens/s); the "
        f"swarm's slowest layer stays at {before:.1f} tokens/s, so this adds spare capacity."
    )


def choose_completing(
    layer_count: int,
    placements: Sequence[Placement],
    *,
    max_layers: int,
    speed: float,
    uplink: float,
    model: str,
) -> Choice | None:
    """The range that completes a certifying chain, or None when none is missing or fits.

    Among completing windows: fewest holes left, then the highest bottleneck,
    then the longest (fewer hops), then the first, as :func:`choose_range` ranks.
    """
    ranges = [(p.start, p.end) for p in placements]
    if has_certifying_chain(layer_count, ranges):
        return None
    windows = completing_windows(layer_count, ranges, max_layers)
    if not windows:
        return None
    rates = layer_rates(layer_count, placements)
    before = min(rates) if rates else 0.0
    holes_before = sum(1 for r in rates if r <= 0.0)
    best: tuple[tuple[int, float, int, int], tuple[int, int], float, int] | None = None
    for start, end in windows:
        added = min(speed / (end - start), uplink)
        after_rates = [r + added if start <= i < end else r for i, r in enumerate(rates)]
        after = min(after_rates)
        holes = sum(1 for r in after_rates if r <= 0.0)
        key = (holes, -round(after, 9), -(end - start), start)
        if best is None or key < best[0]:
            best = (key, (start, end), after, holes)
    assert best is not None
    _, (start, end), after, holes_after = best
    if holes_before:  # closing the last hole is what the contributor needs to hear
        reason, sentence = _why(rates, start, end, holes_before, holes_after, before, after, model)
    else:
        reason, sentence = (
            REASON_CHAIN,
            (
                f"Layers {start}–{end} of {model}: with them the computers already serving it "
                "form a chain of two or more that a check of the whole model can run through, "
                "so the model can be certified and served."
            ),
        )
    return Choice(start, end, reason, sentence, before, after, holes_before, holes_after)


def arbiter_choice(
    layer_count: int,
    rates: Sequence[float],
    layers: tuple[int, int],
    *,
    speed: float,
    uplink: float,
    model: str,
) -> Choice:
    """The disputed range, for a newcomer recruited to settle an audit dispute."""
    start, end = layers
    before = min(rates) if rates else 0.0
    added = min(speed / (end - start), uplink)
    after = min(r + added if start <= i < end else r for i, r in enumerate(rates))
    holes_before = sum(1 for r in rates if r <= 0.0)
    holes_after = sum(1 for i, r in enumerate(rates) if r <= 0.0 and not start <= i < end)
    sentence = (
        f"Layers {start}–{end} of {model}: two computers serving them gave different answers "
        "and neither serves until a third one checks; this computer is that third opinion."
    )
    return Choice(start, end, REASON_ARBITER, sentence, before, after, holes_before, holes_after)


# -- rebalancing -------------------------------------------------------------------------


class Slot(NamedTuple):
    """A serving node, as the rebalancer sees it."""

    node_id: str
    start: int
    end: int
    rate: float  # tokens/s through its shard
    open_sessions: int = 0


@dataclass(frozen=True)
class Move:
    node_id: str
    start: int
    end: int
    sentence: str
    bottleneck_before: float
    bottleneck_after: float
    # The model cannot serve (a hole, or no chain to certify) until this move is made.
    urgent: bool = False


def plan_moves(
    layer_count: int,
    slots: Sequence[Slot],
    *,
    margin: float = DEFAULT_MOVE_MARGIN,
    max_moves: int = 1,
    candidates: int = 16,
    model: str = "this model",
) -> list[Move]:
    """Moves that lift the bottleneck by ``margin`` (or close holes), best first.

    Only idle nodes (no open sessions) are considered, those whose departure
    costs least first (the most over-served windows). Each move keeps the
    node's length (the memory it showed it has) and is applied before the
    next is planned, so two nodes are never both sent into the same gap.

    A certifying chain (certifying_chain.py) comes first: with none among the
    slots, an idle node is sent where it completes one (it may take fewer layers
    than it holds); with one, no move may break the last.
    """
    rates = layer_rates(layer_count, (Placement(s.start, s.end, s.rate) for s in slots))
    ranges = {s.node_id: (s.start, s.end) for s in slots}
    moves: list[Move] = []
    moved: set[str] = set()
    for _ in range(max_moves):
        if has_certifying_chain(layer_count, ranges.values()):
            move = _best_move(
                layer_count, rates, slots, moved, margin, candidates, model, keep_chain=ranges
            )
        else:
            move = _chain_move(layer_count, slots, ranges, moved, model)
            if move is None:
                move = _best_move(layer_count, rates, slots, moved, margin, candidates, model)
        if move is None:
            break
        slot = next(s for s in slots if s.node_id == move.node_id)
        _shift(rates, slot.start, slot.end, -slot.rate)
        k = slot.end - slot.start
        _shift(rates, move.start, move.end, slot.rate * k / (move.end - move.start))
        ranges[move.node_id] = (move.start, move.end)
        moved.add(move.node_id)
        moves.append(move)
    return moves


def _chain_move(
    layer_count: int,
    slots: Sequence[Slot],
    ranges: dict[str, tuple[int, int]],
    moved: set[str],
    model: str,
) -> Move | None:
    """The idle node whose move completes a certifying chain, best bottleneck first."""
    if len(ranges) < 2:
        return None
    now = layer_rates(layer_count, (Placement(*ranges[s.node_id], 1.0) for s in slots))
    holes_now = sum(1 for r in now if r <= 0.0)
    best: tuple[tuple[int, float], Move] | None = None
    for slot in slots:
        if slot.open_sessions or slot.node_id in moved:
            continue
        others = [
            Placement(start, end, s.rate)
            for s in slots
            if s.node_id != slot.node_id
            for start, end in [ranges[s.node_id]]
        ]
        k = slot.end - slot.start
        speed = (slot.rate if slot.rate > 0 else 1.0) * k
        choice = choose_completing(
            layer_count, others, max_layers=k, speed=speed, uplink=math.inf, model=model
        )
        if choice is None or choice.start is None or choice.end is None:
            continue
        if (choice.start, choice.end) == ranges[slot.node_id]:
            continue
        score = (-choice.holes_after, choice.bottleneck_after)
        if best is None or score > best[0]:
            sentence = f"Moving to layers {choice.start}–{choice.end} of {model} " + (
                f"closes {holes_now - choice.holes_after} uncovered layer(s)."
                if choice.holes_after < holes_now
                else "gives the network a chain of two or more computers that a check of the "
                "whole model can run through."
            )
            move = Move(
                slot.node_id,
                choice.start,
                choice.end,
                sentence,
                choice.bottleneck_before,
                choice.bottleneck_after,
                urgent=True,  # without a certifying chain the recipe stays dark
            )
            best = (score, move)
    return None if best is None else best[1]


def _best_move(
    layer_count: int,
    rates: list[float],
    slots: Sequence[Slot],
    moved: set[str],
    margin: float,
    candidates: int,
    model: str,
    *,
    keep_chain: dict[str, tuple[int, int]] | None = None,
) -> Move | None:
    before = min(rates) if rates else 0.0
    holes_before = sum(1 for r in rates if r <= 0.0)
    idle = [s for s in slots if s.open_sessions == 0 and s.node_id not in moved and s.rate > 0]
    # Spare capacity of a window without the node: the least it would leave behind.
    idle.sort(key=lambda s: -(min(rates[s.start : s.end]) - s.rate))
    best: tuple[float, int, Move] | None = None
    for slot in idle[:candidates]:
        k = slot.end - slot.start
        without = list(rates)
        _shift(without, slot.start, slot.end, -slot.rate)
        choice = choose_range(
            layer_count, without, max_layers=k, speed=slot.rate * k, lengths=[k], model=model
        )
        if choice.start is None or choice.end is None or choice.start == slot.start:
            continue
        after = choice.bottleneck_after
        closes_holes = choice.holes_after < holes_before
        if not closes_holes and (holes_before or after < before * (1.0 + margin)):
            continue
        if keep_chain is not None:  # never break the last certifying chain
            moved_ranges = {**keep_chain, slot.node_id: (choice.start, choice.end)}
            if not has_certifying_chain(layer_count, moved_ranges.values()):
                continue
        score = (holes_before - choice.holes_after, after)
        if best is None or score > (best[1], best[0]):
            sentence = f"Moving to layers {choice.start}–{choice.end} of {model} " + (
                f"closes {holes_before - choice.holes_after} uncovered layer(s)."
                if closes_holes
                else f"raises the swarm's bottleneck from {before:.1f} to {after:.1f} tokens/s."
            )
            move = Move(
                slot.node_id, choice.start, choice.end, sentence, before, after, closes_holes
            )
            best = (after, holes_before - choice.holes_after, move)
    return None if best is None else best[2]


def _shift(rates: list[float], start: int, end: int, delta: float) -> None:
    for index in range(max(0, start), min(len(rates), end)):
        value = rates[index] + delta
        rates[index] = value if value > 1e-12 else 0.0
