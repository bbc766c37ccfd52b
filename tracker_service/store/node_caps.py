"""How many live nodes name one host as their endpoint.

The tracker dials every registered endpoint (reachability, certification,
gateway sessions), so a thousand registrations pointing at one host would turn
the tracker into an amplifier against it, and one machine posing as many nodes
would skew routing. Registration caps live nodes per endpoint host, counted by
the address the host resolved to at registration (one machine under many DNS
names is one host); a node re-registering does not count against itself.

A relayed node's endpoint names the relay's host, shared by every node of that
relay, so it is counted by the address it registered from instead
(``relayed_from``): registration goes straight to the tracker, so that is the
node's own address as the tracker saw it, which no relay has to vouch for.
One machine's direct and relayed nodes share one count.

An address counts as its group (domain/address_groups.py): an IPv6 host by its
/64, so one machine cannot pose as many hosts from the addresses of its /64.

Registration stores that host in the node's indexed ``cap_host`` column, so
the count is an index range scan (host, state, live window), not a pattern
match over every live node's endpoint.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tracker_service.domain.address_groups import address_group
from tracker_service.store.tables import NODE_ACTIVE, Node


def cap_host(endpoint: str, relayed_from: str = "", resolved: str = "") -> str:
    """The host the cap counts a node by: the address a relayed node registered from,
    else the address its endpoint resolved to at registration (many DNS names of one
    machine are one host), else its endpoint's host (lower case; an IPv6 address as
    its /64); "" when none."""
    if relayed_from:
        host = relayed_from.lower()
    elif resolved:
        host = resolved.lower()
    else:
        try:
            host = urlsplit(endpoint).hostname or ""
        except ValueError:  # an unbalanced IPv6 bracket: policy refuses it anyway
            host = ""
    return address_group(host) if host else ""


def live_nodes_at_host(session: Session, host: str, *, now: float, other_than: str) -> int:
    """Live, active nodes other than `other_than` at `host`: direct nodes whose endpoint's
    host it is, relayed nodes that registered from it."""
    query = select(func.count()).where(
        Node.cap_host == (address_group(host.lower()) if host else ""),
        Node.state == NODE_ACTIVE,
        Node.live_until >= now,
        Node.node_id != other_than,
    )
    return int(session.execute(query).scalar_one())
