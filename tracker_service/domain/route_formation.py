"""Route formation: chain live shards of one fingerprint into a full-model route.

Candidates come from exactly one fingerprint (artifact digest + recipe digest),
so a route can only ever be assembled inside one identity. A route covers
``[0, layer_count)`` with no hole; where two shards overlap, the later hop is
told where the previous one stopped (``effective_start``) and skips the layers
already computed.

Choice. Nodes serving the same range ("shape") are interchangeable, so the
search runs over shapes, not nodes: each shape is represented by one node,
drawn at random among those whose estimated cost lies within a slack band of
the best one (throughput as the tracker measured it, dial latency, current
load and the routes this tracker handed out recently). That spreads sessions
over equivalent nodes instead of always picking the same one, and keeps
formation cheap: the search is a shortest path over at most ``L (L + 1) / 2``
shapes and ``L + 1`` layer boundaries, whatever the number of nodes. A
certification route must cross at least two distinct nodes; the search tracks
the hop count for that.

Speed. A node's own claim of its throughput is never believed upwards: it is
costed at what the tracker timed of its steps, a newcomer at the median, and a
claim can only lower that (domain/measured_speed.py).
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import NamedTuple

from tracker_service.domain.measured_speed import MeasuredSpeed, estimated_throughputs
from tracker_service.domain.recipe_identity import coverage_gap
from tracker_service.domain.tickets import TicketHop
from tracker_service.errors import NoRoute

PURPOSE_SERVE = "serve"
PURPOSE_CERTIFY = "certify"


class Candidate(NamedTuple):
    """One live, reachable node of the fingerprint, as route formation sees it.

    A NamedTuple: the store builds one per live node per route request, and
    tuple construction keeps 10,000 of them cheap.
    """

    node_id: str
    endpoint: str
    public_key: bytes
    start: int
    end: int
    throughput: float  # tokens/s through its whole shard the node claims; 0 = unknown
    load: float = 0.0
    open_sessions: int = 0
    tls_pin: str = ""  # the node's signed certificate pin (docs/wire.md#tls)


@dataclass(frozen=True)
class RouteHop:
    candidate: Candidate
    effective_start: int

    @property
    def ticket_hop(self) -> TicketHop:
        c = self.candidate
        return TicketHop(c.node_id, c.start, c.end, self.effective_start)


@dataclass(frozen=True)
class Route:
    layer_count: int
    hops: tuple[RouteHop, ...]
    estimated_ms_per_token: float

    @property
    def node_ids(self) -> tuple[str, ...]:
        return tuple(h.candidate.node_id for h in self.hops)


@dataclass(frozen=True)
class RoutingPolicy:
    """Weights of the cost model (milliseconds per generated token)."""

    default_latency_ms: float = 20.0  # per hop, until the dialer measured one
    unknown_throughput: float = 1.0  # tokens/s assumed when nothing is claimed or measured
    min_measured_steps: int = 4  # timed decode steps before a node counts as measured
    session_weight: float = 0.25  # each open (or recently assigned) session slows a node
    slack: float = 0.25  # nodes within 25 % of a shape's best count as equivalent
    # A node holding the prompt's prefix may cost more per token than the best, as its
    # cached blocks spare it that prefix's prefill (the gateway weighs how much:
    # prefix_affinity.PrefixHint.slack), but never more than twice the best: past that
    # its load has to spread, whatever it holds.
    prefer_slack: float = 1.0


def node_cost_ms(
    candidate: Candidate,
    *,
    latency_ms: float | None,
    recent: int,
    policy: RoutingPolicy,
    throughput: float | None = None,
) -> tuple[float, float]:
    """(per-hop latency, ms to compute the node's whole shard for one token).

    `throughput`: the node's estimated tokens/s (measured_speed.py); None weighs its
    claim, as a pool built without measurements does."""
    if throughput is None:
        throughput = candidate.throughput
    if not throughput > 0:
        throughput = policy.unknown_throughput
    load = candidate.load if candidate.load > 0.0 else 0.0  # not max(): called per candidate
    busy = 1.0 + load + policy.session_weight * (candidate.open_sessions + recent)
    hop_ms = policy.default_latency_ms if latency_ms is None else latency_ms
    return hop_ms, 1000.0 / throughput * busy


class _Shape(NamedTuple):
    """The nodes of one range, with what their cost needs that no request changes."""

    candidates: tuple[Candidate, ...]
    node_ids: tuple[str, ...]
    throughput: list[float]  # estimated tokens/s (measured_speed.py)
    compute_ms: list[float]  # node_cost_ms with no recent assignment
    position: dict[str, int]  # node_id -> index in the tuples above


class CandidatePool:
    """A fingerprint's candidates grouped by range, with their static costs.

    Built once per candidate list (the planner keeps one per cached list), so a
    route request touches per node only floats in flat lists: one addition per
    node, the comparisons of the slack band, and a lookup for each node with a
    measured latency, a recent assignment or an exclusion. At 10,000 nodes that
    keeps formation to a few milliseconds and allocates no per-node objects, whose
    garbage collection made the slow tail of route requests.
    """

    def __init__(
        self,
        candidates: Sequence[Candidate],
        policy: RoutingPolicy,
        measured: Mapping[str, MeasuredSpeed] | None = None,
    ) -> None:
        """`measured`: what the tracker timed of these nodes (store/node_speeds.py); each
        is costed at min(claim, measurement), a node not measured at the median."""
        self.source = candidates  # the list this pool was built from
        self.policy = policy
        speeds = estimated_throughputs(
            candidates,
            measured or {},
            min_steps=policy.min_measured_steps,
            unknown=policy.unknown_throughput,
        )
        grouped: dict[tuple[int, int], list[tuple[Candidate, float]]] = defaultdict(list)
        for c, speed in zip(candidates, speeds, strict=True):
            grouped[(c.start, c.end)].append((c, speed))
        # Insertion order of first appearance: the order shapes draw from the rng.
        self.shapes: dict[tuple[int, int], _Shape] = {}
        for shape, members in grouped.items():
            ids = tuple(c.node_id for c, _ in members)
            rates = [speed for _, speed in members]
            compute = [
                node_cost_ms(c, latency_ms=0.0, recent=0, policy=policy, throughput=speed)[1]
                for c, speed in members
            ]
            index = {node_id: i for i, node_id in enumerate(ids)}
            self.shapes[shape] = _Shape(tuple(c for c, _ in members), ids, rates, compute, index)

    def throughput_of(self, node_id: str) -> float | None:
        """The tokens/s this pool costs `node_id` at (None: not in the pool)."""
        for shape in self.shapes.values():
            i = shape.position.get(node_id)
            if i is not None:
                return shape.throughput[i]
        return None

    def form(
        self,
        layer_count: int,
        *,
        min_nodes: int = 1,
        exclude: Iterable[str] = (),
        latency: Mapping[str, float],
        recent: Mapping[str, int],
        rng: random.Random,
        prefer: AbstractSet[str] = frozenset(),
        prefer_slack: float | None = None,
    ) -> Route:
        """:func:`form_route` over this pool (`latency`: the measured hop latencies;
        `prefer`: nodes taken first while within `prefer_slack` of the best, e.g. holders
        of the prompt's prefix in their caches)."""
        excluded = set(exclude)
        # Distinct ranges decide coverage; 10,000 nodes share a handful of them.
        gap = coverage_gap(self.usable_shapes(layer_count, excluded), layer_count)
        if gap is not None:
            raise NoRoute(
                f"no live reachable nodes cover the model: {gap.replace('Shard', 'node')}"
            )
        shapes = self.pick(
            layer_count,
            exclude=excluded,
            latency=latency,
            recent=recent,
            rng=rng,
            prefer=prefer,
            prefer_slack=prefer_slack,
        )
        return _chain(shapes, layer_count, min_nodes)

    def usable_shapes(self, layer_count: int, exclude: AbstractSet[str]) -> set[tuple[int, int]]:
        """The ranges inside the model with at least one node not excluded."""
        usable = set()
        for (start, end), shape in self.shapes.items():
            if not 0 <= start < end <= layer_count:
                continue
            gone = sum(1 for node_id in exclude if node_id in shape.position) if exclude else 0
            if gone < len(shape.node_ids):
                usable.add((start, end))
        return usable

    def pick(
        self,
        layer_count: int,
        *,
        exclude: AbstractSet[str] = frozenset(),
        latency: Mapping[str, float],
        recent: Mapping[str, int],
        rng: random.Random,
        prefer: AbstractSet[str] = frozenset(),
        prefer_slack: float | None = None,
    ) -> dict[tuple[int, int], tuple[Candidate, float, float]]:
        """One node per usable shape, drawn among the near-best: (node, hop ms, full-shard ms).

        `latency` holds the measured hop latencies (others weigh the policy's default).
        A node in `prefer` costing at most `prefer_slack` more than the best is taken
        before the others (never less than the equivalence band, never more than the
        policy's cap: None is the cap). Affinity never picks a node that costs more, so
        as its sessions make it busier it stops being preferred and the load spreads.
        """
        policy = self.policy
        wanted = policy.prefer_slack if prefer_slack is None else prefer_slack
        widening = 1.0 + max(policy.slack, min(policy.prefer_slack, wanted))
        default = policy.default_latency_ms
        chosen: dict[tuple[int, int], tuple[Candidate, float, float]] = {}
        for (start, end), shape in self.shapes.items():
            if not 0 <= start < end <= layer_count:
                continue
            costs = _costs(shape, default, latency, recent, policy)
            if exclude:
                for node_id in exclude:
                    i = shape.position.get(node_id)
                    if i is not None:
                        costs[i] = math.inf
            best = min(costs)
            if best == math.inf:
                continue  # every node of this range is excluded
            limit = best * (1.0 + policy.slack)
            band = [i for i, cost in enumerate(costs) if cost <= limit]
            if prefer:
                wide = best * widening
                position = shape.position
                held = sorted(
                    i
                    for node_id in prefer
                    if (i := position.get(node_id)) is not None and costs[i] <= wide
                )
                band = held or band
            i = rng.choice(band)
            node = shape.candidates[i]
            hop_ms, compute_ms = node_cost_ms(
                node,
                latency_ms=latency.get(node.node_id),
                recent=recent.get(node.node_id, 0),
                policy=policy,
                throughput=shape.throughput[i],
            )
            chosen[(start, end)] = (node, hop_ms, compute_ms)
        return chosen


def _costs(
    shape: _Shape,
    default: float,
    latency: Mapping[str, float],
    recent: Mapping[str, int],
    policy: RoutingPolicy,
) -> list[float]:
    """Each node's hop + full-shard ms, as node_cost_ms adds them."""
    position = shape.position
    if len(latency) < len(position):
        costs = [default + compute for compute in shape.compute_ms]
        for node_id, hop_ms in latency.items():
            i = position.get(node_id)
            if i is not None:
                costs[i] = hop_ms + shape.compute_ms[i]
    else:
        get = latency.get
        costs = [
            get(node_id, default) + compute
            for node_id, compute in zip(shape.node_ids, shape.compute_ms, strict=True)
        ]
    for node_id, count in recent.items():
        i = position.get(node_id)
        if i is not None and count:
            hop_ms, compute_ms = node_cost_ms(
                shape.candidates[i],
                latency_ms=latency.get(node_id),
                recent=count,
                policy=policy,
                throughput=shape.throughput[i],
            )
            costs[i] = hop_ms + compute_ms
    return costs


def form_route(
    candidates: Sequence[Candidate],
    layer_count: int,
    *,
    min_nodes: int = 1,
    exclude: Iterable[str] = (),
    latency_ms: Callable[[str], float | None] = lambda _node_id: None,
    recent: Mapping[str, int] | None = None,
    policy: RoutingPolicy | None = None,
    rng: random.Random | None = None,
    measured: Mapping[str, MeasuredSpeed] | None = None,
) -> Route:
    """The cheapest chain covering ``[0, layer_count)`` with at least `min_nodes` hops.

    Raises NoRoute stating the first uncovered layers (or why no chain of
    enough distinct nodes exists).
    """
    policy = policy or RoutingPolicy()
    latency = {c.node_id: ms for c in candidates if (ms := latency_ms(c.node_id)) is not None}
    return CandidatePool(candidates, policy, measured).form(
        layer_count,
        min_nodes=min_nodes,
        exclude=exclude,
        latency=latency,
        recent=recent or {},
        rng=rng or random.Random(),
    )


def _chain(
    shapes: Mapping[tuple[int, int], tuple[Candidate, float, float]],
    layer_count: int,
    min_nodes: int,
) -> Route:
    """The cheapest chain of the chosen shapes; a shortest path over layer boundaries."""
    cap = max(1, min_nodes)
    # best[(position, hops so far capped at `cap`)] = (cost, previous state, shape)
    best: dict[tuple[int, int], tuple[float, tuple[int, int] | None, tuple[int, int] | None]] = {
        (0, 0): (0.0, None, None)
    }
    by_start = sorted(shapes)
    for position in range(layer_count):
        for hops in range(cap + 1):
            here = best.get((position, hops))
            if here is None:
                continue
            for start, end in by_start:
                if start > position:
                    break
                if end <= position:
                    continue
                _, hop_ms, compute_ms = shapes[(start, end)]
                share = (end - position) / (end - start)  # layers this hop actually runs
                cost = here[0] + hop_ms + compute_ms * share
                state = (end, min(hops + 1, cap))
                if state not in best or cost < best[state][0]:
                    best[state] = (cost, (position, hops), (start, end))
    final = best.get((layer_count, cap))
    if final is None:
        raise NoRoute(
            f"no chain of {cap} or more distinct nodes covers all {layer_count} layers; "
            "a single node serving the whole model cannot certify it"
        )
    return Route(layer_count, _walk_back(best, (layer_count, cap), shapes), final[0])


def _walk_back(
    best: Mapping[tuple[int, int], tuple[float, tuple[int, int] | None, tuple[int, int] | None]],
    state: tuple[int, int],
    shapes: Mapping[tuple[int, int], tuple[Candidate, float, float]],
) -> tuple[RouteHop, ...]:
    hops: list[RouteHop] = []
    current: tuple[int, int] | None = state
    while current is not None:
        _, previous, shape = best[current]
        if previous is None or shape is None:
            break
        hops.append(RouteHop(shapes[shape][0], effective_start=previous[0]))
        current = previous
    return tuple(reversed(hops))


@dataclass
class RecentAssignments:
    """Routes this tracker handed out lately, per node, until heartbeats catch up.

    A heartbeat reports a node's open sessions every few seconds; between two,
    a burst of route requests would otherwise all land on the same best node.
    """

    window_s: float = 10.0
    clock: Callable[[], float] = time.monotonic
    _events: deque[tuple[float, tuple[str, ...]]] = field(default_factory=deque)
    _counts: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, node_ids: Iterable[str]) -> None:
        ids = tuple(node_ids)
        with self._lock:
            self._expire()
            self._events.append((self.clock(), ids))
            for node_id in ids:
                self._counts[node_id] = self._counts.get(node_id, 0) + 1

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            self._expire()
            return dict(self._counts)

    def _expire(self) -> None:
        horizon = self.clock() - self.window_s
        while self._events and self._events[0][0] < horizon:
            _, ids = self._events.popleft()
            for node_id in ids:
                left = self._counts.get(node_id, 0) - 1
                if left > 0:
                    self._counts[node_id] = left
                else:
                    self._counts.pop(node_id, None)


def distinct_nodes(candidates: Iterable[Candidate]) -> int:
    return len({c.node_id for c in candidates})
