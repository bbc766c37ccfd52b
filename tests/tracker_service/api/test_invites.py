"""Invites: the store (codes hashed, uses, expiry, revocation), redeeming through the API
(every refusal's reason, idempotent per identity, the token bound to its node), the
network description and the invite page."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.tracker_service.conftest import make_settings, register
from tests.tracker_service.helpers import FakeNode
from tracker_service.api.routes.state import STATUS_PAGE_CSP
from tracker_service.app import create_app
from tracker_service.domain.keys import (
    INVITE_REDEEMED_DOMAIN,
    NETWORK_INFO_DOMAIN,
    verify_domain_signature,
)
from tracker_service.errors import InviteRefused
from tracker_service.store.db import Database
from tracker_service.store.invite_tables import Invite
from tracker_service.store.invites import (
    add_invite,
    hash_code,
    normalize_code,
    redeem_invite,
    revoke_invite,
)
from tracker_service.store.tokens import use_join_token

REDEEM = "/api/v1/invites/redeem"
NETWORK = {
    "network_name": "Friends of Llamas",
    "network_description": "Answers questions for our reading club.",
    "network_operator": "Ada Operator",
    "network_contact": "ada@example.org",
    "network_terms_url": "https://example.org/terms",
}


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Any]:
    settings = make_settings(tmp_path, private=True, background_tasks=False, **NETWORK)
    application = create_app(settings)
    yield application
    application.state.tracker.database.dispose()


def _database(app: Any) -> Database:
    database: Database = app.state.tracker.database
    return database


def _invite(app: Any, **kw: Any) -> str:
    with _database(app).sessions.begin() as session:
        _, code = add_invite(session, label="club", now=time.time(), **kw)
    return code


def _redeem(client: TestClient, node: FakeNode, code: str, nonce: str | None = None) -> Any:
    body = json.dumps({"public_key": node.public_b64, "code": code}).encode()
    return client.post(
        REDEEM, content=body, headers=node.headers("POST", REDEEM, body, nonce=nonce)
    )


def _reason(response: Any) -> tuple[int, str]:
    return response.status_code, response.json()["reason"]


# -- store ------------------------------------------------------------------------------


def test_codes_are_stored_only_as_hashes_and_forgive_case_dashes_and_lookalikes(
    tmp_path: Path,
) -> None:
    database = Database(f"sqlite:///{tmp_path / 'store.db'}")
    database.migrate()
    with database.sessions.begin() as session:
        _, code = add_invite(session, label="x", now=1.0)
    with database.session() as session:
        stored = session.execute(select(Invite)).scalar_one()
    database.dispose()
    assert len(code) == 14 and code.count("-") == 2
    assert stored.code_hash == hash_code(code) and code.replace("-", "") not in stored.code_hash
    typed = code.lower().replace("-", " ").replace("0", "o").replace("1", "l")
    assert normalize_code(typed) == code.replace("-", "")
    assert normalize_code("not a code") is None and hash_code("ABC") is None


def test_redeem_counts_uses_per_identity_and_refuses_every_dead_code(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'store.db'}")
    database.migrate()
    with database.sessions.begin() as session:
        _, code = add_invite(session, label="two", now=1.0, max_uses=2, expires_at=100.0)
        first = redeem_invite(session, code, node_id="a" * 32, now=2.0)
        again = redeem_invite(session, code, node_id="a" * 32, now=3.0)
        second = redeem_invite(session, code, node_id="b" * 32, now=4.0)
        with pytest.raises(InviteRefused) as used_up:
            redeem_invite(session, code, node_id="c" * 32, now=5.0)
        with pytest.raises(InviteRefused) as expired:
            redeem_invite(session, code, node_id="d" * 32, now=100.0)
        _, other = add_invite(session, label="gone", now=1.0)
        assert revoke_invite(session, other, now=2.0)
        assert not revoke_invite(session, other, now=3.0)
        with pytest.raises(InviteRefused) as revoked:
            redeem_invite(session, other, node_id="a" * 32, now=4.0)
        with pytest.raises(InviteRefused) as unknown:
            redeem_invite(session, "ZZZZ-ZZZZ-ZZZZ", node_id="a" * 32, now=4.0)
        # Redeeming again replaced the first token: only the newest one admits.
        assert not use_join_token(session, first.join_token, now=6.0)
        assert use_join_token(session, again.join_token, now=6.0)
        assert use_join_token(session, second.join_token, now=6.0)
        uses = session.execute(select(Invite.uses).where(Invite.code_hash == hash_code(code)))
        assert uses.scalar_one() == 2
    database.dispose()
    assert (first.again, again.again, second.again) == (False, True, False)
    assert used_up.value.reason == "invite-used-up"
    assert expired.value.reason == "invite-expired"
    assert revoked.value.reason == "invite-revoked"
    assert unknown.value.reason == "invite-unknown"


# -- the API ----------------------------------------------------------------------------


def test_redeeming_answers_a_signed_join_token_that_registration_accepts(app: Any) -> None:
    code = _invite(app)
    node = FakeNode()
    key = app.state.tracker.key
    with TestClient(app) as client:
        before = register(client, node)
        answer = _redeem(client, node, code.lower(), nonce="ab" * 16)
        twice = _redeem(client, node, code)
        stale = register(
            client, node, headers={"X-Meshnet-Join-Token": answer.json()["join_token"]}
        )
        admitted = register(
            client, node, headers={"X-Meshnet-Join-Token": twice.json()["join_token"]}
        )
    assert _reason(before) == (403, "join-token-required")
    assert answer.status_code == 200, answer.text
    document = answer.json()
    signature = document.pop("signature")
    assert document["node_id"] == node.node_id and document["nonce"] == "ab" * 16
    assert document["key_fingerprint"] == hashlib.sha256(key.public_key_raw).hexdigest()[:32]
    assert verify_domain_signature(key.public_key_raw, signature, INVITE_REDEEMED_DOMAIN, document)
    assert twice.status_code == 200 and twice.json()["again"] is True
    assert _reason(stale) == (403, "join-token-invalid")  # replaced by the second redemption
    assert admitted.status_code == 200, admitted.text


def test_every_dead_code_is_refused_with_its_reason_and_a_sentence(app: Any) -> None:
    used = _invite(app)
    expired = _invite(app, expires_at=time.time() - 1)
    revoked = _invite(app)
    with _database(app).sessions.begin() as session:
        revoke_invite(session, revoked, now=time.time())
    with TestClient(app) as client:
        assert _redeem(client, FakeNode(), used).status_code == 200
        answers = {
            "used": _redeem(client, FakeNode(), used),
            "expired": _redeem(client, FakeNode(), expired),
            "revoked": _redeem(client, FakeNode(), revoked),
            "unknown": _redeem(client, FakeNode(), "ABCD-EFGH-JKMN"),
            "garbage": _redeem(client, FakeNode(), "<script>"),
        }
    assert _reason(answers["used"]) == (410, "invite-used-up")
    assert _reason(answers["expired"]) == (410, "invite-expired")
    assert _reason(answers["revoked"]) == (410, "invite-revoked")
    assert _reason(answers["unknown"]) == (404, "invite-unknown")
    assert _reason(answers["garbage"]) == (404, "invite-unknown")
    for answer in answers.values():
        assert "operator" in answer.json()["detail"]


def test_an_invites_token_admits_only_the_identity_that_redeemed_it(app: Any) -> None:
    code = _invite(app)
    owner, thief = FakeNode(), FakeNode()
    with TestClient(app) as client:
        token = _redeem(client, owner, code).json()["join_token"]
        stolen = register(client, thief, headers={"X-Meshnet-Join-Token": token})
        unsigned = client.post(REDEEM, json={"public_key": thief.public_b64, "code": code})
        # The owner's key in the body, signed by another: the code cannot be claimed for it.
        body = json.dumps({"public_key": owner.public_b64, "code": code}).encode()
        posing = client.post(REDEEM, content=body, headers=thief.headers("POST", REDEEM, body))
        own = register(client, owner, headers={"X-Meshnet-Join-Token": token})
    assert _reason(stolen) == (403, "join-token-invalid")
    assert "another node" in stolen.json()["detail"]
    assert _reason(unsigned) == (401, "missing-headers")
    assert _reason(posing) == (401, "node-id-mismatch")
    assert own.status_code == 200, own.text


def test_the_network_describes_itself_signed_with_the_callers_challenge(app: Any) -> None:
    key = app.state.tracker.key
    with TestClient(app) as client:
        answer = client.get("/api/v1/network", params={"challenge": "0f" * 16})
        bad = client.get("/api/v1/network", params={"challenge": "not hex"})
    assert answer.status_code == 200, answer.text
    document = answer.json()
    signature = document.pop("signature")
    assert verify_domain_signature(key.public_key_raw, signature, NETWORK_INFO_DOMAIN, document)
    assert document["challenge"] == "0f" * 16
    assert document["name"] == "Friends of Llamas"
    assert document["operator"] == "Ada Operator"
    assert document["contact"] == "ada@example.org"
    assert document["terms_url"] == "https://example.org/terms"
    assert document["description"].startswith("Answers questions")
    assert document["private"] is True and document["models"] == []
    assert base64.b64decode(document["tracker_public_key"]) == key.public_key_raw
    assert document["key_fingerprint"] == key.fingerprint
    assert bad.status_code == 422


def test_the_invite_page_shows_the_network_and_the_code_under_a_strict_csp(app: Any) -> None:
    code = _invite(app)
    with TestClient(app) as client:
        page = client.get(f"/join/{code}")
        css = client.get("/static/join.css")
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == STATUS_PAGE_CSP
    html = page.text
    for text in ("Friends of Llamas", "Ada Operator", "ada@example.org", code, "meshnet://join?"):
        assert text in html, text
    assert "https://example.org/terms" in html and "Install the MeshNet app" in html
    assert "<script" not in html and "style=" not in html and "<style" not in html
    assert css.status_code == 200


def test_an_unknown_or_dead_invite_gets_a_friendly_page(app: Any) -> None:
    revoked = _invite(app)
    with _database(app).sessions.begin() as session:
        revoke_invite(session, revoked, now=time.time())
    with TestClient(app) as client:
        unknown = client.get("/join/ABCD-EFGH-JKMN")
        gone = client.get(f"/join/{revoked}")
        long = client.get("/join/" + "A" * 300)
    assert unknown.status_code == 404 and "could not find this invite" in unknown.text
    assert unknown.headers["content-type"].startswith("text/html")
    assert unknown.headers["content-security-policy"] == STATUS_PAGE_CSP
    assert gone.status_code == 410 and "withdrew this invite" in gone.text
    assert long.status_code == 404
    assert "Ada Operator" in unknown.text


def test_guessing_codes_is_throttled_per_address(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, background_tasks=False, failed_auth_per_minute_per_address=3)
    app = create_app(settings)
    with TestClient(app) as client:
        guesses = [_redeem(client, FakeNode(), "ZZZZ-ZZZZ-ZZZ" + str(i)) for i in range(3)]
        page = client.get("/join/ZZZZ-ZZZZ-ZZZZ")
        network = client.get("/api/v1/network")  # public: never refused
    app.state.tracker.database.dispose()
    assert [g.status_code for g in guesses] == [404, 404, 404]
    assert _reason(page) == (429, "auth-throttled")
    assert network.status_code == 200
