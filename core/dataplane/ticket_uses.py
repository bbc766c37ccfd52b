"""One session per hop per ticket.

A route ticket is free to ask for (``POST /api/v1/routes``) and lives for
minutes; if a node let one ticket open any number of sessions, one request to
the tracker would buy unbounded work from every node on the route. So a node
remembers each ticket it opened a session for, until the ticket expires (after
which the ticket is refused anyway), and refuses a second open with
``bad-ticket``. A client that needs another session asks for another route.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from core.dataplane.tickets import RouteTicket
from core.errors import TicketError


class TicketUses:
    """Tickets already spent on this node; memory bounded by the ticket lifetime."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._spent: dict[tuple[str, int, float], float] = {}

    def __len__(self) -> int:
        return len(self._spent)

    def claim(self, ticket: RouteTicket) -> None:
        """Record `ticket` as used here, or refuse it if it already was."""
        now = self._clock()
        for key in [k for k, expires in self._spent.items() if expires < now]:
            del self._spent[key]
        key = (ticket.route_session_id, ticket.epoch, ticket.expires_at)
        if key in self._spent:
            raise TicketError(
                f"route ticket {ticket.route_session_id} (epoch {ticket.epoch}) already opened "
                "a session on this node; ask the tracker for a new route"
            )
        self._spent[key] = ticket.expires_at
