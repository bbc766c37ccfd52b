"""Every hashed secret of the tracker goes through store/hashed_secrets.py, and the
hashes it stores are the ones databases already hold (pinned here by literal digests)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.tracker_service.store_backends import BACKENDS, fresh_database
from tracker_service.store.api_keys import API_KEYS
from tracker_service.store.db import Database
from tracker_service.store.executors import register_executor, session_status
from tracker_service.store.hashed_secrets import hash_secret
from tracker_service.store.invite_tables import Invite
from tracker_service.store.invites import INVITES, add_invite, find_invite, revoke_invite
from tracker_service.store.job_tables import JobExecutor
from tracker_service.store.tokens import JOIN_TOKENS

# SHA-256 of the ASCII bytes: what earlier releases stored for these texts.
ABCDEFGHJKM0 = "a10c96c631811941fc165f4f81fdcd0122a9fcd316640ca088542bed35b4ca1c"
MNJ_EXAMPLE = "b014b20f790136cc9b59f90be4327842998f60dcf724d88a6099c2fb97c0db0e"
MNK_EXAMPLE = "2cc3555c078d8d03af991cd2d557afa609259f627ad4eef20fd956216b854830"


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    db = fresh_database(request.param, tmp_path)
    try:
        yield db
    finally:
        db.dispose()


def test_stored_digests_are_unchanged_for_every_kind() -> None:
    assert JOIN_TOKENS.digest("mnj_example") == MNJ_EXAMPLE == hash_secret("mnj_example")
    assert API_KEYS.digest("mnk_example") == MNK_EXAMPLE
    # An invite code is hashed in its canonical form: upper case, no dashes, O read as 0.
    assert INVITES.digest("abcd-efgh-jkmo") == ABCDEFGHJKM0
    assert INVITES.digest("ABCD EFGH JKM0") == ABCDEFGHJKM0
    assert INVITES.digest("not a code") is None


def test_an_invite_made_before_the_helper_is_found_and_revoked_by_its_code(
    database: Database,
) -> None:
    with database.sessions.begin() as session:
        session.add(Invite(code_hash=ABCDEFGHJKM0, label="old", created_at=1.0, max_uses=1, uses=0))
    with database.sessions.begin() as session:
        found = find_invite(session, "abcd-efgh-jkm0")
        assert found is not None and found.label == "old"
        assert revoke_invite(session, "abcdefghjkm0", now=2.0)
        assert not revoke_invite(session, "ABCD-EFGH-JKM0", now=3.0)
        assert find_invite(session, "ABCD-EFGH-JKM0") is not None  # revoked, still known
        assert INVITES.active(session, "ABCD-EFGH-JKM0") is None
        _, code = add_invite(session, label="new", now=4.0)
        assert INVITES.active(session, code.lower()) is not None


def test_an_executor_session_is_stored_as_the_shared_hash(database: Database) -> None:
    with database.sessions.begin() as session:
        token, _ = register_executor(session, "n" * 32, "key", now=1.0, ttl_s=60.0)
    with database.sessions.begin() as session:
        stored = session.execute(select(JobExecutor)).scalar_one()
        assert token.startswith("mne_") and stored.session_hash == hash_secret(token)
        assert session_status(session, "n" * 32, token, now=2.0) == "valid"
        assert session_status(session, "n" * 32, token + "x", now=2.0) == "unknown"
