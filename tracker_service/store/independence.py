"""Who may judge whom: the standing of nodes that could audit or arbitrate a hop.

An auditor's or arbiter's word convicts a node, so the tracker picks them among
*established* nodes (a minimum of passed audits and of age since registration)
that share nothing an attacker's spare identities would share with a party: no
credit account (``credit_identities``), no network prefix of the registered
address (/24 for IPv4, /64 for IPv6, of the address the endpoint resolved to, so
one machine's many DNS names share one; a relayed node counts by the address it
registered from), and no invite of one operator's batch (an invite of at most
``INVITE_BATCH_MAX`` uses, ``invite_redemptions``: what a network operator hands
one contributor for their machines; a public link of many uses ties no one, or
a network joined through it would have no judges at all). Plain queries over a
Session; callers own the transaction.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from tracker_service.store.credit_tables import CreditIdentity
from tracker_service.store.invite_tables import Invite, InviteRedemption
from tracker_service.store.node_caps import cap_host
from tracker_service.store.tables import Node

# An invite of at most this many uses is one operator's batch: its nodes never judge
# each other. A larger one is a public link of the network's operator.
INVITE_BATCH_MAX = 8


@dataclass(frozen=True)
class Standing:
    """What independence and establishment are judged by, for one node."""

    node_id: str
    registered_at: float
    audits_passed: int
    account: str | None  # the credit account the identity linked itself to
    prefix: str | None  # the /24 or /64 of its address; None for loopback (one host, dev)
    invites: frozenset[int]  # the invites it redeemed

    def established(self, *, min_audits: int, min_age_s: float, now: float) -> bool:
        return self.audits_passed >= min_audits and now - self.registered_at >= min_age_s


def network_prefix(endpoint: str, relayed_from: str = "", resolved: str = "") -> str | None:
    """The /24 (IPv4) or /64 (IPv6) of a node's address; a host name stands for itself.

    The address is the one the node registered from when relayed, else the one its
    endpoint resolved to at registration (``resolved``; many DNS names of one machine
    are one prefix). Loopback gives None: nodes on one test or demo machine are told
    apart by their keys only (a public tracker admits no loopback endpoint).
    """
    return host_prefix(cap_host(endpoint, relayed_from, resolved))


def host_prefix(host: str) -> str | None:
    """The prefix of a stored ``Node.cap_host`` (an IPv4 address, an IPv6 /64, or a
    name registered before the tracker stored resolved addresses)."""
    if not host:
        return None
    try:
        network = ipaddress.ip_network(host, strict=False)
    except ValueError:
        return f"host:{host}"
    if network.is_loopback:
        return None
    bits = 24 if network.version == 4 else 64
    return str(network.supernet(new_prefix=bits)) if network.prefixlen > bits else str(network)


def standings(session: Session, node_ids: Iterable[str]) -> dict[str, Standing]:
    ids = list(dict.fromkeys(node_ids))
    if not ids:
        return {}
    rows = session.execute(
        select(
            Node.node_id,
            Node.registered_at,
            Node.audits_passed,
            Node.endpoint,
            Node.relayed_from,
            Node.cap_host,
        ).where(Node.node_id.in_(ids))
    ).all()
    accounts = dict(
        session.execute(
            select(CreditIdentity.node_id, CreditIdentity.account).where(
                CreditIdentity.node_id.in_(ids)
            )
        ).all()
    )
    invites: dict[str, set[int]] = {}
    for node_id, invite_id in session.execute(
        select(InviteRedemption.node_id, InviteRedemption.invite_id)
        .join(Invite, Invite.id == InviteRedemption.invite_id)
        .where(InviteRedemption.node_id.in_(ids), Invite.max_uses <= INVITE_BATCH_MAX)
    ):
        invites.setdefault(node_id, set()).add(int(invite_id))
    return {
        row.node_id: Standing(
            node_id=row.node_id,
            registered_at=float(row.registered_at or 0.0),
            audits_passed=int(row.audits_passed or 0),
            account=accounts.get(row.node_id),
            # cap_host: the resolved address registration stored, not the endpoint's name.
            prefix=host_prefix(row.cap_host or cap_host(row.endpoint, row.relayed_from or "")),
            invites=frozenset(invites.get(row.node_id, ())),
        )
        for row in rows
    }


def identity_standings(session: Session, node_ids: Iterable[str]) -> dict[str, Standing]:
    """Standings of identities that may not be registered nodes (batch-job executors):
    one absent from the node table is judged by its account and invites only."""
    ids = list(dict.fromkeys(node_ids))
    found = standings(session, ids)
    missing = [node_id for node_id in ids if node_id not in found]
    if not missing:
        return found
    accounts = dict(
        session.execute(
            select(CreditIdentity.node_id, CreditIdentity.account).where(
                CreditIdentity.node_id.in_(missing)
            )
        ).all()
    )
    invites: dict[str, set[int]] = {}
    for node_id, invite_id in session.execute(
        select(InviteRedemption.node_id, InviteRedemption.invite_id)
        .join(Invite, Invite.id == InviteRedemption.invite_id)
        .where(InviteRedemption.node_id.in_(missing), Invite.max_uses <= INVITE_BATCH_MAX)
    ):
        invites.setdefault(node_id, set()).add(int(invite_id))
    for node_id in missing:
        found[node_id] = Standing(
            node_id, 0.0, 0, accounts.get(node_id), None, frozenset(invites.get(node_id, ()))
        )
    return found


def independent(a: Standing, b: Standing) -> bool:
    """Nothing ties the two identities to one operator: account, prefix, invite."""
    if a.node_id == b.node_id:
        return False
    if a.account is not None and a.account == b.account:
        return False
    if a.prefix is not None and a.prefix == b.prefix:
        return False
    return not (a.invites & b.invites)


def independent_of_all(candidate: Standing, parties: Iterable[Standing | None]) -> bool:
    """Independent of every party; a party the store does not know ties nothing."""
    return all(p is None or independent(candidate, p) for p in parties)
