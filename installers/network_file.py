"""A branded installer's network: ``build.py --network LINK`` writes ``network.json``
beside the app, so its first run joins that network without anything pasted.

The link is checked as the node checks it (core/network/invites.py) before it is baked in.
The file holds the link and its parts; the app reads it (its first-run wizard).
"""

from __future__ import annotations

import json
from pathlib import Path

from core.network.invites import parse_invite_link
from installers.layout import MAC_APP_NAME, NETWORK_FILE

SCHEMA = 1


def network_document(link: str) -> dict[str, object]:
    parsed = parse_invite_link(link)  # InviteError with the sentence on a bad link
    return {
        "schema": SCHEMA,
        "link": link.strip(),
        "tracker_url": parsed.tracker_url,
        "code": parsed.code,
        "key_fingerprint": parsed.key_fingerprint,
    }


def network_places(bundle: Path, dist: Path) -> list[Path]:
    """Where the app finds it: beside the executables, and in a macOS .app's Resources."""
    places = [bundle / NETWORK_FILE]
    mac_app = dist / MAC_APP_NAME
    if mac_app.is_dir():
        places.append(mac_app / "Contents" / "Resources" / NETWORK_FILE)
    return places


def place_network(bundle: Path, dist: Path, link: str | None) -> list[Path]:
    """Write the network file for `link`, or remove a stale one when there is none (an
    unbranded build must not carry an earlier build's network). Returns what was written."""
    document = None if link is None else network_document(link)
    written = []
    for path in network_places(bundle, dist):
        if document is None:
            path.unlink(missing_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        written.append(path)
    return written
