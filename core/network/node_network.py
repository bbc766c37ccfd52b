"""Which tracker `meshnet-node run` serves: the --tracker given, else the joined network."""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import ConfigError
from core.network.join_tokens import load_join_token
from core.network.joined_network import load_joined_network


@dataclass(frozen=True)
class NetworkToServe:
    tracker_url: str
    join_token: str | None
    key_fingerprint: str | None  # the key a joined network pinned; None for a bare --tracker


def network_to_serve(profile: str, tracker_url: str | None) -> NetworkToServe:
    joined = load_joined_network(profile)
    if tracker_url is None:
        if joined is None:
            raise ConfigError(
                "this node has joined no network: run `meshnet-node join LINK` with an "
                "invite link, or pass --tracker URL",
                reason="no-network",
            )
        return NetworkToServe(joined.tracker_url, joined.join_token, joined.key_fingerprint)
    if joined is not None and joined.tracker_url == tracker_url.rstrip("/"):
        return NetworkToServe(joined.tracker_url, joined.join_token, joined.key_fingerprint)
    # "I run my own tracker": a token from `meshnet-node login`, no key pinned.
    return NetworkToServe(tracker_url, load_join_token(tracker_url), None)
