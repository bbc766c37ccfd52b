"""Which hops of a route another node could replay (attack 3 of issue 35).

A hop audit replays a hop on a second node whose shard *contains* the hop's layers
``[effective_start, end)`` (it stops inside its shard when it ends later:
``effective_end`` in the replay's ticket). A hop no other live node contains is
beyond audit; the route planner leaves such hops out of user routes while a route
without them exists (route_planner.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tracker_service.domain.route_formation import Candidate, NoRoute, Route


def can_replay(candidate: Candidate, start: int, end: int) -> bool:
    """This node's layers contain the hop ``[start, end)``."""
    return candidate.start <= start and end <= candidate.end


def replayable(node_id: str, start: int, end: int, candidates: Iterable[Candidate]) -> bool:
    """Some node other than the hop's own (and other than nodes on its route, which
    the auditor never asks) could replay it."""
    return any(c.node_id != node_id and can_replay(c, start, end) for c in candidates)


def unreplayable_hops(route: Route, candidates: Iterable[Candidate]) -> list[str]:
    """The nodes of this route whose hop no node off the route could replay."""
    on_route = set(route.node_ids)
    others = [c for c in candidates if c.node_id not in on_route]
    return [
        h.candidate.node_id
        for h in route.hops
        if not replayable(h.candidate.node_id, h.effective_start, h.candidate.end, others)
    ]


MAX_REFORMS = 4  # route formations a request may spend on leaving such hops out


def auditable_route(
    route: Route, candidates: Iterable[Candidate], form: Callable[[Iterable[str]], Route]
) -> Route:
    """``route``, or one formed without the nodes of its unreplayable hops
    (``form(left_out)`` forms another route without those nodes).

    A node no route can do without (a range it alone serves, as on the smallest
    network before a second node joins) stays: leaving the model unserved would
    not make its hop auditable either.
    """
    pool = list(candidates)
    left_out: list[str] = []
    needed: set[str] = set()
    best = route
    for _ in range(MAX_REFORMS):
        beyond = [n for n in unreplayable_hops(best, pool) if n not in needed]
        if not beyond:
            return best
        try:
            best = form([*left_out, beyond[0]])
            left_out.append(beyond[0])
        except NoRoute:
            needed.add(beyond[0])
    return best
