"""Each fingerprint's route candidates, kept in memory between route requests.

Reading 10,000 live nodes costs tens of milliseconds per route; reading the
recipe row costs well under one. So a planner keeps the candidate list of each
fingerprint and, on every request, reads only the recipe row: the list is
used as long as

- the recipe's ``routing_version`` is the one it was read at (every change
  that adds or removes a routable node bumps it in its own transaction:
  registration, deregistration, removal, ban, quarantine, a reachability flip,
  a ledger change; store/routing_version.py), so a change made by any worker
  process is seen by all at the next request;
- no cached node's ``live_until`` has passed (liveness expiry writes nothing,
  so the entry ends at the earliest window it holds; heartbeats only move
  windows later, and a re-read picks them up);
- it is younger than ``max_age_s``, so load figures from heartbeats stay fresh.

The version is read before the list, so a list is never older than its version.
The fill also reads what the tracker measured of the model's nodes
(store/node_speeds.py), which route formation weighs instead of their claims: a
new measurement counts from the next fill, within ``max_age_s``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from tracker_service.domain.measured_speed import MeasuredSpeed
from tracker_service.domain.route_formation import Candidate
from tracker_service.store.db import Database
from tracker_service.store.node_speeds import measured_speeds
from tracker_service.store.route_candidates import (
    Key,
    RecipeInfo,
    recipe_info,
    route_candidates_until,
)

log = logging.getLogger(__name__)

DEFAULT_MAX_AGE_S = 5.0


@dataclass(frozen=True)
class _Entry:
    version: int
    candidates: tuple[Candidate, ...]
    valid_until: float  # wall clock: the earliest cached live_until, or read time + max age
    measured: Mapping[str, MeasuredSpeed] = field(default_factory=dict)  # node_id ->


@dataclass
class CacheStats:
    hits: int = 0
    fills: int = 0


class CandidateCache:
    """``get(key)`` -> (the recipe's ledger row, its live reachable active nodes)."""

    def __init__(
        self,
        database: Database,
        *,
        max_age_s: float = DEFAULT_MAX_AGE_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = database
        self._max_age_s = max_age_s
        self._clock = clock
        self._entries: dict[Key, _Entry] = {}
        self._locks: dict[Key, threading.Lock] = {}
        self._guard = threading.Lock()
        self.stats = CacheStats()

    def get(
        self, key: Key, *, now: float | None = None
    ) -> tuple[RecipeInfo | None, list[Candidate]]:
        info, candidates = self.shared(key, now=now)
        return info, list(candidates)

    def shared(
        self, key: Key, *, now: float | None = None
    ) -> tuple[RecipeInfo | None, tuple[Candidate, ...]]:
        """As :meth:`get`, without a copy: the cached tuple itself, the same object
        until the list is re-read (the planner keys its per-list structures on it)."""
        now = self._clock() if now is None else now
        with self._db.session() as session:
            info = recipe_info(session, key)
            if info is None:
                self.forget(key)
                return None, ()
            entry = self._fresh(key, info.routing_version, now)
            if entry is None:
                # One reader per fingerprint refills; the others wait for its list
                # rather than each scanning 10,000 rows at once.
                with self._lock_of(key):
                    entry = self._fresh(key, info.routing_version, now)
                    if entry is None:
                        entry = self._fill(session, key, info.routing_version, now)
            else:
                self.stats.hits += 1
        return info, entry.candidates

    def measured(self, key: Key) -> Mapping[str, MeasuredSpeed]:
        """The measured speeds read with the fingerprint's current list (empty: none)."""
        entry = self._entries.get(key)
        return entry.measured if entry is not None else {}

    def forget(self, key: Key | None = None) -> None:
        """Drop one fingerprint's list (or all): the next request reads it again."""
        with self._guard:
            if key is None:
                self._entries.clear()
            else:
                self._entries.pop(key, None)

    def _fresh(self, key: Key, version: int, now: float) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is None or entry.version != version or now > entry.valid_until:
            return None
        return entry

    def _fill(self, session: Session, key: Key, version: int, now: float) -> _Entry:
        candidates, earliest = route_candidates_until(session, key, now=now)
        measured = measured_speeds(session, key[0])
        valid_until = min(now + self._max_age_s, earliest)
        entry = _Entry(version, tuple(candidates), valid_until, measured)
        with self._guard:
            self._entries[key] = entry
        self.stats.fills += 1
        log.debug("candidates of %s/%s re-read: %d", key[0][:12], key[1][:12], len(candidates))
        return entry

    def _lock_of(self, key: Key) -> threading.Lock:
        with self._guard:
            lock = self._locks.get(key)
            if lock is None:
                lock = self._locks[key] = threading.Lock()
            return lock
