"""A request that crashed (or whose settle failed) never gives its hold back: the hold
expires, the tracker's background sweep releases it, and the credit is spendable again;
a settle that comes after the sweep gives back nothing a newer request holds, and
spends only what is still free (a request kept open past its hold's expiry, its
credit re-reserved by others meanwhile, must not end in an overdraft)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.credit_claims import give_credit
from tests.tracker_service.helpers import FakeNode
from tests.tracker_service.store_backends import BACKENDS, fresh_database
from tracker_service.domain.credit_rules import AccountClaim
from tracker_service.services.background import Pruner
from tracker_service.services.credits import CreditLedger
from tracker_service.store import credits as ledger
from tracker_service.store.api_keys import add_api_key
from tracker_service.store.credit_balances import RESERVATION_TTL_S
from tracker_service.store.db import Database


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    db = fresh_database(request.param, tmp_path, "holds.db")
    yield db
    db.dispose()


def test_a_crashed_requests_hold_is_released_once_it_expires(database: Database) -> None:
    node, now = FakeNode(), time.time()
    with database.sessions.begin() as session:
        key, _ = add_api_key(session, label="ada", now=now)
        claim = AccountClaim("ada", "", "", (node.node_id,), int(now))
        ledger.save_claim(session, claim, now=now, key_id=key.id)
    give_credit(database, node.node_id, 1.0)
    credits = CreditLedger(database)
    crashed = credits.reserve(key.id, 0.8)  # the request dies: it never settles
    assert crashed is not None
    assert credits.reserve(key.id, 0.5) is None

    def sweep(at: float) -> None:  # the tracker's pruner pass (also its first, at startup)
        Pruner(
            database, poll_s=60, unreachable_after_s=60, dead_after_s=60, clock=lambda: at
        ).prune_once()

    sweep(time.time())  # not expired yet: still held
    assert credits.reserve(key.id, 0.5) is None
    sweep(time.time() + RESERVATION_TTL_S + 1)
    with database.session() as session:
        assert ledger.account_balance(session, "ada") == pytest.approx(1.0)
    fresh = credits.reserve(key.id, 0.9)
    assert fresh is not None  # spendable again

    assert credits.settle(crashed, 0.0) == 0.0  # the dead request's late settle
    assert credits.reserve(key.id, 0.2) is None  # frees none of the fresh hold
    assert credits.settle(fresh, 0.3) == pytest.approx(0.3)
    with database.session() as session:
        assert ledger.account_balance(session, "ada") == pytest.approx(0.7)


def test_a_request_settled_after_its_hold_expired_never_overdraws(database: Database) -> None:
    node, now = FakeNode(), time.time()
    with database.sessions.begin() as session:
        key, _ = add_api_key(session, label="ada", now=now)
        claim = AccountClaim("ada", "", "", (node.node_id,), int(now))
        ledger.save_claim(session, claim, now=now, key_id=key.id)
    give_credit(database, node.node_id, 1.0)
    credits = CreditLedger(database)
    slow = credits.reserve(key.id, 0.8)  # kept open past its hold's life
    assert slow is not None
    Pruner(
        database, poll_s=60, unreachable_after_s=60, dead_after_s=60,
        clock=lambda: time.time() + RESERVATION_TTL_S + 1,
    ).prune_once()  # fmt: skip
    others = credits.reserve(key.id, 1.0)  # the released credit, all of it, held again
    assert others is not None
    late = credits.settle(slow, 0.8)  # the slow request ends and used all it reserved
    assert credits.settle(others, 1.0) == pytest.approx(1.0)
    assert late == pytest.approx(0.0)  # nothing was free to spend
    with database.session() as session:
        assert ledger.account_balance(session, "ada") >= -1e-9  # no overdraft
    assert credits.spent <= 1.0 + 1e-9  # credit spent beyond earnings: 0
