"""The app's side of joining a network: preview the network, join it, say why not.

Pure (no Qt), so the join page (app/ui/screens/doctor/join.py) only draws and waits.
Everything here blocks on the network and runs through app/ui/tasks.py. The words
returned here are shown on the wizard's main path, so they are plain: no engineering
terms (issue 22 lists them); the exact reason goes to the log.
"""

from __future__ import annotations

import json
import logging
import secrets
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from core.invites import (
    CODE_RE,
    InviteError,
    InviteLink,
    NetworkInfo,
    check_network_info,
    fetch_network_info,
    join_network,
    parse_invite_link,
)
from core.joined_network import JoinedNetwork, load_joined_network, save_joined_network
from core.keystore import DEFAULT_PROFILE, load_or_create_identity
from core.tracker_client import TrackerClient
from core.tracker_key import key_fingerprint_b64

log = logging.getLogger(__name__)

# The node child the app starts runs without --profile, so the app joins for this one.
APP_PROFILE = DEFAULT_PROFILE
# What installers/build.py --network writes beside the app (installers/layout.py).
NETWORK_FILE = "network.json"

# Plain sentences for each way a join is refused (core and tracker reason codes).
_REFUSALS = {
    "invite-used-up": "This invite has already been used as many times as it allows. "
    "Ask the person who invited you for a new one.",
    "invite-expired": "This invite has expired. Ask the person who invited you for a new one.",
    "invite-revoked": "This invite was withdrawn by the network's organiser. "
    "Ask them for a new one.",
    "invite-unknown": "This network does not know that invite. Check that you copied all "
    "of it, or ask for a new one.",
    "tracker-key-mismatch": "This link does not lead to the network it was made for, so "
    "nothing was sent. Ask the person who invited you for a fresh link.",
    "bad-tracker-answer": "The network's answer could not be trusted, so nothing was saved. "
    "Try again later, or ask for a fresh link.",
    "bad-invite-link": "That is not a whole invite link. Copy all of it: it starts with "
    "meshnet://join?",
    "bad-network-address": "Type the network's address as its organiser gave it, starting "
    "with https:// or http://.",
    "bad-invite-code": "Type the invite code as you were given it (letters, digits and dashes).",
    "tracker-unreachable": "The network could not be reached. Check this computer is online "
    "and try again.",
}


NO_NETWORK_SENTENCE = (
    "This computer has not joined a network yet. Paste the invite you were sent on the "
    "Join a network page (Check this computer…), then press Contribute again."
)


@dataclass(frozen=True)
class Preview:
    """A network checked against its link, shown before the user agrees to join."""

    link: str  # the whole link to redeem (built from address + code when typed by hand)
    info: NetworkInfo

    @property
    def tracker_url(self) -> str:
        return parse_invite_link(self.link).tracker_url


def refusal_sentence(exc: BaseException) -> str | None:
    """The plain sentence for a refused join, or None when ``exc`` is none of those."""
    reason = getattr(exc, "reason", None)
    if isinstance(reason, str) and reason in _REFUSALS:
        return _REFUSALS[reason]
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & {"TrackerUnreachable", "ConnectError", "TimeoutException"}:
        return _REFUSALS["tracker-unreachable"]
    return None


def link_from_parts(tracker_url: str, code: str) -> tuple[str, str]:
    """(address, code) typed by hand, checked; InviteError with the reason when not."""
    url, code = tracker_url.strip().rstrip("/"), code.strip()
    try:
        parse_invite_link(_build_link(url, "ABCD", "0" * 32))  # the address as a link has it
    except InviteError as exc:
        raise InviteError(_REFUSALS["bad-network-address"], reason="bad-network-address") from exc
    if not CODE_RE.match(code):
        raise InviteError(_REFUSALS["bad-invite-code"], reason="bad-invite-code")
    return url, code


def _build_link(tracker_url: str, code: str, fingerprint: str) -> str:
    return "meshnet://join?" + urlencode({"tracker": tracker_url, "code": code, "key": fingerprint})


def preview_link(link: str, *, timeout_s: float = 10.0) -> Preview:
    """Fetch what the network says about itself, checked against the link (sends no code)."""
    parsed = parse_invite_link(link)
    identity = load_or_create_identity(APP_PROFILE, None)
    with TrackerClient(parsed.tracker_url, identity, timeout_s=timeout_s) as client:
        info = fetch_network_info(client, parsed)
    return Preview(link.strip(), info)


def preview_parts(tracker_url: str, code: str, *, timeout_s: float = 10.0) -> Preview:
    """ "I run my own tracker": an address and a code, no link. The network's own key is
    taken as it answers now (there is no link to check it against) and pinned from then on."""
    url, code = link_from_parts(tracker_url, code)
    identity = load_or_create_identity(APP_PROFILE, None)
    challenge = secrets.token_hex(16)
    with TrackerClient(url, identity, timeout_s=timeout_s) as client:
        answer = client.network(challenge)
    fingerprint = key_fingerprint_b64(str(answer.get("tracker_public_key", "")))
    link = _build_link(url, code, fingerprint or "0" * 32)
    info = check_network_info(parse_invite_link(link), answer, challenge)
    return Preview(link, info)


def join_and_save(link: str, *, profile: str = APP_PROFILE) -> JoinedNetwork:
    """Redeem the invite for this computer and save the network; nothing saved on refusal."""
    identity = load_or_create_identity(profile, None)
    joined = join_network(link, identity)
    save_joined_network(profile, joined)
    log.info("the app joined %s at %s", joined.name, joined.tracker_url)
    return joined


def joined_network(profile: str = APP_PROFILE) -> JoinedNetwork | None:
    """The network the app's profile joined; None when none (or its file is unreadable)."""
    try:
        return load_joined_network(profile)
    except Exception as exc:  # a damaged file: the page offers to join again
        log.warning("cannot read the joined network: %s", exc)
        return None


def tracker_url_for(own_tracker_url: str, profile: str = APP_PROFILE) -> str | None:
    """The tracker the app talks to: the user's own ("I run my own tracker") when set,
    else the joined network's; None when there is neither (the user must join first)."""
    if own_tracker_url.strip():
        return own_tracker_url.strip()
    joined = joined_network(profile)
    return joined.tracker_url if joined else None


def app_folders() -> list[Path]:
    """Where an installer puts network.json: beside the app, and a macOS .app's Resources."""
    here = Path(sys.executable).resolve().parent
    return [here, here.parent / "Resources"]


def bundled_network_link(folders: Iterable[Path] | None = None) -> str | None:
    """The invite link a branded installer carries, or None (also for an unreadable file)."""
    for folder in app_folders() if folders is None else folders:
        path = folder / NETWORK_FILE
        if not path.is_file():
            continue
        try:
            link = json.loads(path.read_text(encoding="utf-8"))["link"]
            parse_invite_link(str(link))
        except Exception as exc:  # a bad file must not stop the app: the user can paste
            log.warning("ignoring %s: %s", path, exc)
            continue
        return str(link).strip()
    return None


__all__ = [
    "APP_PROFILE",
    "NETWORK_FILE",
    "NO_NETWORK_SENTENCE",
    "InviteLink",
    "Preview",
    "bundled_network_link",
    "join_and_save",
    "joined_network",
    "preview_link",
    "preview_parts",
    "refusal_sentence",
    "tracker_url_for",
]
