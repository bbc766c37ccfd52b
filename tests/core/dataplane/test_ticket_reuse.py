"""A route ticket opens one session per hop: a second open with the same ticket
on the same node is refused as bad-ticket, while the first session is open and
after it closed."""

from __future__ import annotations

import asyncio

import pytest

from core.dataplane import wire
from core.dataplane.ticket_uses import TicketUses
from core.dataplane.tickets import RouteTicket
from core.errors import ProtocolError, TicketError
from tests.core.dataplane.conftest import Key, Node, route_hops, ticket_for
from tests.support.hop_client import HopClient


def test_a_ticket_opens_one_session_per_hop(nodes: tuple[Node, Node], tracker_key: Key) -> None:
    a, b = nodes
    ticket = ticket_for(tracker_key, route_hops(a, b))

    async def scenario() -> tuple[str, str]:
        async with HopClient(a.url) as first, HopClient(b.url) as other_hop:
            await first.open(ticket, 8)
            await other_hop.open(ticket, 8)  # the same ticket's other hop is fine
            with pytest.raises(ProtocolError) as while_open:
                async with HopClient(a.url) as again:
                    await again.open(ticket, 8)
            await first.close()
            await other_hop.close()
        with pytest.raises(ProtocolError) as after_close:
            async with HopClient(a.url) as later:
                await later.open(ticket, 8)
        return while_open.value.reason, after_close.value.reason

    assert asyncio.run(scenario()) == (wire.BAD_TICKET, wire.BAD_TICKET)


def test_spent_tickets_are_forgotten_once_they_expire() -> None:
    now = [1000.0]
    uses = TicketUses(clock=lambda: now[0])
    ticket = RouteTicket("route-x", 1, 1060.0, {}, ())
    uses.claim(ticket)
    with pytest.raises(TicketError):
        uses.claim(ticket)
    now[0] = 1061.0
    uses.claim(RouteTicket("route-y", 1, 1200.0, {}, ()))
    assert len(uses) == 1  # route-x is gone: memory bounded by the ticket lifetime
