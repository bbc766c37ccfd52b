"""Route planning: ledger gate, candidate query, formation, signed ticket.

``RoutePlanner.plan`` is blocking (database); async callers run it in a thread.
A recipe must be certified to be routed for ``serve``; a dark one only for
``certify``, the certifier's own purpose (``RecipeStatus.may_serve`` /
``may_certify``). A serve route never goes through a node in an open audit
dispute (disputes.py); with no route left without them, the NoRoute message
says which nodes disagree and that an arbiter is awaited. Nodes are costed at the
speed the tracker measured of them (services/speed_meter.py): every plan it signs
times its hops' steps for that meter.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from tracker_service.domain.auditability import auditable_route
from tracker_service.domain.keys import TrackerKey
from tracker_service.domain.recipe_identity import RecipeStatus
from tracker_service.domain.route_formation import (
    PURPOSE_CERTIFY,
    PURPOSE_SERVE,
    Candidate,
    CandidatePool,
    RecentAssignments,
    Route,
    RoutingPolicy,
)
from tracker_service.domain.tickets import NextHop, TicketHop, issue_ticket
from tracker_service.errors import NoRoute, RouteRefused
from tracker_service.relay.directory import relay_of
from tracker_service.services.candidate_cache import DEFAULT_MAX_AGE_S, CandidateCache
from tracker_service.services.certify_route import early_ended_plan
from tracker_service.services.disputes import DisputeBoard
from tracker_service.services.route_session import PlannedHop, RoutePlan
from tracker_service.services.speed_meter import SpeedMeter
from tracker_service.store.db import Database
from tracker_service.store.quarantine import past_probation
from tracker_service.store.route_candidates import Key, RecipeInfo

log = logging.getLogger(__name__)

UNKNOWN_RECIPE = "unknown-recipe"
RECIPE_DARK = "recipe-dark"
BAD_PURPOSE = "bad-purpose"


def check_purpose(info: RecipeInfo | None, purpose: str) -> RecipeInfo:
    """The ledger's gate: serve needs certified, certify needs dark or certified."""
    if purpose not in (PURPOSE_SERVE, PURPOSE_CERTIFY):
        raise RouteRefused(BAD_PURPOSE, f"purpose must be serve or certify, got {purpose!r}")
    if info is None:
        raise RouteRefused(UNKNOWN_RECIPE, "no node has registered this recipe with the tracker")
    status = RecipeStatus(info.status)
    if purpose == PURPOSE_SERVE and not status.may_serve:
        raise RouteRefused(
            RECIPE_DARK,
            f"recipe {info.recipe_id} of {info.artifact_id} is {info.status}: it serves users "
            "only after a distributed forward certifies it",
        )
    if purpose == PURPOSE_CERTIFY and not status.may_certify:
        raise RouteRefused(UNKNOWN_RECIPE, f"a recipe that is {status.status} cannot be certified")
    return info


