"""A squat of ``pc-<victim>`` left from before names were owned: the squatter's API key
is linked to that account. When the victim claims its name, the key must go with the
squatter, or it would spend the victim's credit (and migration 0019 clears old squats)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from fastapi.testclient import TestClient

from tests.support.credit_claims import claim_body, give_credit, new_api_key, post_claim
from tests.tracker_service.conftest import register
from tests.tracker_service.helpers import FakeNode
from tests.tracker_service.store_backends import fresh_database
from tracker_service.store.api_keys import find_api_key
from tracker_service.store.credit_tables import CreditAccount, CreditIdentity, CreditKey
from tracker_service.store.db import MIGRATIONS_DIR, Database


def _squat(database: Database, account: str, squatter: str, key: str) -> int:
    """The rows a squat made before names were owned left behind."""
    now = time.time()
    with database.sessions.begin() as session:
        found = find_api_key(session, key)
        assert found is not None
        session.add(CreditAccount(account=account, created_at=now, updated_at=now))
        session.add(CreditIdentity(node_id=squatter, account=account, linked_at=now))
        session.add(CreditKey(key_id=found.id, account=account, linked_at=now))
        return found.id


def test_the_owners_claim_unlinks_the_squatters_key(client: TestClient) -> None:
    app = client.app
    database = app.state.tracker.database  # type: ignore[attr-defined]
    victim, squatter = FakeNode(), FakeNode(endpoint="ws://127.0.0.1:9002")
    assert register(client, victim).status_code == 200
    assert register(client, squatter).status_code == 200
    name = f"pc-{victim.node_id}"
    squat_key = new_api_key(database, "squatter")
    squat_key_id = _squat(database, name, squatter.node_id, squat_key)

    linked = post_claim(client, claim_body([victim], name))
    assert linked.status_code == 200, linked.text
    give_credit(database, victim.node_id, 5.0)

    with database.session() as session:
        keys = session.query(CreditKey).filter(CreditKey.account == name).all()
    assert keys == []  # the squatter's key is linked to nothing
    ledger = app.state.gateway.credits  # type: ignore[attr-defined]
    deadline = time.monotonic() + 10  # the ledger re-reads its links every 2 s
    while ledger.account_of(squat_key_id) is not None:
        assert time.monotonic() < deadline, "the squatter's key stayed linked"
        time.sleep(0.05)
    assert ledger.reserve(squat_key_id, 0.1) is None  # spends none of the victim's credit


def _migrate(db: Database, revision: str, *, down: bool = False) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    with db.engine.begin() as connection:
        config.attributes["connection"] = connection
        (command.downgrade if down else command.upgrade)(config, revision)


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    db = fresh_database("sqlite", tmp_path, "squats.db")
    yield db
    db.dispose()


def test_migration_0019_unlinks_squats_made_before_names_were_owned(database: Database) -> None:
    victim, squatter, owner = FakeNode(), FakeNode(), FakeNode()
    squatted, owned = f"pc-{victim.node_id}", f"pc-{owner.node_id}"
    _migrate(database, "0018", down=True)
    _squat(database, squatted, squatter.node_id, new_api_key(database, "squatter"))
    owner_key = _squat(database, owned, owner.node_id, new_api_key(database, "owner"))
    _migrate(database, "head")
    with database.session() as session:
        identities = {(i.node_id, i.account) for i in session.query(CreditIdentity)}
        keys = {(k.key_id, k.account) for k in session.query(CreditKey)}
    assert identities == {(owner.node_id, owned)}  # the owner's own account is kept
    assert keys == {(owner_key, owned)}
