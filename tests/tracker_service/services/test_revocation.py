"""A revocation stands until the operator lifts it; a quarantine re-opens what the
quarantined node helped certify. The ledger's rules and the operator's commands
(`meshnet-tracker recipes revoke|unrevoke`); the certifier's side runs with real
nodes in test_certifier.py."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.tracker_service.helpers import FakeNode, identity_block
from tests.tracker_service.store_backends import BACKENDS, fresh_database
from tracker_service.api.status import recipe_public
from tracker_service.cli.commands import main
from tracker_service.config import Settings
from tracker_service.domain.recipe_identity import (
    DistributedForwardEvidence,
    PresentedIdentity,
    RecipeIdentityError,
    parse_identity,
)
from tracker_service.store.db import Database
from tracker_service.store.integrity import ledger_problems
from tracker_service.store.ledger import (
    PersistentLedger,
    fail_reverification,
    get_recipe,
    revoke_certification,
)
from tracker_service.store.nodes import Liveness, register_node
from tracker_service.store.quarantine import quarantine_node
from tracker_service.store.reverify import recipes_to_reverify
from tracker_service.store.route_candidates import dark_recipes
from tracker_service.store.tables import CertificationEvidence, Recipe

FIRST = parse_identity(identity_block(0, 15))
SECOND = parse_identity(identity_block(15, 30))
A, B, C = FakeNode(), FakeNode(), FakeNode()


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    db = fresh_database(request.param, tmp_path, "revocation.db")
    yield db
    db.dispose()


def _evidence(node_ids: tuple[str, str], session_id: str = "rs-1") -> DistributedForwardEvidence:
    return DistributedForwardEvidence(
        route_session_id=session_id,
        route_epoch=1,
        node_ids=node_ids,
        shard_ranges=((0, 15), (15, 30)),
        tokens_generated=4,
        layer_count=30,
        fingerprint=FIRST.key,
        participants=(FIRST, SECOND),
    )


def _certified(database: Database) -> PersistentLedger:
    ledger = PersistentLedger(database)
    ledger.register(FIRST)
    assert ledger.certify(FIRST, _evidence((A.node_id, B.node_id))).status == "certified"
    return ledger


def _row(database: Database) -> Recipe:
    with database.session() as session:
        row = get_recipe(session, FIRST.key)
        assert row is not None
        session.expunge(row)
        return row


def _problems(database: Database) -> list[str]:
    with database.session() as session:
        recipes = session.execute(select(Recipe)).scalars().all()
        evidence = session.execute(select(CertificationEvidence)).scalars().all()
        return ledger_problems(recipes, evidence)


def test_a_revoked_recipe_is_not_certified_again_until_the_operator_lifts_it(
    database: Database,
) -> None:
    ledger = _certified(database)
    assert ledger.revoke(FIRST.key, reason="wrong answers on a user's report")
    assert ledger.status(FIRST).status == "dark"
    with database.session() as session:
        assert dark_recipes(session) == []  # the certifier is never handed it
    with pytest.raises(RecipeIdentityError, match="revoked"):
        ledger.certify(FIRST, _evidence((A.node_id, B.node_id), "rs-2"))
    assert ledger.status(FIRST).status == "dark"
    public = recipe_public(_row(database))
    assert public.revoked and "wrong answers" in (public.last_certification_failure or "")
    assert _problems(database) == []

    assert ledger.unrevoke(FIRST.key, reason="fixed upstream")
    assert not ledger.unrevoke(FIRST.key, reason="twice")
    assert ledger.status(FIRST).status == "dark"  # lifted, yet proven by nothing yet
    with database.session() as session:
        assert [info.key for info in dark_recipes(session)] == [FIRST.key]
    assert ledger.certify(FIRST, _evidence((A.node_id, B.node_id), "rs-3")).status == "certified"
    assert not recipe_public(_row(database)).revoked
    assert _problems(database) == []


def test_a_dark_recipe_may_be_revoked_before_it_is_ever_certified(database: Database) -> None:
    ledger = PersistentLedger(database)
    ledger.register(FIRST)
    assert ledger.revoke(FIRST.key, reason="known-bad quantization")
    assert not ledger.revoke(FIRST.key, reason="twice")
    with pytest.raises(RecipeIdentityError, match="revoked"):
        ledger.certify(FIRST, _evidence((A.node_id, B.node_id)))
    with database.sessions.begin() as session:
        assert not revoke_certification(session, ("0" * 64, "1" * 64), reason="x", now=1.0)


def _register_nodes(database: Database, *nodes: FakeNode) -> None:
    now = time.time()
    with database.sessions.begin() as session:
        for node, identity in zip(nodes, (FIRST, SECOND, SECOND), strict=False):
            register_node(
                session,
                node_id=node.node_id,
                public_key=node.public_raw,
                endpoint=node.endpoint,
                identity=identity,
                capability={"passed": True},
                throughput=10.0,
                now=now,
                liveness=Liveness(live_window_s=30.0, session_ttl_s=900.0),
            )


def _quarantine(database: Database, node: FakeNode) -> bool:
    with database.sessions.begin() as session:
        return quarantine_node(session, node.node_id, reason="lied at hop 1", evidence={})


def test_quarantining_a_certifying_node_marks_the_recipe_for_verification_again(
    database: Database,
) -> None:
    _certified(database)
    _register_nodes(database, A, B, C)
    assert _quarantine(database, C)  # took no part in the certification
    assert _row(database).reverify_reason == ""
    assert _quarantine(database, B)
    row = _row(database)
    assert row.status == "certified"  # its other routes serve while it is verified again
    assert B.node_id in row.reverify_reason and "lied at hop 1" in row.reverify_reason
    assert recipe_public(row).reverify_reason == row.reverify_reason
    with database.session() as session:
        assert [r.id for r in recipes_to_reverify(session)] == [row.id]


def test_a_passing_verification_replaces_the_evidence_of_the_quarantined_node(
    database: Database,
) -> None:
    ledger = _certified(database)
    _register_nodes(database, A, B, C)
    _quarantine(database, B)
    ledger.certify(FIRST, _evidence((A.node_id, C.node_id), "rs-again"))
    row = _row(database)
    assert row.status == "certified" and row.reverify_reason == ""
    assert row.certified_route_session == "rs-again"
    with database.session() as session:
        evidence = session.execute(select(CertificationEvidence)).scalars().all()
    live = [e for e in evidence if e.revoked_at is None]
    assert [e.route_session_id for e in live] == ["rs-again"]
    [old] = [e for e in evidence if e.revoked_at is not None]
    assert "superseded by route session rs-again" in old.revoked_reason
    assert B.node_id in old.revoked_reason
    assert _problems(database) == []


def test_a_failed_verification_sends_the_recipe_dark_with_the_reason(database: Database) -> None:
    _certified(database)
    _register_nodes(database, A, B)
    _quarantine(database, B)
    with database.sessions.begin() as session:
        assert fail_reverification(session, FIRST.key, "no route without it", now=time.time())
    row = _row(database)
    assert row.status == "dark" and row.reverify_reason == ""
    assert B.node_id in row.last_failure and "no route without it" in row.last_failure
    assert _problems(database) == []


# The operator's commands.


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Database]:
    monkeypatch.setenv("MESHNET_HOME", str(tmp_path))
    for name in ("MESHNET_TRACKER_DB", "MESHNET_TRACKER_SIGNING_KEY", "MESHNET_TRACKER_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    database = Database(settings.database_url())
    database.migrate()
    yield database
    database.dispose()


def _fingerprint(identity: PresentedIdentity, length: int = 12) -> str:
    return f"{identity.key[0][:length]}/{identity.key[1][:length]}"


def test_recipes_revoke_and_unrevoke_from_the_command_line(
    home: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = _certified(home)
    assert main(["recipes", "revoke", _fingerprint(FIRST), "--reason", "bad outputs"]) == 0
    assert "revoked" in capsys.readouterr().out
    assert ledger.status(FIRST).status == "dark"
    assert main(["recipes", "revoke", _fingerprint(FIRST), "--reason", "again"]) == 1
    assert "revoked already" in capsys.readouterr().err
    assert main(["recipes"]) == 0
    assert "dark (revoked)" in capsys.readouterr().out
    assert main(["recipes", "list"]) == 0
    assert "dark (revoked)" in capsys.readouterr().out
    full = "/".join(FIRST.key)
    assert main(["recipes", "unrevoke", full, "--reason", "fixed"]) == 0
    assert "lifted" in capsys.readouterr().out
    assert main(["recipes", "unrevoke", full, "--reason", "fixed"]) == 1
    assert "not revoked" in capsys.readouterr().err
    assert _row(home).revoked_at is None and ledger.status(FIRST).status == "dark"


@pytest.mark.parametrize(
    ("fingerprint", "code"),
    [
        ("abc", "bad-fingerprint"),
        ("0123456789/abcdef", "unknown-recipe"),
        ("not-hex!!/ffffff", "bad-fingerprint"),
    ],
)
def test_recipes_revoke_names_what_is_wrong_with_the_fingerprint(
    home: Database, capsys: pytest.CaptureFixture[str], fingerprint: str, code: str
) -> None:
    _certified(home)
    assert main(["recipes", "revoke", fingerprint, "--reason", "x"]) == 2
    assert f"[{code}]" in capsys.readouterr().err


def test_recipes_revoke_refuses_an_ambiguous_prefix(
    home: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    with home.sessions.begin() as session:
        for tail in ("0", "1"):
            session.add(
                Recipe(
                    model_artifact_digest="abcdef" + tail * 58,
                    runtime_recipe_digest="123456" + tail * 58,
                    artifact_id="m",
                    revision="r1",
                    architecture="LlamaForCausalLM",
                    layer_count=30,
                    recipe_id="x",
                    recipe_version="1",
                    catalogue_version="1",
                    axes={},
                    status="dark",
                    detail="registered",
                    first_seen_at=1.0,
                )
            )
    assert main(["recipes", "revoke", "abcdef/123456", "--reason", "x"]) == 2
    assert "[ambiguous-recipe]" in capsys.readouterr().err
    assert main(["recipes", "revoke", "abcdef1/1234561", "--reason", "x"]) == 0
