"""Per-address throttle on requests that fail authentication.

Signed requests, admin tokens, submitter tokens and API keys are all checked
per request; an address guessing them should not get unlimited tries. This
middleware watches every answer: each 401 counts against the client's address
in a sliding one-minute window, and an address past the limit is answered 429
``auth-throttled`` before its request reaches a route, until the window frees.
Memory is bounded (idle windows dropped, oldest evicted past ``max_addresses``).
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

WINDOW_S = 60.0
MAX_ADDRESSES = 100_000
AUTH_THROTTLED = "auth-throttled"


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
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        host = str(client[0]) if client else "unknown"
        wait = self._wait(host)
        if wait is not None:
            await self._refuse(send, host, wait)
            return

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                self._count(host)
            await send(message)

        await self.app(scope, receive, watch)

    def _recent(self, host: str, now: float) -> deque[float]:
        window = self._failures.pop(host, None) or deque()
        while window and window[0] <= now - WINDOW_S:
            window.popleft()
        return window

    def _wait(self, host: str) -> float | None:
        now = self._clock()
        with self._lock:
            window = self._recent(host, now)
            if window:
                self._failures[host] = window
            if len(window) < self._per_minute:
                return None
            return window[0] + WINDOW_S - now

    def _count(self, host: str) -> None:
        now = self._clock()
        with self._lock:
            window = self._recent(host, now)
            window.append(now)
            self._failures[host] = window
            while len(self._failures) > self._max:
                self._failures.popitem(last=False)

    async def _refuse(self, send: Send, host: str, wait: float) -> None:
        body = json.dumps(
            {
                "reason": AUTH_THROTTLED,
                "detail": f"{host} failed authentication {self._per_minute} times in the last "
                f"minute; retry in {wait:.0f} s with valid credentials",
            }
        ).encode()
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
