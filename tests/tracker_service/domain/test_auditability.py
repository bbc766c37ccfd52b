"""Which hops another node could replay (issue 35, attack 3)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from tracker_service.domain.auditability import auditable_route, unreplayable_hops
from tracker_service.domain.route_formation import Candidate, Route, RouteHop
from tracker_service.errors import NoRoute, Unreplayable


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

    # The odd node goes; the tail, which no route can do without, stays while the ledger
    # vouches for it, and is refused otherwise.
    assert auditable_route(form(()), pool, form, lambda ids: set(ids)) == honest
    with pytest.raises(Unreplayable):
        auditable_route(form(()), pool, form)
    with pytest.raises(NoRoute):
        form(["tail"])


def _form_only(route: Route) -> Callable[[Iterable[str]], Route]:
    def form(left_out: Iterable[str]) -> Route:
        if set(left_out) & set(route.node_ids):
            raise NoRoute("no route without it")
        return route

    return form


def test_a_range_only_one_node_holds_serves_only_through_a_node_the_ledger_vouches_for() -> None:
    lone = _route((HEAD, 0), (TAIL, 2))  # nobody else holds 0-2 or 2-4
    with pytest.raises(Unreplayable) as refused:
        auditable_route(lone, [HEAD, TAIL], _form_only(lone))
    assert "layers 0-2 (node head)" in refused.value.message
    assert "layers 2-4 (node tail)" in refused.value.message
    assert refused.value.reason == "unreplayable"
    # Vouched for (past probation, or the operator runs every node): it serves.
    assert auditable_route(lone, [HEAD, TAIL], _form_only(lone), lambda ids: set(ids)) == lone
    # One vouched, one not: still refused, naming only the other.
    with pytest.raises(Unreplayable) as half:
        auditable_route(lone, [HEAD, TAIL], _form_only(lone), lambda ids: {"head"})
    assert "head" not in half.value.message and "layers 2-4 (node tail)" in half.value.message


def test_the_smallest_networks_replay_each_other() -> None:
    # Two nodes that each hold the whole model.
    other = _c("whole-2", 0, 4)
    alone = _route(
        (WHOLE, 0),
    )
    assert auditable_route(alone, [WHOLE, other], _form_only(alone)) == alone
    # Two nodes on each range.
    head2, tail2 = _c("head-2", 0, 2), _c("tail-2", 2, 4)
    pair = _route((HEAD, 0), (TAIL, 2))
    assert auditable_route(pair, [HEAD, TAIL, head2, tail2], _form_only(pair)) == pair
