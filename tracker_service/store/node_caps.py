"""How many live nodes name one host as their endpoint.

The tracker dials every registered endpoint (reachability, certification,
gateway sessions), so a thousand registrations pointing at one host would turn
the tracker into an amplifier against it, and one machine posing as many nodes
would skew routing. Registration caps live nodes per endpoint host; a node
re-registering does not count against itself.

A relayed node's endpoint names the relay's host, shared by every node of that
relay, so it is counted by the address it registered from instead
(``relayed_from``): registration goes straight to the tracker, so that is the
node's own address as the tracker saw it, which no relay has to vouch for.
One machine's direct and relayed nodes share one count.
"""

from __future__ import annotations

from sqlalchemy import and_, func, or_, select
from sqlalchemy.orm import Session

from tracker_service.store.tables import NODE_ACTIVE, Node


def _like_literal(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def live_nodes_at_host(session: Session, host: str, *, now: float, other_than: str) -> int:
    """Live, active nodes other than `other_than` at `host`: direct nodes whose endpoint's
    host it is, relayed nodes that registered from it."""
    literal = _like_literal(host.lower())
    query = select(func.count()).where(
        Node.state == NODE_ACTIVE,
        Node.live_until >= now,
        Node.node_id != other_than,
        or_(
            and_(
                Node.relayed_from == "",
                or_(
                    func.lower(Node.endpoint).like(f"%://{literal}:%", escape="\\"),
                    func.lower(Node.endpoint).like(f"%://[{literal}]:%", escape="\\"),
                ),
            ),
            func.lower(Node.relayed_from) == host.lower(),
        ),
    )
    return int(session.execute(query).scalar_one())
