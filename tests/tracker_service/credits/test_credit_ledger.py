"""The credit rules, linking signatures and the ledger on the store (SQLite, PostgreSQL)."""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tests.tracker_service.helpers import FakeNode, identity_block
from tests.tracker_service.store_backends import BACKENDS, fresh_database
from tests.tracker_service.store_rows import register_in_store
from tracker_service.api.schemas.credits import as_json
from tracker_service.domain.credit_rules import (
    BUCKET_S,
    LINK_DOMAIN,
    AccountClaim,
    address_group,
    bucket_of,
    check_claim,
    hop_credit,
    parse_claim,
    same_address,
)
from tracker_service.domain.recipe_identity import parse_identity
from tracker_service.domain.tickets import HopReceipt
from tracker_service.domain.wire import domain_message
from tracker_service.errors import LinkRefused
from tracker_service.services import credit_policy
from tracker_service.services.credits import BOARD_DIRTY_S, CreditLedger, LeaderboardCache
from tracker_service.services.session_plan import RoutePlan
from tracker_service.store import credits as ledger
from tracker_service.store.api_keys import add_api_key
from tracker_service.store.db import Database
from tracker_service.store.quarantine import quarantine_node

NOW = 1_800_000_000.0


def sign(key: Ed25519PrivateKey, claim: AccountClaim) -> str:
    message = domain_message(LINK_DOMAIN, claim.statement())
    return base64.b64encode(key.sign(message)).decode()


# -- rules ----------------------------------------------------------------------------------


def test_twenty_layers_earn_twice_ten_layers_for_the_same_tokens() -> None:
    assert hop_credit(100, 20) == pytest.approx(2 * hop_credit(100, 10))
    assert hop_credit(100, 10) == pytest.approx(1.0)  # 1,000 layer-tokens = 1 credit
    assert hop_credit(50, 10) == pytest.approx(hop_credit(100, 10) / 2)
    assert hop_credit(100, 10, cost_per_layer=3.0) == pytest.approx(3.0)
    assert hop_credit(0, 10) == 0.0 and hop_credit(10, 0) == 0.0


def test_buckets_are_hours() -> None:
    assert bucket_of(NOW) % BUCKET_S == 0
    assert bucket_of(NOW) <= NOW < bucket_of(NOW) + BUCKET_S


# -- linking --------------------------------------------------------------------------------


def _claim(nodes: list[FakeNode], account: str = "ada", signed_at: int = int(NOW)) -> AccountClaim:
    return AccountClaim(
        account, "Ada", "lovelace", tuple(sorted(n.node_id for n in nodes)), signed_at
    )


def test_a_claim_signed_by_every_identity_passes_and_any_flaw_is_refused() -> None:
    a, b, stranger = FakeNode(), FakeNode(), FakeNode()
    claim = _claim([a, b])
    keys = {a.node_id: a.public_raw, b.node_id: b.public_raw}
    signatures = {a.node_id: sign(a.key, claim), b.node_id: sign(b.key, claim)}
    check_claim(claim, signatures, keys, now=NOW)

    forged = dict(signatures, **{b.node_id: sign(stranger.key, claim)})
    with pytest.raises(LinkRefused) as caught:
        check_claim(claim, forged, keys, now=NOW)
    assert caught.value.reason == "bad-signature" and caught.value.status_code == 401

    other_team = AccountClaim(
        claim.account, claim.display_name, "other", claim.node_ids, claim.signed_at
    )
    with pytest.raises(LinkRefused) as caught:
        check_claim(other_team, signatures, keys, now=NOW)  # signatures over another statement
    assert caught.value.reason == "bad-signature"

    with pytest.raises(LinkRefused) as caught:
        check_claim(claim, signatures, keys, now=NOW + 301)
    assert caught.value.reason == "stale-timestamp"

    with pytest.raises(LinkRefused) as caught:
        check_claim(claim, signatures, {a.node_id: a.public_raw}, now=NOW)
    assert caught.value.reason == "unknown-node" and caught.value.status_code == 404


def test_an_existing_account_needs_one_of_its_members_to_sign() -> None:
    member, intruder = FakeNode(), FakeNode()
    claim = _claim([intruder])
    keys = {intruder.node_id: intruder.public_raw}
    with pytest.raises(LinkRefused) as caught:
        check_claim(
            claim, {intruder.node_id: sign(intruder.key, claim)}, keys, now=NOW,
            members=[member.node_id],
        )  # fmt: skip
    assert caught.value.reason == "not-a-member" and caught.value.status_code == 403


def test_parse_claim_refuses_bad_shapes() -> None:
    good = {"account": "ada", "signed_at": 1, "signatures": {"n": "s"}}
    parse_claim(good)
    for bad, reason in (
        ({**good, "account": "Ada!"}, "bad-account"),
        ({**good, "team": "x" * 65}, "bad-label"),
        ({**good, "signed_at": "now"}, "bad-claim"),
        ({**good, "signatures": {}}, "bad-claim"),
    ):
        with pytest.raises(LinkRefused) as caught:
            parse_claim(bad)
        assert caught.value.reason == reason


