"""Which relay a node should use, and whether a registered endpoint is a relayed one.

A relayed endpoint is ``ws(s)://relay-host:port/<prefix>/relay/<node_id>``: the
relay's base URL plus the node id. Reachability and file fetches append their
paths to it; a hop's session goes through ``/v1/tunnel`` as TLS pinned to the
node (security/relay_tunnel.py). Registration admits such an endpoint only when
:meth:`RelayDirectory.known` says the relay is one this tracker offers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from tracker_service.domain.wire import is_node_id
from tracker_service.relay.routes import RELAY_PREFIX

RELAYED_SENTENCE = (
    "serving through a relay: the tracker cannot dial this node directly (a home router or "
    "firewall drops inbound connections, or the node was started with --relay), so clients "
    "reach it through {relay}"
)
RELAYED_BECAUSE = "serving through a relay: {why}; clients reach it through {relay}"


def relay_of(endpoint: str) -> str | None:
    """The relay base URL of a relayed endpoint, or None for a direct one."""
    try:
        parts = urlsplit(endpoint)
    except ValueError:
        return None
    head, _, tail = parts.path.rstrip("/").rpartition("/")
    if not head.endswith(RELAY_PREFIX) or not is_node_id(tail):
        return None
    return urlunsplit((parts.scheme, parts.netloc, head, "", ""))


def relayed_sentence(endpoint: str, why: str = "") -> str | None:
    """Why a node is relayed, in a sentence: the node's own reason when it gave one
    (registration's ``relay_reason``), else the generic one."""
    relay = relay_of(endpoint)
    if relay is None:
        return None
    if why:
        return RELAYED_BECAUSE.format(why=why.rstrip(". "), relay=relay)
    return RELAYED_SENTENCE.format(relay=relay)


@dataclass(frozen=True)
class RelayDirectory:
    """The relays this tracker offers: the operator's list, else its own (embedded)."""

    urls: tuple[str, ...] = ()
    embedded: bool = True

    @classmethod
    def from_setting(cls, urls: str, embedded: bool) -> RelayDirectory:
        listed = tuple(u.strip().rstrip("/") for u in urls.split(",") if u.strip())
        return cls(listed, embedded)

    def offer(self, node_id: str, tracker_base_url: str) -> str | None:
        """The relay URL for this node: one of the listed relays (spread by node id), or
        the tracker's own, as the node reached it."""
        if self.urls:
            index = int(hashlib.sha256(node_id.encode()).hexdigest(), 16) % len(self.urls)
            return self.urls[index]
        if not self.embedded:
            return None
        parts = urlsplit(tracker_base_url)
        scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, "ws")
        return urlunsplit((scheme, parts.netloc, parts.path.rstrip("/") + RELAY_PREFIX, "", ""))

    def known(self, endpoint: str, tracker_base_url: str) -> bool:
        """True when a relayed endpoint names a relay this tracker offers."""
        relay = relay_of(endpoint)
        if relay is None:
            return False
        return relay in self.urls or (
            not self.urls and self.embedded and relay == self.offer("", tracker_base_url)
        )


def is_relayed(endpoint: str) -> bool:
    return relay_of(endpoint) is not None


__all__: Sequence[str] = ("RelayDirectory", "is_relayed", "relay_of", "relayed_sentence")
