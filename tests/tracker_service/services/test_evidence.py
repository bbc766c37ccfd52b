"""Certification evidence: ranges from signed receipts, kept whole, judged again on load.

A participant's range is what its receipt says it computed, so a node whose
receipt claims layers its admitted shard does not hold makes the evidence fail;
the stored row keeps the ranges and the ``synthetic`` flag; and a row that no
longer verifies when the tracker loads sends its recipe dark with a reason in
its own field, while the detail stays the seed's dark sentence.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from tests.tracker_service.conftest import make_settings
from tests.tracker_service.helpers import identity_block
from tracker_service.app import create_app
from tracker_service.domain.recipe_identity import (
    DARK_DETAIL,
    DistributedForwardEvidence,
    RecipeIdentityError,
    parse_identity,
)
from tracker_service.domain.tickets import HopReceipt
from tracker_service.services.certifier import build_evidence
from tracker_service.services.session_plan import PlannedHop, RoutePlan
from tracker_service.store.db import Database
from tracker_service.store.ledger import PersistentLedger, get_recipe
from tracker_service.store.tables import CertificationEvidence

FIRST = parse_identity(identity_block(0, 16))
SECOND = parse_identity(identity_block(10, 30))  # overlaps the first: effective start 16
NODES = ("a" * 32, "b" * 32)


def _plan() -> RoutePlan:
    hops = (
        PlannedHop(NODES[0], 0, 16, 0, "ws://a:1", b"k" * 32),
        PlannedHop(NODES[1], 10, 30, 16, "ws://b:1", b"k" * 32),
    )
    return RoutePlan("rs-7", 1, 0.0, FIRST.key, 30, hops, {})


def _receipt(node: str, start: int, end: int) -> HopReceipt:
    return HopReceipt("rs-7", 1, node, start, end, 4, 12, {})


def test_evidence_takes_each_range_from_the_signed_receipt_not_the_identity() -> None:
    receipts = [_receipt(NODES[0], 0, 16), _receipt(NODES[1], 16, 30)]
    evidence = build_evidence(_plan(), receipts, {NODES[0]: FIRST, NODES[1]: SECOND}, 4)
    assert evidence.shard_ranges == ((0, 16), (16, 30))
    assert evidence.rejection() is None


@pytest.mark.parametrize(
    "claimed",
    [(5, 30), (16, 31)],
    ids=["before-its-shard", "past-its-end"],
)
def test_a_receipt_claiming_layers_the_shard_does_not_own_fails_the_range_check(
    claimed: tuple[int, int],
) -> None:
    receipts = [_receipt(NODES[0], 0, 16), _receipt(NODES[1], *claimed)]
    evidence = build_evidence(_plan(), receipts, {NODES[0]: FIRST, NODES[1]: SECOND}, 4)
    assert evidence.rejection() == (
        "a participant identity does not match its recorded effective range"
    )


def test_a_hop_that_stopped_inside_its_shard_certifies_when_the_next_runs_on() -> None:
    """Two whole-model nodes: the first stops where its ticket said (effective_end)."""
    whole = parse_identity(identity_block(0, 30))
    receipts = [_receipt(NODES[0], 0, 12), _receipt(NODES[1], 12, 30)]
    evidence = build_evidence(_plan(), receipts, {NODES[0]: whole, NODES[1]: whole}, 4)
    assert evidence.shard_ranges == ((0, 12), (12, 30))
    assert evidence.rejection() is None
    # Stopping early leaves no hole behind: the last layers must still be computed.
    short = [_receipt(NODES[0], 0, 16), _receipt(NODES[1], 16, 29)]
    evidence = build_evidence(_plan(), short, {NODES[0]: FIRST, NODES[1]: SECOND}, 4)
    assert evidence.rejection() == "layers 29–30 are owned by no Shard on the route"
    # One node twice is still one node.
    same = build_evidence(_plan(), receipts, {NODES[0]: whole, NODES[1]: whole}, 4)
    twice = DistributedForwardEvidence(**{**same.__dict__, "node_ids": (NODES[0], NODES[0])})
    assert "1 distinct node" in str(twice.rejection())


def _evidence(**overrides: Any) -> DistributedForwardEvidence:
    values: dict[str, Any] = {
        "route_session_id": "rs-7",
        "route_epoch": 1,
        "node_ids": NODES,
        "shard_ranges": ((0, 16), (16, 30)),
        "tokens_generated": 4,
        "layer_count": 30,
        "fingerprint": FIRST.key,
        "participants": (FIRST, SECOND),
    }
    values.update(overrides)
    return DistributedForwardEvidence(**values)


@pytest.fixture
def database(tmp_path: Path) -> Database:
    db = Database(f"sqlite:///{tmp_path / 'tracker.db'}")
    db.migrate()
    return db


def test_persisted_evidence_keeps_receipt_ranges_and_the_synthetic_flag(
    database: Database,
) -> None:
    ledger = PersistentLedger(database)
    ledger.register(FIRST)
    with pytest.raises(RecipeIdentityError, match="synthetic"):
        ledger.certify(FIRST, _evidence(synthetic=True))
    ledger.certify(FIRST, _evidence())
    with database.session() as session:
        row = session.execute(select(CertificationEvidence)).scalar_one()
    assert row.shard_ranges == [[0, 16], [16, 30]]
    assert row.synthetic is False
    assert ledger.recheck() == []
    assert ledger.status(FIRST).status == "certified"


@pytest.mark.parametrize(
    ("tamper", "fragment"),
    [
        ({"shard_ranges": [[0, 16], [8, 30]]}, "recorded effective range"),
        ({"synthetic": True}, "synthetic worker"),
        ({"node_ids": [NODES[0], NODES[0]]}, "1 distinct node"),
        ({"participants": [{"schema_version": 9}]}, "schema version"),
    ],
    ids=["range", "synthetic", "same-node-twice", "unparseable"],
)
def test_a_stored_row_that_no_longer_verifies_sends_its_recipe_dark_when_loaded(
    tmp_path: Path, tamper: dict[str, Any], fragment: str
) -> None:
    settings = make_settings(tmp_path, background_tasks=False)
    app = create_app(settings)
    database: Database = app.state.tracker.database
    ledger = PersistentLedger(database)
    ledger.register(FIRST)
    ledger.certify(FIRST, _evidence())
    with database.sessions.begin() as session:
        session.execute(update(CertificationEvidence).values(**tamper))
    database.dispose()

    reloaded = create_app(settings)  # the tracker starting again over the same store
    with TestClient(reloaded) as client:
        [recipe] = client.get("/api/v1/state").json()["recipes"]
        page = client.get("/").text
    assert recipe["status"] == "dark"
    assert recipe["detail"] == DARK_DETAIL
    assert "no longer verifies" in recipe["last_certification_failure"]
    assert fragment in recipe["last_certification_failure"]
    assert "no longer verifies" in page
    with reloaded.state.tracker.database.session() as session:
        row = get_recipe(session, FIRST.key)
        assert row is not None and row.certified_at is None
        evidence = session.execute(select(CertificationEvidence)).scalar_one()
        assert evidence.revoked_at is not None and fragment in evidence.revoked_reason
    reloaded.state.tracker.database.dispose()
