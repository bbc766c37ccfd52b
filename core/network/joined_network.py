"""The network a node profile joined (``meshnet-node join``), kept beside its files.

One JSON file per profile, ``<data home>/networks/<profile>.json``, written 0600. It
holds the join token too: a token from an invite admits only the identity that
redeemed it (the tracker binds them), so the file is no key to the network on its own.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path

from core.errors import ConfigError
from core.identity.keystore import check_profile
from core.identity.private_file import write_private_file
from core.network.tracker_key import FINGERPRINT_RE
from core.paths import data_home

log = logging.getLogger(__name__)

SCHEMA = 1


@dataclass(frozen=True)
class JoinedNetwork:
    tracker_url: str
    key_fingerprint: str
    join_token: str
    name: str = ""
    operator: str = ""
    joined_at: float = 0.0


def network_file(profile: str) -> Path:
    return data_home() / "networks" / f"{check_profile(profile)}.json"


def save_joined_network(profile: str, joined: JoinedNetwork) -> Path:
    path = network_file(profile)
    document = {"schema": SCHEMA, **asdict(joined)}
    write_private_file(path, json.dumps(document, indent=2).encode("utf-8") + b"\n")
    return path


def load_joined_network(profile: str) -> JoinedNetwork | None:
    """The profile's joined network, None when it joined none; ConfigError when the file
    is damaged (the sentence says how to start over)."""
    path = network_file(profile)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise _damaged(path, str(exc)) from exc
    try:
        joined = JoinedNetwork(
            tracker_url=str(document["tracker_url"]),
            key_fingerprint=str(document["key_fingerprint"]),
            join_token=str(document["join_token"]),
            name=str(document.get("name", "")),
            operator=str(document.get("operator", "")),
            joined_at=float(document.get("joined_at", 0.0)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise _damaged(path, f"missing or wrong {exc}") from exc
    if not FINGERPRINT_RE.match(joined.key_fingerprint):
        raise _damaged(path, "the key fingerprint is not 32 hex characters")
    return joined


def _damaged(path: Path, why: str) -> ConfigError:
    return ConfigError(
        f"the joined network in {path} cannot be read ({why}); join again with "
        "`meshnet-node join LINK`",
        reason="bad-joined-network",
    )
