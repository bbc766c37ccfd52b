"""Who may use the gateway, and how much.

With keys configured (``meshnet-tracker keys add``) every request needs
``Authorization: Bearer <key>``; a missing, wrong or revoked key is a 401 in
OpenAI's shape. With no key configured the gateway is open only to callers
on loopback, so a tracker started on a public address never serves strangers
by default.

Limits are per key and per minute, on requests and on tokens (prompt plus
completion), counted in a sliding window in this replica's memory; a caller
over a limit gets 429 with ``Retry-After`` saying when the window frees up.
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from tracker_service.errors import RateLimited, Unauthorized
from tracker_service.store.api_keys import active_key_count, find_api_key, touch_api_key
from tracker_service.store.db import Database

WINDOW_S = 60.0
KEYS_CACHE_S = 2.0


@dataclass(frozen=True)
class Caller:
    key_id: int | None  # None: no keys configured, a loopback caller
    label: str
    requests_per_minute: int | None
    tokens_per_minute: int | None
    host: str | None = None  # the address the request came from (own-traffic rule)

    @property
    def name(self) -> str:
        return f"key {self.key_id}" if self.key_id is not None else "loopback"


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class KeyCheck:
    """The bearer check; blocking (database), so async callers run it in a thread."""

    def __init__(
        self,
        database: Database,
        *,
        requests_per_minute: int,
        tokens_per_minute: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._db = database
        self._rpm = requests_per_minute
        self._tpm = tokens_per_minute
        self._clock = clock
        self._count_at = -1e18
        self._count = 0
        self._lock = threading.Lock()

    def keys_configured(self) -> bool:
        with self._lock:
            if self._clock() - self._count_at > KEYS_CACHE_S:
                with self._db.session() as session:
                    self._count = active_key_count(session)
                self._count_at = self._clock()
            return self._count > 0

    def authenticate(self, authorization: str | None, client_host: str | None) -> Caller:
        if not self.keys_configured():
            if is_loopback(client_host):
                return Caller(None, "loopback", None, None, client_host)
            raise Unauthorized(
                "this tracker has no API keys configured, so its gateway answers only on "
                "loopback; the operator can issue one with `meshnet-tracker keys add --label NAME`",
                code="no_api_keys",
            )
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized(
                "this gateway needs an API key: send 'Authorization: Bearer <key>' (the "
                "openai client's api_key); ask the tracker's operator for one"
            )
        with self._db.sessions.begin() as session:
            found = find_api_key(session, token.strip())
            if found is not None:
                touch_api_key(session, found.id, now=time.time())
        if found is None:
            raise Unauthorized(
                "the API key is not valid: it is unknown or was revoked; ask the tracker's "
                "operator for a new one"
            )
        return Caller(
            found.id,
            found.label,
            found.requests_per_minute if found.requests_per_minute is not None else self._rpm,
            found.tokens_per_minute if found.tokens_per_minute is not None else self._tpm,
            client_host,
        )


@dataclass
class _Window:
    requests: deque[float] = field(default_factory=deque)
    tokens: deque[tuple[float, int]] = field(default_factory=deque)
    token_total: int = 0


class RateLimiter:
    """Sliding one-minute windows per key: requests admitted and tokens used."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._windows: dict[int, _Window] = {}
        self._lock = threading.Lock()

    def admit(self, caller: Caller) -> None:
        """Count one request, or raise RateLimited saying when to come back."""
        if caller.key_id is None:
            return
        now = self._clock()
        with self._lock:
            window = self._windows.setdefault(caller.key_id, _Window())
            self._expire(window, now)
            rpm, tpm = caller.requests_per_minute, caller.tokens_per_minute
            if rpm is not None and len(window.requests) >= rpm:
                wait = window.requests[0] + WINDOW_S - now
                raise RateLimited(
                    f"{caller.name} ({caller.label or 'no label'}) made {rpm} requests in the "
                    f"last minute, its limit; retry in {wait:.0f} s",
                    retry_after_s=int(wait) + 1,
                )
            if tpm is not None and window.token_total >= tpm:
                wait = window.tokens[0][0] + WINDOW_S - now
                raise RateLimited(
                    f"{caller.name} ({caller.label or 'no label'}) used {window.token_total} "
                    f"tokens in the last minute, over its limit of {tpm}; retry in {wait:.0f} s",
                    retry_after_s=int(wait) + 1,
                )
            window.requests.append(now)

    def charge(self, caller: Caller, tokens: int) -> None:
        """Tokens a request used (prompt plus completion), counted against its key."""
        if caller.key_id is None or tokens <= 0:
            return
        now = self._clock()
        with self._lock:
            window = self._windows.setdefault(caller.key_id, _Window())
            window.tokens.append((now, tokens))
            window.token_total += tokens

    @staticmethod
    def _expire(window: _Window, now: float) -> None:
        horizon = now - WINDOW_S
        while window.requests and window.requests[0] <= horizon:
            window.requests.popleft()
        while window.tokens and window.tokens[0][0] <= horizon:
            window.token_total -= window.tokens.popleft()[1]


TOO_MANY_SESSIONS = "too_many_sessions"


class SessionCap:
    """Route sessions each key holds open at once (one per choice of ``n``).

    Tokens are charged when a request closes, so without this one key could hold
    hundreds of sessions open before any token limit applied. 0 turns the cap off;
    the loopback caller (no keys configured) is the operator and is not capped.
    """

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._open: dict[int, int] = {}
        self._lock = threading.Lock()

    def held(self, caller: Caller) -> int:
        return self._open.get(caller.key_id, 0) if caller.key_id is not None else 0

    def open(self, caller: Caller, sessions: int) -> Callable[[], None]:
        """Count `sessions` against the key, or raise RateLimited; returns the release."""
        key = caller.key_id
        if key is None or self.cap <= 0:
            return lambda: None
        with self._lock:
            held = self._open.get(key, 0)
            if held + sessions > self.cap:
                raise RateLimited(
                    f"{caller.name} ({caller.label or 'no label'}) has {held} route sessions "
                    f"open and may hold {self.cap} at once; wait for an answer to finish "
                    "(or ask for fewer choices, n) and retry",
                    code=TOO_MANY_SESSIONS,
                    retry_after_s=1,
                )
            self._open[key] = held + sessions
        released = False

        def release() -> None:
            nonlocal released
            with self._lock:
                if released:
                    return
                released = True
                left = self._open.get(key, 0) - sessions
                if left > 0:
                    self._open[key] = left
                else:
                    self._open.pop(key, None)

        return release
