"""Which hops another node could replay (issue 35, attack 3)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from tracker_service.domain.auditability import auditable_route, unreplayable_hops
from tracker_service.domain.route_formation import Candidate, NoRoute, Route, RouteHop


def _c(node_id: str, start: int, end: int) -> Candidate:
    return Candidate(node_id, "ws://x", b"k", start, end, 1.0)


def _route(*hops: tuple[Candidate, int]) -> Route:
    return Route(4, tuple(RouteHop(c, s) for c, s in hops), 1.0)


HEAD, TAIL, ODD, WHOLE = _c("head", 0, 2), _c("tail", 2, 4), _c("odd", 0, 3), _c("whole", 0, 4)


def test_a_hop_is_replayable_by_any_node_off_the_route_whose_layers_contain_it() -> None:
    through_odd = _route((ODD, 0), (TAIL, 3))
    assert unreplayable_hops(through_odd, [HEAD, TAIL, ODD]) == ["odd", "tail"]
    assert unreplayable_hops(through_odd, [HEAD, TAIL, ODD, WHOLE]) == []
    # The head is contained by the odd node; the tail by nothing but itself.
    assert unreplayable_hops(_route((HEAD, 0), (TAIL, 2)), [HEAD, TAIL, ODD]) == ["tail"]


def test_serve_routes_leave_out_unreplayable_hops_while_a_route_without_them_exists() -> None:
    pool = [HEAD, TAIL, ODD]
    honest = _route((HEAD, 0), (TAIL, 2))

    def form(left_out: Iterable[str]) -> Route:
        out = set(left_out)
        if "tail" in out:
            raise NoRoute("no route without the tail")
        if "odd" in out:
            return honest
        return _route((ODD, 0), (TAIL, 3))

    # The odd node goes; the tail, which no route can do without, stays.
    assert auditable_route(form(()), pool, form) == honest
    with pytest.raises(NoRoute):
        form(["tail"])
