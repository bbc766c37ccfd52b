"""Joining a network with an invite link: check the tracker's key, then trade the code.

A link is ``meshnet://join?tracker=<url>&code=<code>&key=<fingerprint>`` (docs/wire.md#invites).
The node first asks the tracker to describe itself, signed with a challenge of the node's
own (GET /api/v1/network): only when that key's fingerprint is the link's ``key`` and the
signature holds is the code sent. A forwarded or forged link that points elsewhere is
refused with nothing sent but the challenge, so it cannot capture a contributor.
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from core.errors import InviteError
from core.identity.keypair import NodeIdentity
from core.identity.signing import verify_document
from core.network.joined_network import JoinedNetwork
from core.network.tracker_client import TRACKER_KEY_MISMATCH, TrackerClient
from core.network.tracker_key import FINGERPRINT_RE, key_fingerprint_b64

log = logging.getLogger(__name__)

LINK_SCHEME = "meshnet"
NETWORK_INFO_DOMAIN = b"meshnet.network-info.v1\n"
INVITE_REDEEMED_DOMAIN = b"meshnet.invite-redeemed.v1\n"
CODE_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z-]{3,63}$")
MAX_LINK_CHARS = 2048

BAD_INVITE_LINK = InviteError.reason
BAD_TRACKER_ANSWER = "bad-tracker-answer"


@dataclass(frozen=True)
class InviteLink:
    tracker_url: str
    code: str
    key_fingerprint: str


@dataclass(frozen=True)
class NetworkInfo:
    """What the tracker says about its network, its signature checked."""

    name: str
    operator: str
    description: str
    models: tuple[str, ...]
    raw: dict[str, Any]


def parse_invite_link(text: str) -> InviteLink:
    """Parse and check a ``meshnet://join`` link; InviteError with what is wrong."""
    text = text.strip()
    if len(text) > MAX_LINK_CHARS:
        raise InviteError(f"an invite link is at most {MAX_LINK_CHARS} characters")
    parts = urlsplit(text)
    if parts.scheme != LINK_SCHEME or parts.netloc != "join" or parts.path not in ("", "/"):
        raise InviteError(
            f"{text[:80]!r} is not an invite link; copy the whole link that starts with "
            "meshnet://join? (the invite page shows it)"
        )
    fields = parse_qs(parts.query, keep_blank_values=True)
    values: dict[str, str] = {}
    for name in ("tracker", "code", "key"):
        given = fields.get(name, [])
        if len(given) != 1 or not given[0]:
            raise InviteError(f"the invite link has no single '{name}'; copy the whole link again")
        values[name] = given[0].strip()
    return InviteLink(
        tracker_url=_tracker_url(values["tracker"]),
        code=_code(values["code"]),
        key_fingerprint=_fingerprint(values["key"]),
    )


def _tracker_url(url: str) -> str:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        parts = urlsplit("")
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
        raise InviteError(f"the invite's tracker {url[:80]!r} is not an http(s) address")
    return url.rstrip("/")


def _code(code: str) -> str:
    if not CODE_RE.match(code):
        raise InviteError("the invite's code is not a code; copy the whole link again")
    return code


def _fingerprint(key: str) -> str:
    key = key.lower()
    if not FINGERPRINT_RE.match(key):
        raise InviteError(
            "the invite's key is not a tracker key fingerprint (32 hex characters); "
            "copy the whole link again"
        )
    return key


def check_network_info(link: InviteLink, answer: dict[str, Any], challenge: str) -> NetworkInfo:
    """The tracker's self-description, refused unless its key is the link's key and it
    signed this very challenge."""
    public_key = str(answer.get("tracker_public_key", ""))
    found = key_fingerprint_b64(public_key)
    if found != link.key_fingerprint:
        raise InviteError(
            f"the tracker at {link.tracker_url} has key {found or 'none'}, but the invite names "
            f"{link.key_fingerprint}: it may not be the network you were invited to, so the "
            "invite code was not sent. Ask the operator for a fresh link.",
            reason=TRACKER_KEY_MISMATCH,
        )
    document = dict(answer)
    signature = str(document.pop("signature", ""))
    if document.get("challenge") != challenge or not verify_document(
        public_key, NETWORK_INFO_DOMAIN, document, signature
    ):
        raise InviteError(
            f"the tracker at {link.tracker_url} did not sign its answer with its key; the "
            "invite code was not sent",
            reason=BAD_TRACKER_ANSWER,
        )
    models = tuple(
        str(m.get("artifact_id", "")) for m in document.get("models") or [] if isinstance(m, dict)
    )
    return NetworkInfo(
        name=str(document.get("name", "")),
        operator=str(document.get("operator", "")),
        description=str(document.get("description", "")),
        models=models,
        raw=document,
    )


def _check_redeemed(
    identity: NodeIdentity, info: NetworkInfo, answer: dict[str, Any], nonce: str
) -> str:
    document = dict(answer)
    signature = str(document.pop("signature", ""))
    token = document.get("join_token")
    if (
        not isinstance(token, str)
        or not token
        or document.get("node_id") != identity.node_id
        or document.get("nonce") != nonce
        or not verify_document(
            str(info.raw["tracker_public_key"]), INVITE_REDEEMED_DOMAIN, document, signature
        )
    ):
        raise InviteError(
            "the tracker's answer to the invite is not signed for this node; nothing was saved",
            reason=BAD_TRACKER_ANSWER,
        )
    return token


def fetch_network_info(client: TrackerClient, link: InviteLink) -> NetworkInfo:
    """Ask the tracker who it is (nothing secret is sent) and check it against the link."""
    challenge = secrets.token_hex(16)
    return check_network_info(link, client.network(challenge), challenge)


def join_network(
    link_text: str,
    identity: NodeIdentity,
    *,
    transport: httpx.BaseTransport | None = None,
    timeout_s: float = 10.0,
    ca_file: str | Path | None = None,
) -> JoinedNetwork:
    """Check the tracker's key, redeem the code for this identity, return what to save."""
    link = parse_invite_link(link_text)
    with TrackerClient(
        link.tracker_url,
        identity,
        key_fingerprint=link.key_fingerprint,
        timeout_s=timeout_s,
        transport=transport,
        ca_file=ca_file,
    ) as client:
        info = fetch_network_info(client, link)
        nonce = secrets.token_hex(16)
        token = _check_redeemed(identity, info, client.redeem_invite(link.code, nonce), nonce)
    log.info("joined %s at %s as node %s", info.name, link.tracker_url, identity.node_id)
    return JoinedNetwork(
        tracker_url=link.tracker_url,
        key_fingerprint=link.key_fingerprint,
        join_token=token,
        name=info.name,
        operator=info.operator,
        joined_at=time.time(),
    )
