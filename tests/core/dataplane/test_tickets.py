"""Route-ticket verification: each refusal carries its own reason code."""

from __future__ import annotations

from typing import Any

import pytest

from core.dataplane import wire
from core.dataplane.tickets import TicketVerifier
from core.errors import TicketError
from tests.core.dataplane.conftest import FINGERPRINT, NODE_A_SEED, NODE_B_SEED, Key
from tests.support.tickets import sign_ticket

NOW = 1_800_000_000.0
NODE = Key.from_seed(NODE_B_SEED)
OTHER = Key.from_seed(NODE_A_SEED)


def _ticket(**overrides: Any) -> dict[str, Any]:
    ticket: dict[str, Any] = {
        "route_session_id": "route-7",
        "epoch": 3,
        "expires_at": NOW + 30.0,
        "fingerprint": dict(FINGERPRINT),
        "hops": [
            {"node_id": OTHER.node_id, "start": 0, "end": 2, "effective_start": 0},
            {"node_id": NODE.node_id, "start": 1, "end": 4, "effective_start": 2},
        ],
    }
    ticket.update(overrides)
    return ticket


def _verifier(tracker: Key, key: bytes | None = None, now: float = NOW) -> TicketVerifier:
    return TicketVerifier(
        node_id=NODE.node_id,
        shard_range=(1, 4),
        fingerprint=FINGERPRINT,
        tracker_public_key=lambda: tracker.public if key is None else key,
        clock=lambda: now,
    )


def test_valid_ticket_grants_this_nodes_hop_with_its_effective_start(tracker_key: Key) -> None:
    grant = _verifier(tracker_key).verify(sign_ticket(_ticket(), tracker_key.sign))
    assert (grant.hop.start, grant.hop.end, grant.hop.effective_start) == (1, 4, 2)
    assert grant.ticket.route_session_id == "route-7" and grant.ticket.epoch == 3


def _hops(**mine: Any) -> list[dict[str, Any]]:
    hop = {"node_id": NODE.node_id, "start": 1, "end": 4, "effective_start": 2, **mine}
    return [hop]


@pytest.mark.parametrize(
    ("name", "ticket", "reason"),
    [
        ("expired", _ticket(expires_at=NOW - 0.5), wire.TICKET_EXPIRED),
        ("expires exactly now", _ticket(expires_at=NOW), wire.TICKET_EXPIRED),
        ("other node", _ticket(hops=_hops(node_id=OTHER.node_id)), wire.WRONG_NODE),
        ("other range", _ticket(hops=_hops(start=0, end=4)), wire.WRONG_RANGE),
        ("effective start past end", _ticket(hops=_hops(effective_start=4)), wire.WRONG_RANGE),
        ("effective start before start", _ticket(hops=_hops(effective_start=0)), wire.WRONG_RANGE),
        (
            "other fingerprint",
            _ticket(fingerprint={**FINGERPRINT, "runtime_recipe_digest": "c" * 64}),
            wire.WRONG_FINGERPRINT,
        ),
        ("no hops", _ticket(hops=[]), wire.BAD_TICKET),
        ("epoch not int", _ticket(epoch="3"), wire.BAD_TICKET),
        ("hop without range", _ticket(hops=[{"node_id": NODE.node_id}]), wire.BAD_TICKET),
    ],
)
def test_signed_ticket_that_does_not_admit_this_hop_is_refused_with_its_reason(
    tracker_key: Key, name: str, ticket: dict[str, Any], reason: str
) -> None:
    with pytest.raises(TicketError) as caught:
        _verifier(tracker_key).verify(sign_ticket(ticket, tracker_key.sign))
    assert caught.value.reason == reason, name


def test_ticket_signed_by_another_key_is_refused_as_bad_ticket(tracker_key: Key) -> None:
    forged = sign_ticket(_ticket(), OTHER.sign)
    with pytest.raises(TicketError) as caught:
        _verifier(tracker_key).verify(forged)
    assert caught.value.reason == wire.BAD_TICKET


def test_ticket_changed_after_signing_is_refused_as_bad_ticket(tracker_key: Key) -> None:
    signed = sign_ticket(_ticket(), tracker_key.sign)
    signed["ticket"]["expires_at"] = NOW + 3600.0
    with pytest.raises(TicketError) as caught:
        _verifier(tracker_key).verify(signed)
    assert caught.value.reason == wire.BAD_TICKET


@pytest.mark.parametrize(
    "signed", [None, {}, {"ticket": None}, {"ticket": {}, "signature": "%%%"}, "ticket"]
)
def test_missing_or_malformed_ticket_is_refused_as_bad_ticket(
    tracker_key: Key, signed: object
) -> None:
    with pytest.raises(TicketError) as caught:
        _verifier(tracker_key).verify(signed)
    assert caught.value.reason == wire.BAD_TICKET


def test_node_without_a_tracker_key_refuses_every_ticket(tracker_key: Key) -> None:
    verifier = TicketVerifier(
        node_id=NODE.node_id,
        shard_range=(1, 4),
        fingerprint=FINGERPRINT,
        tracker_public_key=lambda: None,
        clock=lambda: NOW,
    )
    with pytest.raises(TicketError) as caught:
        verifier.verify(sign_ticket(_ticket(), tracker_key.sign))
    assert caught.value.reason == wire.BAD_TICKET
    assert "not registered" in str(caught.value)


def test_expiry_follows_the_injected_clock(tracker_key: Key) -> None:
    signed = sign_ticket(_ticket(), tracker_key.sign)
    assert _verifier(tracker_key, now=NOW + 29.0).verify(signed).hop.node_id == NODE.node_id
    with pytest.raises(TicketError):
        _verifier(tracker_key, now=NOW + 31.0).verify(signed)


PIN = "ab" * 32


def test_a_chain_ticket_names_this_hops_place_and_its_neighbours(tracker_key: Key) -> None:
    hops = _ticket()["hops"]
    hops[0]["next"] = {"endpoint": "wss://node-b.example:7000", "tls_pin": PIN}
    grant = _verifier(tracker_key).verify(sign_ticket(_ticket(hops=hops), tracker_key.sign))
    assert (grant.index, grant.is_last) == (1, True)
    assert grant.previous is not None and grant.previous.node_id == OTHER.node_id
    assert grant.previous.next is not None
    assert (grant.previous.next.endpoint, grant.previous.next.tls_pin) == (
        "wss://node-b.example:7000",
        PIN,
    )
    assert grant.hop.next is None


@pytest.mark.parametrize(
    "nxt",
    [
        "wss://node-b.example:7000",  # not an object
        {"endpoint": "https://node-b.example:7000", "tls_pin": PIN},  # not a WebSocket URL
        {"endpoint": "wss://node-b.example:7000", "tls_pin": ""},  # TLS without its pin
        {"endpoint": "wss://node-b.example:7000", "tls_pin": "AB" * 32},  # not lowercase hex
        {"endpoint": "ws://" + "a" * 600, "tls_pin": ""},  # too long
    ],
)
def test_a_malformed_next_hop_is_refused_as_bad_ticket(tracker_key: Key, nxt: object) -> None:
    hops = _ticket()["hops"]
    hops[0]["next"] = nxt
    with pytest.raises(TicketError) as refused:
        _verifier(tracker_key).verify(sign_ticket(_ticket(hops=hops), tracker_key.sign))
    assert refused.value.reason == wire.BAD_TICKET
