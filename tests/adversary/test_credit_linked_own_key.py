"""A contributor links an API key to a throwaway one-identity account and sends requests
through its own nodes from their address: still own traffic, so they earn nothing."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tracker_service.helpers import FakeNode, identity_block
from tests.tracker_service.store_backends import fresh_database
from tracker_service.domain.credit_rules import AccountClaim
from tracker_service.domain.recipe_identity import parse_identity
from tracker_service.domain.tickets import HopReceipt
from tracker_service.services import credit_policy
from tracker_service.services.credits import CreditLedger
from tracker_service.services.session_plan import RoutePlan
from tracker_service.store import credits as ledger
from tracker_service.store.api_keys import add_api_key
from tracker_service.store.db import Database
from tracker_service.store.nodes import Liveness, register_node

HOME = "203.0.113.7"


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    db = fresh_database("sqlite", tmp_path, "own.db")
    yield db
    db.dispose()


def _register(db: Database, node: FakeNode) -> None:
    with db.sessions.begin() as session:
        register_node(
            session,
            node_id=node.node_id,
            public_key=node.public_raw,
            endpoint=node.endpoint,
            identity=parse_identity(identity_block(0, 30)),
            capability={"passed": True},
            throughput=10.0,
            now=time.time(),
            liveness=Liveness(live_window_s=30.0, session_ttl_s=900.0),
        )


def test_a_key_linked_to_a_throwaway_account_from_the_nodes_address_earns_nothing(
    database: Database,
) -> None:
    server, throwaway = FakeNode(endpoint=f"ws://{HOME}:7000"), FakeNode()
    _register(database, server)
    now = time.time()
    with database.sessions.begin() as session:
        key, _ = add_api_key(session, label="self-dealer", now=now)
        claim = AccountClaim("throwaway", "", "", (throwaway.node_id,), int(now))
        ledger.save_claim(session, claim, now=now, key_id=key.id)
    credits = CreditLedger(database)
    plan = RoutePlan("route-1", 1, now + 60, ("a" * 64, "b" * 64), 30, (), {})
    receipt = HopReceipt("route-1", 1, server.node_id, 0, 30, steps=5, tokens=40, signed={})

    asyncio.run(credits.credit_receipts(plan, [receipt], key_id=key.id, caller_host=HOME))

    with database.session() as session:
        board = {r.id: r for r in credit_policy.leaderboard(session, kind="identity", now=now)}
    row = board[server.node_id].identities[0]
    assert row.own_hops == 1 and row.total == 0.0  # no credit for own traffic
