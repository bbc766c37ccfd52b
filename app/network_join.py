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

from app.texts import text
from core.errors import InviteError
from core.identity.keypair import NodeIdentity
from core.identity.keystore import DEFAULT_PROFILE, fallback_identity_file, load_or_create_identity
from core.network.invites import (
    CODE_RE,
    InviteLink,
    NetworkInfo,
    check_network_info,
    fetch_network_info,
    join_network,
    parse_invite_link,
)
from core.network.joined_network import JoinedNetwork, load_joined_network, save_joined_network
from core.network.tracker_client import TrackerClient
from core.network.tracker_key import key_fingerprint_b64

log = logging.getLogger(__name__)

# The node child the app starts runs without --profile, so the app joins for this one.
APP_PROFILE = DEFAULT_PROFILE
# What installers/build.py --network writes beside the app (installers/layout.py).
NETWORK_FILE = "network.json"

# Each way a join is refused (core and tracker reason codes): app.texts "join.refused.<code>"
REFUSAL_REASONS: tuple[str, ...] = (
    "invite-used-up",
    "invite-expired",
    "invite-revoked",
    "invite-unknown",
    "tracker-key-mismatch",
    "bad-tracker-answer",
    "bad-invite-link",
    "bad-network-address",
    "bad-invite-code",
    "tracker-unreachable",
)


def refusal_text(reason: str) -> str:
    """The plain sentence for refusal ``reason`` (one of REFUSAL_REASONS), translated."""
    return text(f"join.refused.{reason}")


def no_network_sentence() -> str:
    """What to do while this computer has joined no network yet, translated."""
    return text("join.none-yet")


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
    if isinstance(reason, str) and reason in REFUSAL_REASONS:
        return refusal_text(reason)
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & {"TrackerUnreachable", "ConnectError", "TimeoutException"}:
        return refusal_text("tracker-unreachable")
    return None


def app_identity(profile: str = APP_PROFILE) -> NodeIdentity:
    """This computer's node identity as the app keeps it: in the OS keyring, or where
    none works in an owner-only file in the app's data folder (the node child is given
    the same file, app.node_command.identity_flags)."""
    return load_or_create_identity(profile, fallback_identity_file(profile))


def link_from_parts(tracker_url: str, code: str) -> tuple[str, str]:
    """(address, code) typed by hand, checked; InviteError with the reason when not."""
    url, code = tracker_url.strip().rstrip("/"), code.strip()
    try:
        parse_invite_link(_build_link(url, "ABCD", "0" * 32))  # the address as a link has it
    except InviteError as exc:
        raise InviteError(
            refusal_text("bad-network-address"), reason="bad-network-address"
        ) from exc
    if not CODE_RE.match(code):
        raise InviteError(refusal_text("bad-invite-code"), reason="bad-invite-code")
    return url, code


def _build_link(tracker_url: str, code: str, fingerprint: str) -> str:
    return "meshnet://join?" + urlencode({"tracker": tracker_url, "code": code, "key": fingerprint})


def preview_link(link: str, *, timeout_s: float = 10.0) -> Preview:
    """Fetch what the network says about itself, checked against the link (sends no code)."""
    parsed = parse_invite_link(link)
    identity = app_identity()
    with TrackerClient(parsed.tracker_url, identity, timeout_s=timeout_s) as client:
        info = fetch_network_info(client, parsed)
    return Preview(link.strip(), info)


def preview_parts(tracker_url: str, code: str, *, timeout_s: float = 10.0) -> Preview:
    """ "I run my own tracker": an address and a code, no link. The network's own key is
    taken as it answers now (there is no link to check it against) and pinned from then on."""
    url, code = link_from_parts(tracker_url, code)
    identity = app_identity()
    challenge = secrets.token_hex(16)
    with TrackerClient(url, identity, timeout_s=timeout_s) as client:
        answer = client.network(challenge)
    fingerprint = key_fingerprint_b64(str(answer.get("tracker_public_key", "")))
    link = _build_link(url, code, fingerprint or "0" * 32)
    info = check_network_info(parse_invite_link(link), answer, challenge)
    return Preview(link, info)


def join_and_save(link: str, *, profile: str = APP_PROFILE) -> JoinedNetwork:
    """Redeem the invite for this computer and save the network; nothing saved on refusal."""
    identity = app_identity(profile)
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
    "REFUSAL_REASONS",
    "InviteLink",
    "Preview",
    "bundled_network_link",
    "join_and_save",
    "joined_network",
    "no_network_sentence",
    "preview_link",
    "preview_parts",
    "refusal_sentence",
    "refusal_text",
    "tracker_url_for",
]