# -- the ledger on the store ----------------------------------------------------------------


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    db = fresh_database(request.param, tmp_path, "credits.db")
    yield db
    db.dispose()


def _plan(*hops: tuple[FakeNode, int, int]) -> tuple[RoutePlan, list[HopReceipt]]:
    plan = RoutePlan("route-1", 1, NOW + 60, ("a" * 64, "b" * 64), 30, (), {})
    receipts = [
        HopReceipt("route-1", 1, node.node_id, start, end, steps=5, tokens=40, signed={})
        for node, start, end in hops
    ]
    return plan, receipts


def test_verified_hops_earn_by_layers_and_own_key_requests_earn_nothing(
    database: Database,
) -> None:
    first, second = FakeNode(), FakeNode()
    register_in_store(database, first, identity=parse_identity(identity_block(0, 10)))
    register_in_store(database, second, identity=parse_identity(identity_block(10, 30)))
    credits = CreditLedger(database, clock=lambda: NOW)
    plan, receipts = _plan((first, 0, 10), (second, 10, 30))

    asyncio.run(credits.credit_receipts(plan, receipts, key_id=None))
    with database.session() as session:
        board = {r.id: r for r in credit_policy.leaderboard(session, kind="identity", now=NOW)}
    assert board[first.node_id].total == pytest.approx(hop_credit(40, 10))
    assert board[second.node_id].total == pytest.approx(2 * board[first.node_id].total)
    assert board[second.node_id].rank == 1 and board[first.node_id].rank == 2

    # The second node's contributor links an API key; its own requests earn it nothing,
    # while the first node (another contributor) still earns from them.
    claim = _claim([second], account="bob")
    with database.sessions.begin() as session:
        key, _ = add_api_key(session, label="bob", now=NOW)
        ledger.save_claim(session, claim, now=NOW, key_id=key.id)
    asyncio.run(credits.credit_receipts(plan, receipts, key_id=key.id))
    with database.session() as session:
        board = {r.id: r for r in credit_policy.leaderboard(session, kind="identity", now=NOW)}
        accounts = {r.id: r for r in credit_policy.leaderboard(session, kind="account", now=NOW)}
    assert board[first.node_id].total == pytest.approx(2 * hop_credit(40, 10))
    assert board[second.node_id].total == pytest.approx(hop_credit(40, 20))
    assert board[second.node_id].identities[0].own_hops == 1
    assert accounts["bob"].total == pytest.approx(hop_credit(40, 20))
    assert accounts["bob"].display_name == "Ada" and accounts["bob"].team == "lovelace"
    assert first.node_id in accounts  # an unlinked identity stands as its own row


def test_a_quarantined_identity_shows_zero_with_its_reason_and_keeps_the_evidence(
    database: Database,
) -> None:
    honest, liar = FakeNode(), FakeNode()
    register_in_store(database, honest, identity=parse_identity(identity_block(0, 15)))
    register_in_store(database, liar, identity=parse_identity(identity_block(15, 30)))
    credits = CreditLedger(database, clock=lambda: NOW)
    asyncio.run(credits.credit_receipts(*_plan((honest, 0, 15), (liar, 15, 30)), key_id=None))
    with database.sessions.begin() as session:
        ledger.save_claim(session, _claim([liar], account="team-liar"), now=NOW, key_id=None)
        quarantine_node(session, liar.node_id, reason="audit: wrong output", evidence={})
    with database.session() as session:
        row = credit_policy.find_credit(session, liar.node_id, now=NOW)
        account = credit_policy.find_credit(session, "team-liar", now=NOW)
        team = credit_policy.find_credit(session, "lovelace", now=NOW)
    assert row is not None and account is not None and team is not None
    assert row.total == 0.0 and row.forfeited and "audit: wrong output" in row.forfeited
    assert row.identities[0].earned == pytest.approx(hop_credit(40, 15))  # kept as evidence
    assert account.total == 0.0 and team.total == 0.0
    body = as_json(row, with_identities=True)
    assert body["total"] == 0.0 and body["identities"][0]["forfeited"].startswith("quarantined")


def test_many_hops_of_one_node_and_hour_are_one_row_and_windows_are_by_hour(
    database: Database,
) -> None:
    node = FakeNode()
    rows = [ledger.CreditRow(node.node_id, bucket_of(NOW), credit=1.0, hops=1) for _ in range(500)]
    rows.append(ledger.CreditRow(node.node_id, bucket_of(NOW - 3 * 86400), credit=7.0, hops=1))
    rows.append(ledger.CreditRow(node.node_id, bucket_of(NOW - 30 * 86400), credit=11.0, hops=1))
    assert ledger.add_credit(database, rows) == 3
    assert ledger.add_credit(database, rows[:10]) == 1
    with database.session() as session:
        [row] = credit_policy.leaderboard(session, kind="identity", now=NOW)
    assert row.hops == 512
    assert row.total == pytest.approx(528.0)
    assert row.last_24h == pytest.approx(510.0)
    assert row.last_7d == pytest.approx(517.0)


