"""Who may judge whom (issue 35, attack 6): prefixes, accounts, invites, establishment."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient

from tests.tracker_service.conftest import register
from tests.tracker_service.helpers import FakeNode
from tracker_service.app import create_app
from tracker_service.store.credit_tables import CreditIdentity
from tracker_service.store.independence import (
    Standing,
    independent,
    network_prefix,
    standings,
)
from tracker_service.store.invites import add_invite, redeem_invite
from tracker_service.store.quarantine import record_audit_passed


def test_prefixes_are_the_24_or_64_of_the_registered_address() -> None:
    assert network_prefix("wss://203.0.113.7:443") == "203.0.113.0/24"
    assert network_prefix("wss://203.0.113.200:7000") == "203.0.113.0/24"
    assert network_prefix("wss://[2001:db8:1:2::5]:443") == "2001:db8:1:2::/64"
    assert network_prefix("wss://node.example.org:443") == "host:node.example.org"
    # A relayed node counts by the address it registered from, not the relay's.
    assert network_prefix("wss://relay.example/relay/abc", "198.51.100.9") == "198.51.100.0/24"
    assert network_prefix("ws://127.0.0.1:9001") is None  # one test machine: keys only


def _standing(node_id: str, **kw: object) -> Standing:
    base: dict[str, object] = {
        "registered_at": 0.0,
        "audits_passed": 0,
        "account": None,
        "prefix": None,
        "invites": frozenset(),
    }
    base.update(kw)
    return Standing(node_id, **base)  # type: ignore[arg-type]


def test_one_shared_account_prefix_or_invite_ties_two_identities() -> None:
    a = _standing("a", account="acct", prefix="203.0.113.0/24", invites=frozenset({1}))
    assert independent(a, _standing("b"))
    assert not independent(a, a)
    assert not independent(a, _standing("b", account="acct"))
    assert not independent(a, _standing("b", prefix="203.0.113.0/24"))
    assert not independent(a, _standing("b", invites=frozenset({1, 2})))
    assert independent(a, _standing("b", account="other", prefix="198.51.100.0/24"))
    old = _standing("c", registered_at=100.0, audits_passed=5)
    assert old.established(min_audits=5, min_age_s=50, now=200.0)
    assert not old.established(min_audits=6, min_age_s=50, now=200.0)
    assert not old.established(min_audits=5, min_age_s=150, now=200.0)


def test_standings_read_accounts_invites_and_addresses_from_the_tracker(
    settings: object,
) -> None:
    app = create_app(settings)  # type: ignore[arg-type]
    database = app.state.tracker.database
    nodes = [FakeNode(endpoint=f"ws://10.0.{i}.5:9001") for i in range(4)]
    with TestClient(app) as client:
        for node in nodes:
            assert register(client, node).status_code == 200
        now = time.time()
        with database.sessions.begin() as session:
            _, code = add_invite(session, label="batch", now=now, max_uses=2)
            redeem_invite(session, code, node_id=nodes[0].node_id, now=now)
            redeem_invite(session, code, node_id=nodes[1].node_id, now=now)
            session.add(CreditIdentity(node_id=nodes[2].node_id, account="acct", linked_at=now))
            # A public link of the network's operator ties no one.
            _, public = add_invite(session, label="public link", now=now, max_uses=100)
            for node in (nodes[2], nodes[3]):
                redeem_invite(session, public, node_id=node.node_id, now=now)
            record_audit_passed(session, [nodes[2].node_id])
        with database.session() as session:
            found = standings(session, [n.node_id for n in nodes])
    a, b, c, d = (found[n.node_id] for n in nodes)
    assert independent(c, d) and c.invites == frozenset()
    assert (a.prefix, c.prefix) == ("10.0.0.0/24", "10.0.2.0/24")
    assert a.invites == b.invites and not independent(a, b)  # one batch of invites
    assert independent(a, c) and c.account == "acct" and c.audits_passed == 1
    database.dispose()
