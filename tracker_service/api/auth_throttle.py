"""Per-address throttle on requests that fail authentication.

Signed requests, admin tokens, submitter tokens, API keys and join tokens are
all checked per request; an address guessing them should not get unlimited
tries. This middleware watches every answer and counts each 401 against the
client's address in a sliding one-minute window; an address past the limit is
answered 429 ``auth-throttled`` before its request reaches a route, until the
window frees (under ``/v1`` in OpenAI's error shape, code ``auth_throttled``).
Memory is bounded (idle windows dropped, oldest evicted past ``max_addresses``).

Not every request shares one count, because one client behind a shared NAT
must not take the whole address off the network:

* credential requests (API keys, submitter and admin tokens: everything not
  below) count in, and are throttled by, the address's ``credentials`` window;
* signed node requests (register, heartbeat, deregister) count in the
  ``node`` window, so failing logins elsewhere never block them. Heartbeat and
  deregister are never refused here: an Ed25519 signature cannot be guessed.
  Registration is refused once the node window is full, and a 403 there (a
  guessed join token) counts as a failure;
* public reads (the status page, ``/api/v1/state``, static files) are never
  refused: they take no credential.

A 401 that a route marks as no guess (:func:`mark_not_a_guess`) is not counted:
an executor presenting its own session credential after it expired holds the
right secret, and a busy pool of executors behind one address re-registering
at once must not lock that address out.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tracker_service.api.body_limit import OPENAI_PREFIX
from tracker_service.api.routes.heartbeat import heartbeat_node_id
from tracker_service.domain.address_groups import address_group
from tracker_service.errors import RateLimited
from tracker_service.gateway import faces

WINDOW_S = 60.0
MAX_ADDRESSES = 100_000
AUTH_THROTTLED = "auth-throttled"
AUTH_THROTTLED_CODE = "auth_throttled"  # the same refusal's OpenAI-shape code under /v1

CREDENTIALS = "credentials"
NODE = "node"
PUBLIC = "public"
REGISTER_PATH = "/api/v1/nodes/register"
_NODES_PREFIX = "/api/v1/nodes/"
_DEREGISTER_SUFFIX = "/deregister"
_PUBLIC_PATHS = frozenset({"/", "/api/v1/state", "/api/v1/network"})
# An unknown invite code (redeemed, or its page asked for) is a guess that must cost.
_INVITE_PATHS = ("/api/v1/invites/redeem", "/join/")
_PUBLIC_PREFIX = "/static/"
# Set in the ASGI scope by a route whose 401 is not a failed guess (see mark_not_a_guess).
_NOT_A_GUESS = "meshnet.auth_not_a_guess"


def mark_not_a_guess(scope: Scope) -> None:
    """Say this request's 401 is not a failed guess (an expired credential of its own)."""
    scope[_NOT_A_GUESS] = True


def door_of(scope: Scope) -> str:
    """Which window a request counts in: ``public``, ``node`` or ``credentials``."""
    method, path = scope["method"], scope["path"]
    if method in ("GET", "HEAD") and (path in _PUBLIC_PATHS or path.startswith(_PUBLIC_PREFIX)):
        return PUBLIC
    if method == "POST" and (path == REGISTER_PATH or _is_deregister(path)):
        return NODE
    if heartbeat_node_id(scope) is not None:
        return NODE
    return CREDENTIALS


def _is_deregister(path: str) -> bool:
    if not (path.startswith(_NODES_PREFIX) and path.endswith(_DEREGISTER_SUFFIX)):
        return False
    node_id = path[len(_NODES_PREFIX) : -len(_DEREGISTER_SUFFIX)]
    return bool(node_id) and "/" not in node_id


def _refusable(scope: Scope, door: str) -> bool:
    """May a full window refuse this request? Only where a credential could be guessed."""
    if door == PUBLIC:
        return False
    if door == NODE:
        return scope["path"] == REGISTER_PATH  # the join token; a signature is unguessable
    return True


def _is_failure(scope: Scope, door: str, status: int) -> bool:
    if status == 401:
        return True
    if status == 404 and scope["path"].startswith(_INVITE_PATHS):
        return True
    # A registration's 403 is a refused join token: guessing one must cost too.
    return door == NODE and status == 403 and scope["path"] == REGISTER_PATH


class FailedAuthThrottle:
    def __init__(
        self,
        app: ASGIApp,
        *,
        per_minute: int,
        clock: Callable[[], float] = time.monotonic,
        max_addresses: int = MAX_ADDRESSES,
    ) -> None:
        self.app = app
        self._per_minute = per_minute
        self._clock = clock
        self._max = max_addresses
        self._failures: OrderedDict[tuple[str, str], deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        host = address_group(str(client[0]) if client else None)
        door = door_of(scope)
        if _refusable(scope, door):
            wait = self._wait((host, door))
            if wait is not None:
                await self._refuse(send, scope["path"], host, wait)
                return

        async def watch(message: Message) -> None:
            if (
                message["type"] == "http.response.start"
                and _is_failure(scope, door, message["status"])
                and not scope.get(_NOT_A_GUESS)
            ):
                self._count((host, door))
            await send(message)

        await self.app(scope, receive, watch)

    def _recent(self, window_key: tuple[str, str], now: float) -> deque[float]:
        window = self._failures.pop(window_key, None) or deque()
        while window and window[0] <= now - WINDOW_S:
            window.popleft()
        return window

    def _wait(self, window_key: tuple[str, str]) -> float | None:
        now = self._clock()
        with self._lock:
            window = self._recent(window_key, now)
            if window:
                self._failures[window_key] = window
            if len(window) < self._per_minute:
                return None
            return window[0] + WINDOW_S - now

    def _count(self, window_key: tuple[str, str]) -> None:
        now = self._clock()
        with self._lock:
            window = self._recent(window_key, now)
            window.append(now)
            self._failures[window_key] = window
            while len(self._failures) > self._max:
                self._failures.popitem(last=False)

    async def _refuse(self, send: Send, path: str, host: str, wait: float) -> None:
        sentence = (
            f"{host} failed authentication {self._per_minute} times in the last "
            f"minute; retry in {wait:.0f} s with valid credentials"
        )
        # Under /v1 the refusal is in OpenAI's shape, so its clients can read it.
        refusal: dict[str, object]
        face = faces.error_shape(path)  # an API face's paths: that API's shape
        if face is not None:
            refusal = face(429, AUTH_THROTTLED_CODE, sentence, None)
        elif path == "/v1" or path.startswith(OPENAI_PREFIX):
            refusal = RateLimited(sentence, code=AUTH_THROTTLED_CODE).body()
        else:
            refusal = {"reason": AUTH_THROTTLED, "detail": sentence}
        body = json.dumps(refusal).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 429,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"retry-after", str(int(wait) + 1).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