class RoutePlanner:
    def __init__(
        self,
        database: Database,
        key: TrackerKey,
        *,
        ticket_ttl_s: float,
        latency_ms: Callable[[str], float | None] | None = None,
        latencies: Callable[[], Mapping[str, float]] | None = None,
        policy: RoutingPolicy | None = None,
        assignments: RecentAssignments | None = None,
        rng: random.Random | None = None,
        candidate_max_age_s: float = DEFAULT_MAX_AGE_S,
        disputes: DisputeBoard | None = None,
        speeds: SpeedMeter | None = None,
        probation_audits: int | None = None,
    ) -> None:
        self._db = database
        # A hop no other node can replay serves users only through a node that left
        # probation (``probation_audits`` passed audits); None: through any node (a
        # network whose operator runs every node, or one with audits off).
        self._probation_audits = probation_audits
        # What the tracker's own sessions time of each node: the speed routes weigh.
        self.speeds = speeds or SpeedMeter(database)
        self._disputes = disputes
        # Candidate lists per fingerprint, re-read when the recipe's routing version
        # moves or a cached window ends (candidate_cache.py).
        self.cache = CandidateCache(database, max_age_s=candidate_max_age_s)
        self._key = key
        self._ttl_s = ticket_ttl_s
        self._latency_ms = latency_ms
        # The measured hop latencies in one mapping per request (nodes absent weigh the
        # default): one call instead of one per candidate.
        self._latencies = latencies
        # One CandidatePool per cached candidate list, rebuilt when the list is re-read.
        self._pools: dict[Key, CandidatePool] = {}
        self._pools_guard = threading.Lock()
        self._policy = policy or RoutingPolicy()
        self.assignments = assignments or RecentAssignments()
        self._rng = rng or random.Random()

    def candidates(
        self, key: Key, *, now: float | None = None
    ) -> tuple[RecipeInfo | None, list[Candidate]]:
        return self.cache.get(key, now=now)

    def plan(
        self,
        key: Key,
        *,
        purpose: str = PURPOSE_SERVE,
        min_nodes: int = 1,
        exclude: Iterable[str] = (),
        prefer: Iterable[str] = (),
        prefer_slack: float | None = None,
    ) -> RoutePlan:
        """Form a route and sign its ticket. Raises RouteRefused or NoRoute.

        `prefer`: nodes to take while they cost at most `prefer_slack` more than the best
        of their range (the gateway names those that served the prompt's prefix and weighs
        what their caches spare: prefix_affinity.py)."""
        info, candidates = self.cache.shared(key)
        if info is None:
            with self._pools_guard:  # the recipe is gone: so is its pool
                self._pools.pop(key, None)
        info = check_purpose(info, purpose)
        disputed = frozenset[str]()
        if purpose == PURPOSE_SERVE and self._disputes is not None:
            disputed = self._disputes.withdrawn(key)

        def form(left_out: Iterable[str] = ()) -> Route:
            return self.pool(key, candidates).form(
                info.layer_count,
                min_nodes=min_nodes,
                exclude=[*exclude, *disputed, *left_out],
                latency=self._latency_map(candidates),
                recent=self.assignments.snapshot(),
                rng=self._rng,
                prefer=frozenset(prefer),
                prefer_slack=prefer_slack,
            )

        try:
            route = form()
            if purpose == PURPOSE_SERVE:
                # a node in a dispute replays no one meanwhile (hop_audit.Auditor.judges)
                replayers = [c for c in candidates if c.node_id not in disputed]
                route = auditable_route(route, replayers, form, self.vouched)
        except NoRoute as exc:
            why = self._disputes.sentence(key) if disputed and self._disputes else None
            if why is None:
                raise
            raise NoRoute(f"{why} ({exc.message})") from exc
        plan = self.sign(route, key)
        self.assignments.add(route.node_ids)
        log.info(
            "route %s for %s (%s): %s",
            plan.route_session_id,
            info.recipe_id,
            purpose,
            " -> ".join(f"{h.node_id[:8]}[{h.effective_start},{h.end})" for h in plan.hops),
        )
        return plan

    def plan_early_ended(self, key: Key, *, exclude: Iterable[str] = ()) -> RoutePlan:
        """A certify route whose hops may stop inside their shards (certify_route.py):
        what certifies nodes that each hold the whole model. Raises RouteRefused or NoRoute."""
        info, candidates = self.cache.shared(key)
        info = check_purpose(info, PURPOSE_CERTIFY)
        plan = early_ended_plan(
            info.layer_count, candidates, key, self._key, ttl_s=self._ttl_s, exclude=exclude
        )
        self.assignments.add([h.node_id for h in plan.hops])
        log.info(
            "route %s for %s (certify, early-ended): %s",
            plan.route_session_id,
            info.recipe_id,
            " -> ".join(f"{h.node_id[:8]}[{h.effective_start},{h.end})" for h in plan.hops),
        )
        return replace(plan, on_step=self.speeds.timer(key[0]))

    def vouched(self, node_ids: list[str]) -> set[str]:
        """Blocking: the nodes the ledger lets serve a hop nobody else can replay."""
        if self._probation_audits is None:
            return set(node_ids)
        with self._db.session() as session:
            return past_probation(session, node_ids, self._probation_audits)

    def pool(self, key: Key, candidates: tuple[Candidate, ...]) -> CandidatePool:
        """The pool of this candidate list: built once per list the cache reads."""
        pool = self._pools.get(key)
        if pool is None or pool.source is not candidates:
            # Costed at what the tracker measured of them, read with the same list.
            pool = CandidatePool(candidates, self._policy, self.cache.measured(key))
            with self._pools_guard:
                self._pools[key] = pool
        return pool

    def _latency_map(self, candidates: tuple[Candidate, ...]) -> Mapping[str, float]:
        if self._latencies is not None:
            return self._latencies()
        measure = self._latency_ms
        if measure is None:
            return {}
        return {c.node_id: ms for c in candidates if (ms := measure(c.node_id)) is not None}

    def sign(self, route: Route, key: Key) -> RoutePlan:
        plan = plan_for(route, key, self._key, ttl_s=self._ttl_s)
        return replace(plan, on_step=self.speeds.timer(key[0]))


def plan_for(route: Route, fingerprint: Key, tracker_key: TrackerKey, *, ttl_s: float) -> RoutePlan:
    """A formed route with a freshly signed ticket: what a route client runs."""
    signed = issue_ticket(tracker_key, fingerprint=fingerprint, hops=chain_hops(route), ttl_s=ttl_s)
    return RoutePlan.from_ticket(
        signed,
        fingerprint=fingerprint,
        layer_count=route.layer_count,
        hops=tuple(
            PlannedHop(
                node_id=h.candidate.node_id,
                start=h.candidate.start,
                end=h.candidate.end,
                effective_start=h.effective_start,
                endpoint=h.candidate.endpoint,
                public_key=h.candidate.public_key,
                tls_pin=h.candidate.tls_pin,
            )
            for h in route.hops
        ),
    )


def chain_hops(route: Route) -> list[TicketHop]:
    """The ticket's hops, each naming its successor when the route may run as a chain
    (docs/wire.md#chained-hops): wherever every hop after the first is dialled directly.
    A node behind a relay takes no link from another node, so a route through one runs
    as a star, the client carrying each hop's output through the relay."""
    hops = [h.ticket_hop for h in route.hops]
    direct = all(relay_of(h.candidate.endpoint) is None for h in route.hops[1:])
    if len(hops) < 2 or not direct:
        return hops
    chained = [
        replace(hop, next=NextHop(after.candidate.endpoint, after.candidate.tls_pin))
        for hop, after in zip(hops, route.hops[1:], strict=False)
    ]
    return [*chained, hops[-1]]
