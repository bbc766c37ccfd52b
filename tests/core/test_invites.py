"""Joining with an invite link: parsing, the tracker key checked before the code is sent
(httpx.MockTransport records every request), the signed answers, the saved network."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from core.errors import ConfigError, InviteError, TrackerCallFailed, TrackerRefused
from core.identity.keypair import NodeIdentity
from core.identity.signing import HEADER_SIGNATURE, verify_signed_request
from core.network.invites import (
    INVITE_REDEEMED_DOMAIN,
    NETWORK_INFO_DOMAIN,
    join_network,
    parse_invite_link,
)
from core.network.joined_network import (
    JoinedNetwork,
    load_joined_network,
    network_file,
    save_joined_network,
)
from core.network.node_network import network_to_serve
from core.network.tracker_client import TrackerClient
from core.network.tracker_key import key_fingerprint
from tests.support.documents import sign_document

NODE = NodeIdentity.from_seed(bytes(range(32)))
TRACKER = NodeIdentity.from_seed(bytes(range(1, 33)))
IMPOSTOR = NodeIdentity.from_seed(bytes(range(2, 34)))
URL = "http://tracker.test:8765"
CODE = "ABCD-EFGH-JKMN"


def _link(key: str | None = None, **overrides: str) -> str:
    fields = {"tracker": URL, "code": CODE, "key": key or key_fingerprint(TRACKER.public_key_raw)}
    fields.update(overrides)
    return "meshnet://join?" + urlencode(fields)


class FakeTracker:
    """GET /api/v1/network and POST /api/v1/invites/redeem, signed by `signer`."""

    def __init__(self, signer: NodeIdentity = TRACKER) -> None:
        self.signer = signer
        self.requests: list[httpx.Request] = []
        self.tamper: Callable[[dict[str, Any]], None] = lambda _document: None
        self.redeem_status = 200

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.url.path == "/api/v1/network":
            document: dict[str, Any] = {
                "name": "Llama Club",
                "operator": "Ada",
                "description": "questions answered",
                "models": [{"artifact_id": "tiny", "ready": True, "computers": 2}],
                "tracker_public_key": self.signer.public_key_b64,
                "challenge": request.url.params["challenge"],
            }
            document["signature"] = sign_document(self.signer, NETWORK_INFO_DOMAIN, document)
            self.tamper(document)
            return httpx.Response(200, json=document)
        if request.url.path == "/api/v1/invites/redeem":
            if self.redeem_status != 200:
                detail = {"reason": "invite-used-up", "detail": "this invite has been used"}
                return httpx.Response(self.redeem_status, json=detail)
            answer: dict[str, Any] = {
                "node_id": request.headers["X-Meshnet-Node"],
                "join_token": "mnj_fresh",
                "again": False,
                "nonce": request.headers["X-Meshnet-Nonce"],
            }
            answer["signature"] = sign_document(self.signer, INVITE_REDEEMED_DOMAIN, answer)
            return httpx.Response(200, json=answer)
        return httpx.Response(404, json={"reason": "not-found", "detail": "no"})

    @property
    def redeems(self) -> list[httpx.Request]:
        return [r for r in self.requests if r.url.path.endswith("/redeem")]


def test_a_link_is_parsed_and_checked() -> None:
    link = parse_invite_link("  " + _link(tracker=URL + "/") + "\n")
    assert link.tracker_url == URL and link.code == CODE
    assert link.key_fingerprint == key_fingerprint(TRACKER.public_key_raw)
    upper = parse_invite_link(_link(key=link.key_fingerprint.upper()))
    assert upper.key_fingerprint == link.key_fingerprint


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("https://tracker.test/join/ABCD-EFGH-JKMN", "meshnet://join?"),
        ("meshnet://leave?tracker=http://t&code=ABCD&key=" + "a" * 32, "meshnet://join?"),
        (_link(key="a" * 31), "fingerprint"),
        (_link(key="g" * 32), "fingerprint"),
        (_link(tracker="ftp://tracker.test"), "http(s)"),
        (_link(tracker="http://tracker.test:port"), "http(s)"),
        (_link(code="<script>"), "code"),
        ("meshnet://join?tracker=http://t&key=" + "a" * 32, "'code'"),
        (_link() + "&code=OTHER-CODE", "'code'"),
        ("meshnet://join?" + "x" * 3000, "at most"),
    ],
)
def test_a_bad_link_is_refused_with_what_to_do(text: str, says: str) -> None:
    with pytest.raises(InviteError) as refused:
        parse_invite_link(text)
    assert refused.value.reason == "bad-invite-link"
    assert says in str(refused.value)


def test_joining_checks_the_key_then_sends_a_signed_redeem() -> None:
    tracker = FakeTracker()
    joined = join_network(_link(), NODE, transport=httpx.MockTransport(tracker))
    assert [r.url.path for r in tracker.requests] == ["/api/v1/network", "/api/v1/invites/redeem"]
    assert len(tracker.requests[0].url.params["challenge"]) == 32
    redeem = tracker.redeems[0]
    assert json.loads(redeem.content) == {"public_key": NODE.public_key_b64, "code": CODE}
    headers = {name: redeem.headers[name] for name in ("X-Meshnet-Timestamp", "X-Meshnet-Nonce")}
    headers[HEADER_SIGNATURE] = redeem.headers[HEADER_SIGNATURE]
    assert verify_signed_request(
        "POST", redeem.url.path, redeem.content, headers, NODE.public_key_b64
    )
    assert joined == JoinedNetwork(
        tracker_url=URL,
        key_fingerprint=key_fingerprint(TRACKER.public_key_raw),
        join_token="mnj_fresh",
        name="Llama Club",
        operator="Ada",
        joined_at=joined.joined_at,
    )


def test_a_tracker_with_another_key_is_refused_before_the_code_is_sent() -> None:
    impostor = FakeTracker(signer=IMPOSTOR)  # signs validly, with its own key
    with pytest.raises(InviteError) as refused:
        join_network(_link(), NODE, transport=httpx.MockTransport(impostor))
    assert refused.value.reason == "tracker-key-mismatch"
    assert "not sent" in str(refused.value)
    assert impostor.redeems == []
    assert all(CODE not in str(r.url) and CODE.encode() not in r.content for r in impostor.requests)


@pytest.mark.parametrize(
    "tamper",
    [
        lambda d: d.update(name="Evil Club"),  # the signature no longer covers it
        lambda d: d.update(challenge="00" * 16),  # an old answer replayed
        lambda d: d.update(signature="AAAA"),
    ],
)
def test_an_answer_the_key_did_not_sign_is_refused_before_the_code_is_sent(
    tamper: Callable[[dict[str, Any]], None],
) -> None:
    tracker = FakeTracker()
    tracker.tamper = tamper
    with pytest.raises(InviteError) as refused:
        join_network(_link(), NODE, transport=httpx.MockTransport(tracker))
    assert refused.value.reason == "bad-tracker-answer"
    assert tracker.redeems == []


def test_a_refused_code_carries_the_trackers_reason() -> None:
    tracker = FakeTracker()
    tracker.redeem_status = 410
    with pytest.raises(TrackerRefused) as refused:
        join_network(_link(), NODE, transport=httpx.MockTransport(tracker))
    assert refused.value.reason == "invite-used-up"


def test_the_joined_network_is_saved_privately_per_profile_and_served_by_default() -> None:
    with pytest.raises(ConfigError) as none:
        network_to_serve("club", None)
    assert none.value.reason == "no-network" and "meshnet-node join" in str(none.value)
    joined = JoinedNetwork(URL, "ab" * 16, "mnj_secret", "Llama Club", "Ada", 5.0)
    path = save_joined_network("club", joined)
    assert path == network_file("club")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_joined_network("club") == joined
    assert load_joined_network("other") is None
    served = network_to_serve("club", None)
    assert (served.tracker_url, served.join_token, served.key_fingerprint) == (
        URL,
        "mnj_secret",
        "ab" * 16,
    )
    assert network_to_serve("club", URL + "/").key_fingerprint == "ab" * 16
    own = network_to_serve("club", "http://my-own-tracker:8765")
    assert own.key_fingerprint is None and own.tracker_url == "http://my-own-tracker:8765"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError) as damaged:
        load_joined_network("club")
    assert damaged.value.reason == "bad-joined-network"


def test_registration_refuses_a_tracker_whose_key_is_not_the_joined_one() -> None:
    def handler(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            json={
                "node_id": NODE.node_id,
                "tracker_public_key": IMPOSTOR.public_key_b64,
                "heartbeat_interval_s": 5,
                "session": {"credential": {"expires_at": 1.0}},
            },
        )

    pinned = key_fingerprint(TRACKER.public_key_raw)
    client = TrackerClient(
        URL, NODE, key_fingerprint=pinned, transport=httpx.MockTransport(handler)
    )
    with pytest.raises(TrackerCallFailed) as refused:
        client.register({}, {}, "ws://127.0.0.1:1")
    assert refused.value.reason == "tracker-key-mismatch"
    unpinned = TrackerClient(URL, NODE, transport=httpx.MockTransport(handler))
    assert unpinned.register({}, {}, "ws://127.0.0.1:1").node_id == NODE.node_id