def test_a_key_reserves_from_its_accounts_credit_and_settling_spends_what_was_used(
    database: Database,
) -> None:
    node = FakeNode()
    register_in_store(database, node, identity=parse_identity(identity_block(0, 30)))
    with database.sessions.begin() as session:
        key, _ = add_api_key(session, label="ada", now=NOW)
        other, _ = add_api_key(session, label="stranger", now=NOW)
        ledger.save_claim(session, _claim([node]), now=NOW, key_id=key.id)
    credits = CreditLedger(database, clock=lambda: NOW)
    assert credits.reserve(key.id, 0.5) is None  # linked, but nothing earned yet
    ledger.add_credit(database, [ledger.CreditRow(node.node_id, bucket_of(NOW), credit=1.0)])
    assert credits.reserve(other.id, 0.5) is None and credits.reserve(None, 0.5) is None
    held = credits.reserve(key.id, 0.8)  # a worst case of 80 tokens × 0.01
    assert held is not None and held.account == "ada" and held.amount == pytest.approx(0.8)
    assert credits.reserve(key.id, 0.3) is None  # only 0.2 is left while it runs
    assert credits.settle(held, 0.6) == pytest.approx(0.6)  # it used 60 tokens
    with database.session() as session:
        assert ledger.account_balance(session, "ada") == pytest.approx(0.4)
    held = credits.reserve(key.id, 0.4)
    assert held is not None
    credits.settle(held, 0.9)  # never more than it held
    with database.session() as session:
        assert ledger.account_balance(session, "ada") == pytest.approx(0.0)
    assert credits.reserve(key.id, 0.01) is None


def test_the_leaderboard_is_cached_between_writes_and_rebuilt_after_a_link(
    database: Database,
) -> None:
    node = FakeNode()
    ledger.add_credit(database, [ledger.CreditRow(node.node_id, bucket_of(NOW), credit=1.0)])
    clock = [0.0]
    board = LeaderboardCache(database, clock=lambda: clock[0])
    for _ in range(50):
        assert board.rows("identity")[0].total == pytest.approx(1.0)
    assert board.rebuilds == 1  # fifty reads, one sum
    ledger.add_credit(database, [ledger.CreditRow(node.node_id, bucket_of(NOW), credit=1.0)])
    board.changed()  # credit written: rebuilt soon, not at once
    assert board.rows("identity")[0].total == pytest.approx(1.0)
    clock[0] += BOARD_DIRTY_S + 0.1
    assert board.rows("identity")[0].total == pytest.approx(2.0)
    assert board.rebuilds == 2
    board.invalidate()  # an account linked: rebuilt at the next read
    assert board.find(node.node_id) is not None and board.rebuilds == 3  # one for all kinds
    # A later write is seen too, whatever other kinds were built and never read again.
    board.rows("team")
    for total in (3.0, 4.0):
        ledger.add_credit(database, [ledger.CreditRow(node.node_id, bucket_of(NOW), credit=1.0)])
        board.changed()
        clock[0] += BOARD_DIRTY_S + 0.1
        assert board.rows("identity")[0].total == pytest.approx(total)


def test_address_groups_put_an_ipv6_home_together_and_keep_ipv4_exact() -> None:
    assert address_group("2001:db8:1:2::5") == address_group("2001:db8:1:2:ffff::9")
    assert address_group("2001:db8:1:3::5") != address_group("2001:db8:1:2::5")
    assert address_group("::ffff:203.0.113.5") == "203.0.113.5"
    assert same_address("203.0.113.5", "203.0.113.5")
    assert not same_address("203.0.113.5", "203.0.113.6") and not same_address(None, "x")


def test_reservations_made_at_once_never_hold_more_than_was_earned(database: Database) -> None:
    first, second = FakeNode(), FakeNode()
    for node in (first, second):
        register_in_store(database, node, identity=parse_identity(identity_block(0, 30)))
        ledger.add_credit(database, [ledger.CreditRow(node.node_id, bucket_of(NOW), credit=0.5)])
    with database.sessions.begin() as session:
        key, _ = add_api_key(session, label="ada", now=NOW)
        ledger.save_claim(session, _claim([first, second]), now=NOW, key_id=key.id)
    credits = CreditLedger(database, clock=lambda: NOW)
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        held = list(pool.map(lambda _: credits.reserve(key.id, 0.3), range(24)))
    taken = [h for h in held if h is not None]
    assert len(taken) == 3  # 3 × 0.3 fit in 1.0, a fourth does not
    assert sum(h.amount for h in taken) == pytest.approx(0.9)
    with database.session() as session:
        assert ledger.account_balance(session, "ada") == pytest.approx(0.1)
