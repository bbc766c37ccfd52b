"""``previous_response_id``: the conversations of recent Responses, per key, bounded, with a TTL.

A response stored here (``store`` true, OpenAI's default) is its conversation as
internal chat messages: the input, earlier turns included, and the answer. A later
request naming it continues that conversation. Entries belong to the key that made
them (another key is told the id is unknown), expire ``ttl_s`` after they were made,
and each key keeps at most ``per_key`` of them (the oldest go first), so memory is
bounded by keys x ``per_key``; the store lives in this replica's memory (a replica
that did not make the response does not know it, and a restart forgets them all).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tracker_service.errors import BadRequest

KeyId = int | None  # None: a loopback caller on a tracker with no keys


@dataclass(frozen=True)
class Stored:
    messages: tuple[dict[str, Any], ...]  # internal chat messages, the answer last
    expires_at: float


class ResponseStore:
    def __init__(
        self,
        *,
        ttl_s: float,
        per_key: int,
        max_keys: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl_s = ttl_s
        self.per_key = per_key
        self._max_keys = max_keys
        self._clock = clock
        self._lock = threading.Lock()
        self._keys: OrderedDict[KeyId, OrderedDict[str, Stored]] = OrderedDict()

    def put(self, key: KeyId, response_id: str, messages: list[dict[str, Any]]) -> None:
        if self.per_key <= 0:
            return
        now = self._clock()
        with self._lock:
            entries = self._keys.setdefault(key, OrderedDict())
            self._keys.move_to_end(key)
            entries[response_id] = Stored(tuple(messages), now + self.ttl_s)
            self._drop_expired(entries, now)
            while len(entries) > self.per_key:
                entries.popitem(last=False)
            while len(self._keys) > self._max_keys:
                self._keys.popitem(last=False)

    def conversation(self, key: KeyId, response_id: str) -> list[dict[str, Any]]:
        """The stored conversation of `response_id`; a 400 naming the field if unknown."""
        now = self._clock()
        with self._lock:
            entries = self._keys.get(key)
            found = entries.get(response_id) if entries is not None else None
            if entries is not None:
                self._drop_expired(entries, now)
        if found is None or found.expires_at <= now:
            raise BadRequest(
                f"previous response '{response_id}' was not found: responses are kept for "
                f"{int(self.ttl_s)} s, at most {self.per_key} per key, only when stored "
                "(store: true) and only for the key that made them; send the conversation "
                "as input instead",
                code="previous_response_not_found",
                param="previous_response_id",
            )
        return [dict(m) for m in found.messages]

    def __len__(self) -> int:
        with self._lock:
            return sum(len(e) for e in self._keys.values())

    @staticmethod
    def _drop_expired(entries: OrderedDict[str, Stored], now: float) -> None:
        # Entries are in insertion order, so expiry order: stop at the first live one.
        while entries:
            first = next(iter(entries.values()))
            if first.expires_at > now:
                return
            entries.popitem(last=False)
