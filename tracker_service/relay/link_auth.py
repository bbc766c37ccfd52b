"""The node's link handshake: the project's signed request, on ``GET /relay/v1/link``.

The node sends the four signed-request headers plus its public key (a relay
has no registry): the key must hash to the node id, the signature must cover
this method and path, the timestamp must be inside the window and the nonce
unseen. Nonces are remembered in memory for the window only; a restarted
relay forgets them, which replays cannot exploit because their timestamps age
out with the window.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping

from tracker_service.domain.keys import verify_ed25519
from tracker_service.domain.wire import (
    HEADER_NODE,
    HEADER_NONCE,
    HEADER_SIGNATURE,
    HEADER_TIMESTAMP,
    PUBLIC_KEY_BYTES,
    b64decode_exact,
    is_node_id,
    node_id_for,
    parse_nonce,
    parse_timestamp,
    signed_request_message,
)
from tracker_service.errors import RelayLinkRefused, WireFormatError

HEADER_PUBLIC_KEY = "X-Meshnet-Public-Key"
HEADER_MAX_MESSAGE = "X-Meshnet-Max-Message"  # the node's cap on one client message


class LinkAuthenticator:
    def __init__(
        self,
        window_s: float = 300.0,
        *,
        capacity: int = 100_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._window_s = window_s
        self._capacity = capacity
        self._clock = clock
        self._seen: OrderedDict[tuple[str, str], float] = OrderedDict()

    def verify(self, method: str, path: str, headers: Mapping[str, str]) -> str:
        """The authenticated node id, or RelayLinkRefused."""
        try:
            node_id = headers[HEADER_NODE]
            timestamp = parse_timestamp(headers[HEADER_TIMESTAMP])
            nonce = parse_nonce(headers[HEADER_NONCE])
            signature = headers[HEADER_SIGNATURE]
            public_key = b64decode_exact(
                headers[HEADER_PUBLIC_KEY], PUBLIC_KEY_BYTES, "the public key"
            )
        except KeyError as exc:
            raise RelayLinkRefused(f"the link request lacks the {exc.args[0]} header") from exc
        except WireFormatError as exc:
            raise RelayLinkRefused(str(exc)) from exc
        if not is_node_id(node_id) or node_id_for(public_key) != node_id:
            raise RelayLinkRefused("the node id is not the hash of the public key sent")
        now = self._clock()
        if abs(now - timestamp) > self._window_s:
            raise RelayLinkRefused(
                f"the signed timestamp is {now - timestamp:+.0f} s from the relay's clock; "
                "check this computer's clock"
            )
        message = signed_request_message(method, path, timestamp, nonce, b"")
        if not verify_ed25519(public_key, signature, message):
            raise RelayLinkRefused("the link request's signature does not verify")
        self._forget(now)
        if (node_id, nonce) in self._seen:
            raise RelayLinkRefused("the link request's nonce was used before (a replay)")
        self._seen[(node_id, nonce)] = now
        return node_id

    def _forget(self, now: float) -> None:
        while self._seen and (
            len(self._seen) >= self._capacity
            or next(iter(self._seen.values())) < now - 2 * self._window_s
        ):
            self._seen.popitem(last=False)
