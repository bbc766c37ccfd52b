"""Which hops of a route another node could replay (attack 3 of issue 35).

A hop audit replays a hop on a second node whose shard *contains* the hop's layers
``[effective_start, end)`` (it stops inside its shard when it ends later:
``effective_end`` in the replay's ticket). A hop no other live node contains is
beyond audit: no user is served through it (docs/trust.md#no-hop-beyond-audit).
The route planner forms a route without such hops while one exists; with none, the
request is refused (503, the sentence saying which layers wait for a second node),
except through a node the ledger vouches for: one that has left probation
(``vouched``), as on the smallest network after its third node is quarantined.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tracker_service.domain.route_formation import Candidate, Route
from tracker_service.errors import NoRoute, Unreplayable


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

Vouched = Callable[[list[str]], set[str]]


def _nobody(node_ids: list[str]) -> set[str]:
    return set()


def auditable_route(
    route: Route,
    candidates: Iterable[Candidate],
    form: Callable[[Iterable[str]], Route],
    vouched: Vouched = _nobody,
) -> Route:
    """``route``, or one formed without the nodes of its unreplayable hops
    (``form(left_out)`` forms another route without those nodes).

    A node no route can do without (a range it alone holds) stays only when
    ``vouched(nodes)`` names it (the planner's: nodes that left probation, or every
    node on a network whose operator runs them all); otherwise :class:`Unreplayable`.
    """
    pool = list(candidates)
    left_out: list[str] = []
    needed: set[str] = set()
    best = route
    for _ in range(MAX_REFORMS):
        beyond = [n for n in unreplayable_hops(best, pool) if n not in needed]
        if not beyond:
            break
        try:
            best = form([*left_out, beyond[0]])
            left_out.append(beyond[0])
        except NoRoute:
            needed.add(beyond[0])
    beyond = unreplayable_hops(best, pool)
    if not beyond:
        return best
    unvouched = [n for n in beyond if n not in vouched(beyond)]
    if not unvouched:
        return best
    hops = [h for h in best.hops if h.candidate.node_id in unvouched]
    where = ", ".join(
        f"layers {h.effective_start}-{h.candidate.end} (node {h.candidate.node_id[:8]})"
        for h in hops
    )
    raise Unreplayable(
        f"{where}: held by no other node that could check its answers, and a new node's "
        "answers reach users only when they can be checked; this model serves again once "
        "a second node holds those layers"
    )
