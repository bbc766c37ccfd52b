"""Route formation: chain live shards of one fingerprint into a full-model route.

Candidates come from exactly one fingerprint (artifact digest + recipe digest),
so a route can only ever be assembled inside one identity. A route covers
``[0, layer_count)`` with no hole; where two shards overlap, the later hop is
told where the previous one stopped (``effective_start``) and skips the layers
already computed.

Choice. Nodes serving the same range ("shape") are interchangeable, so the
search runs over shapes, not nodes: each shape is represented by one node,
drawn at random among those whose estimated cost lies within a slack band of
the best one (measured throughput, dial latency, current load and the routes
this tracker handed out recently). That spreads sessions over equivalent nodes
instead of always picking the same one, and keeps formation cheap: the search
is a shortest path over at most ``L (L + 1) / 2`` shapes and ``L + 1`` layer
boundaries, whatever the number of nodes. A certification route must cross at
least two distinct nodes; the search tracks the hop count for that.
"""

from __future__ import annotations

import random
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import NamedTuple

from tracker_service.recipe_identity import coverage_gap
from tracker_service.tickets import TicketHop

PURPOSE_SERVE = "serve"
PURPOSE_CERTIFY = "certify"


class NoRoute(Exception):
    """No chain of live, reachable shards covers the model; the message says where."""

    reason = "no-route"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


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
    throughput: float  # measured tokens/s through its whole shard; 0 = unknown
    load: float = 0.0
    open_sessions: int = 0


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
    unknown_throughput: float = 1.0  # tokens/s assumed for a node that reported none
    session_weight: float = 0.25  # each open (or recently assigned) session slows a node
    slack: float = 0.25  # nodes within 25 % of a shape's best count as equivalent


def node_cost_ms(
    candidate: Candidate,
    *,
    latency_ms: float | None,
    recent: int,
    policy: RoutingPolicy,
) -> tuple[float, float]:
    """(per-hop latency, ms to compute the node's whole shard for one token)."""
    throughput = candidate.throughput if candidate.throughput > 0 else policy.unknown_throughput
    load = candidate.load if candidate.load > 0.0 else 0.0  # not max(): called per candidate
    busy = 1.0 + load + policy.session_weight * (candidate.open_sessions + recent)
    hop_ms = policy.default_latency_ms if latency_ms is None else latency_ms
    return hop_ms, 1000.0 / throughput * busy


def _pick_representatives(
    candidates: Iterable[Candidate],
    *,
    latency_ms: Callable[[str], float | None],
    recent: Mapping[str, int],
    policy: RoutingPolicy,
    rng: random.Random,
) -> dict[tuple[int, int], tuple[Candidate, float, float]]:
    """One node per shape, drawn among the near-best: (node, hop ms, full-shard ms)."""
    shapes: dict[tuple[int, int], list[tuple[float, Candidate, float, float]]] = defaultdict(list)
    for c in candidates:
        hop_ms, compute_ms = node_cost_ms(
            c, latency_ms=latency_ms(c.node_id), recent=recent.get(c.node_id, 0), policy=policy
        )
        shapes[(c.start, c.end)].append((hop_ms + compute_ms, c, hop_ms, compute_ms))
    chosen: dict[tuple[int, int], tuple[Candidate, float, float]] = {}
    for shape, scored in shapes.items():
        best = min(map(itemgetter(0), scored))
        band = [entry for entry in scored if entry[0] <= best * (1.0 + policy.slack)]
        _, node, hop_ms, compute_ms = rng.choice(band)
        chosen[shape] = (node, hop_ms, compute_ms)
    return chosen


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
) -> Route:
    """The cheapest chain covering ``[0, layer_count)`` with at least `min_nodes` hops.

    Raises NoRoute stating the first uncovered layers (or why no chain of
    enough distinct nodes exists).
    """
    policy = policy or RoutingPolicy()
    excluded = set(exclude)
    usable = [
        c for c in candidates if c.node_id not in excluded and 0 <= c.start < c.end <= layer_count
    ]
    # Distinct ranges decide coverage; 10,000 nodes share a handful of them.
    gap = coverage_gap({(c.start, c.end) for c in usable}, layer_count)
    if gap is not None:
        raise NoRoute(f"no live reachable nodes cover the model: {gap.replace('Shard', 'node')}")
    shapes = _pick_representatives(
        usable,
        latency_ms=latency_ms,
        recent=recent or {},
        policy=policy,
        rng=rng or random.Random(),
    )
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
