"""Concurrent redeemers of one invite: the store admits exactly ``max_uses`` of them.

Redeeming read ``uses`` and wrote it back, so identities racing for the last use all
saw it free (7 of 10 trials let several in). Each round here starts its redeemers
together behind a barrier, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.tracker_service.store_backends import BACKENDS, fresh_database
from tracker_service.errors import InviteRefused
from tracker_service.store.db import Database
from tracker_service.store.invite_tables import Invite, InviteRedemption
from tracker_service.store.invites import add_invite, redeem_invite

REDEEMERS = 8
ROUNDS = 4
MAX_USES = 2


def _race(database: Database, code: str, round_no: int) -> list[str]:
    """Every redeemer's outcome: "ok" or the refusal's reason."""
    barrier = threading.Barrier(REDEEMERS)
    outcomes: list[str] = []
    lock = threading.Lock()

    def redeem(index: int) -> None:
        barrier.wait()
        try:
            with database.sessions.begin() as session:
                redeem_invite(session, code, node_id=f"node-{round_no}-{index}", now=time.time())
            outcome = "ok"
        except InviteRefused as refused:
            outcome = refused.reason
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=redeem, args=(i,)) for i in range(REDEEMERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return outcomes


@pytest.mark.parametrize("backend", BACKENDS)
def test_concurrent_redeemers_get_exactly_max_uses(backend: str, tmp_path: Path) -> None:
    database = fresh_database(backend, tmp_path)
    try:
        for round_no in range(ROUNDS):
            with database.sessions.begin() as session:
                invite, code = add_invite(
                    session, label=f"race {round_no}", now=time.time(), max_uses=MAX_USES
                )
                invite_id = invite.id
            outcomes = _race(database, code, round_no)
            assert len(outcomes) == REDEEMERS
            assert outcomes.count("ok") == MAX_USES, outcomes
            assert set(outcomes) == {"ok", "invite-used-up"}, outcomes
            with database.session() as session:
                stored = session.get(Invite, invite_id)
                assert stored is not None and stored.uses == MAX_USES
                bound = session.query(InviteRedemption).filter_by(invite_id=invite_id).count()
                assert bound == MAX_USES
    finally:
        database.dispose()
