"""The store against SQLite and a real PostgreSQL (MESHNET_TEST_POSTGRES_URL)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, select, text

from tests.tracker_service.helpers import FakeNode, identity_block
from tests.tracker_service.store_backends import (
    BACKENDS,
    fresh_database,
)
from tests.tracker_service.store_rows import heartbeat_values, register_in_store
from tracker_service.domain.recipe_identity import (
    DARK_DETAIL,
    DistributedForwardEvidence,
    RecipeIdentityError,
    parse_identity,
)
from tracker_service.store.db import MIGRATIONS_DIR, Database
from tracker_service.store.heartbeats import HeartbeatWriter
from tracker_service.store.ledger import PersistentLedger, evidence_for, get_recipe
from tracker_service.store.nodes import (
    Liveness,
    end_registration,
    live_nodes_for_fingerprint,
    record_heartbeat,
    set_reachability,
)
from tracker_service.store.nonces import purge_spent_nonces, spend_nonce
from tracker_service.store.tables import Base, CertificationEvidence, JoinToken, Node
from tracker_service.store.tokens import add_join_token, hash_token, use_join_token

LIVENESS = Liveness(live_window_s=30.0, session_ttl_s=900.0)


def _alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    db = fresh_database(request.param, tmp_path, "store.db")
    yield db
    db.dispose()


def test_migrations_build_exactly_the_models_schema(database: Database) -> None:
    with database.engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert diff == []
    indexes = {ix["name"] for ix in inspect(database.engine).get_indexes("nodes")}
    assert "ix_nodes_route" in indexes


def test_migrating_twice_is_harmless(database: Database) -> None:
    database.migrate()
    with database.engine.connect() as connection:
        version = connection.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
    head = ScriptDirectory.from_config(_alembic_config()).get_current_head()
    assert version == head


def test_live_nodes_are_partitioned_by_exact_fingerprint(database: Database) -> None:
    now = time.time()
    fp32 = parse_identity(identity_block(0, 15))
    fp32_tail = parse_identity(identity_block(15, 30))
    fp16 = parse_identity(identity_block(0, 30, compute_dtype="float16"))
    a, b, c, gone = FakeNode(), FakeNode(), FakeNode(), FakeNode()
    register_in_store(database, a, now, identity=fp32)
    register_in_store(database, b, now, identity=fp32_tail)
    register_in_store(database, c, now, identity=fp16)
    register_in_store(database, gone, now, identity=fp32)
    with database.sessions.begin() as session:
        end_registration(session, gone.node_id, "deregistered", "stopped")
        set_reachability(session, b.node_id, status="reachable", reason="challenge ok", now=now)
        found = live_nodes_for_fingerprint(session, *fp32.key, now=now)
        reachable = live_nodes_for_fingerprint(session, *fp32.key, now=now, reachable_only=True)
        later = live_nodes_for_fingerprint(session, *fp32.key, now=now + 31)
    assert {n.node_id for n in found} == {a.node_id, b.node_id}
    assert [n.node_id for n in reachable] == [b.node_id]
    assert later == []


def test_heartbeat_is_refused_once_the_live_window_has_passed(database: Database) -> None:
    now = time.time()
    node = FakeNode()
    register_in_store(database, node, now, identity=parse_identity(identity_block()))
    beat: dict[str, Any] = {"load": 0.1, "open_sessions": 0, "tokens_served": 5, "throughput": None}
    with database.engine.begin() as conn:
        in_time = record_heartbeat(conn, node.node_id, now=now + 20, liveness=LIVENESS, **beat)
        too_late = record_heartbeat(conn, node.node_id, now=now + 51, liveness=LIVENESS, **beat)
        unknown = record_heartbeat(conn, "f" * 32, now=now, liveness=LIVENESS, **beat)
    assert in_time == pytest.approx(now + 20 + 900)
    assert too_late is None and unknown is None


def test_a_nonce_is_spent_once_per_node_and_purged_when_stale(database: Database) -> None:
    with database.engine.begin() as conn:
        assert spend_nonce(conn, "a" * 32, "00" * 16, expires_at=100.0)
        assert not spend_nonce(conn, "a" * 32, "00" * 16, expires_at=100.0)
        assert spend_nonce(conn, "b" * 32, "00" * 16, expires_at=300.0)
        assert purge_spent_nonces(conn, now=200.0) == 1
        assert spend_nonce(conn, "a" * 32, "00" * 16, expires_at=400.0)


def test_join_tokens_are_stored_only_as_hashes(database: Database) -> None:
    with database.sessions.begin() as session:
        row, token = add_join_token(session, label="bob", now=1.0)
    with database.sessions.begin() as session:
        stored = session.execute(select(JoinToken)).scalar_one()
        assert stored.token_hash == hash_token(token) and token not in stored.token_hash
        assert use_join_token(session, token, now=2.0)
        assert not use_join_token(session, token + "x", now=2.0)
    assert row.id == stored.id


def _evidence(node_ids: tuple[str, str], **overrides: Any) -> DistributedForwardEvidence:
    first = parse_identity(identity_block(0, 15))
    second = parse_identity(identity_block(15, 30))
    values: dict[str, Any] = {
        "route_session_id": "rs-42",
        "route_epoch": 1,
        "node_ids": node_ids,
        "shard_ranges": ((0, 15), (15, 30)),
        "tokens_generated": 12,
        "layer_count": 30,
        "fingerprint": first.key,
        "participants": (first, second),
    }
    values.update(overrides)
    return DistributedForwardEvidence(**values)


def test_persistent_ledger_promotes_with_evidence_in_one_transaction(database: Database) -> None:
    ledger = PersistentLedger(database)
    identity = parse_identity(identity_block(0, 15))
    assert ledger.status(identity).status == "unknown"
    with pytest.raises(RecipeIdentityError, match="unknown recipes"):
        ledger.certify(identity, _evidence(("a" * 32, "b" * 32)))
    assert ledger.register(identity).status == "dark"
    with pytest.raises(RecipeIdentityError, match="generated no tokens"):
        ledger.certify(identity, _evidence(("a" * 32, "b" * 32), tokens_generated=0))
    with database.session() as session:
        assert session.execute(select(CertificationEvidence)).first() is None
    status = ledger.certify(identity, _evidence(("a" * 32, "b" * 32)))
    assert status.status == "certified"
    assert status.detail == "certified by route session rs-42 across 2 nodes"
    # A fresh ledger over the same database sees the same truth.
    again = PersistentLedger(Database(database.url))
    assert again.status(identity.key) == status
    assert ledger.to_dict()["certified"] == {"/".join(identity.key): status.to_dict()}
    with database.session() as session:
        row = get_recipe(session, identity.key)
        assert row is not None
        [evidence] = evidence_for(session, row.id)
    assert evidence.node_ids == ["a" * 32, "b" * 32]
    assert parse_identity(evidence.participants[1]).shard_binding_digest == (
        parse_identity(identity_block(15, 30)).shard_binding_digest
    )


def test_revoked_certification_returns_the_recipe_to_the_dark(database: Database) -> None:
    ledger = PersistentLedger(database)
    identity = parse_identity(identity_block(0, 15))
    ledger.register(identity)
    ledger.certify(identity, _evidence(("a" * 32, "b" * 32)))
    assert ledger.revoke(identity.key, reason="bad outputs")
    status = ledger.status(identity)
    assert status.status == "dark" and status.detail == DARK_DETAIL
    assert not ledger.revoke(identity.key, reason="twice")
    with database.session() as session:
        evidence = session.execute(select(CertificationEvidence)).scalar_one()
        row = get_recipe(session, identity.key)
        assert row is not None and "bad outputs" in row.last_failure
    assert evidence.revoked_at is not None and "bad outputs" in evidence.revoked_reason


def test_heartbeat_writer_refreshes_once_per_nonce_and_never_an_expired_node(
    database: Database,
) -> None:
    now = time.time()
    node = FakeNode()
    register_in_store(database, node, now, identity=parse_identity(identity_block()))
    writer = HeartbeatWriter(database)
    assert writer.beat(heartbeat_values(node.node_id, "01" * 16, now + 5, throughput=77.0)) == (
        True,
        True,
    )
    assert writer.beat(heartbeat_values(node.node_id, "02" * 16, now + 6)) == (True, True)
    assert writer.beat(heartbeat_values(node.node_id, "02" * 16, now + 7)) == (False, False)
    assert writer.beat(heartbeat_values(node.node_id, "03" * 16, now + 100)) == (True, False)
    assert writer.beat(heartbeat_values("e" * 32, "04" * 16, now)) == (True, False)
    with database.session() as session:
        row = session.get(Node, node.node_id)
        assert row is not None
        # The None throughput of the second beat kept the first beat's measurement.
        assert (row.throughput, row.tokens_served, row.last_heartbeat_at) == (77.0, 40, now + 6)


def test_a_promotion_that_fails_midway_leaves_no_evidence_and_the_recipe_dark(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = PersistentLedger(database)
    identity = parse_identity(identity_block(0, 15))
    ledger.register(identity)

    def fail(_evidence: DistributedForwardEvidence) -> str:
        raise RuntimeError("the tracker died between the evidence and the status")

    # certified_detail runs after the evidence row is added, before the status flips.
    monkeypatch.setattr("tracker_service.store.ledger.certified_detail", fail)
    with pytest.raises(RuntimeError):
        ledger.certify(identity, _evidence(("a" * 32, "b" * 32)))
    assert ledger.status(identity).status == "dark"
    with database.session() as session:
        assert session.execute(select(CertificationEvidence)).first() is None
