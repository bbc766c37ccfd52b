"""Tokens served per hour over the last week, kept on this PC for the status window's chart.

The node reports a running total (`tokens_served` in its stats events) that starts
again at 0 on every node start, and on a resume after a pause. The history therefore
counts deltas: a sample from a new run (another `run_id`), or one whose total went
down, counts in full; a sample from the same run counts what was added since the
last one. The last (run_id, total) is saved with the buckets, so neither a node
restart nor an app restart counts a token twice or loses one.

The file is small JSON, written atomically (a temporary file renamed over the old
one). A file that cannot be read is renamed aside (``*.corrupt-<time>``) and a fresh
history starts, so a damaged file costs a chart, never the app.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from pathlib import Path
from typing import Any

from core.paths import data_home

log = logging.getLogger(__name__)

HOUR_S = 3600
HOURS_KEPT = 7 * 24
FORMAT_VERSION = 1


def default_history_path() -> Path:
    return data_home() / "app" / "usage_history.json"


def _hour(at: float) -> int:
    return math.floor(at / HOUR_S) * HOUR_S


class UsageHistory:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._buckets: dict[int, int] = {}  # hour start (epoch s) -> tokens served
        self._run_id: str | None = None
        self._last_total = 0
        self._all_time = 0  # every token counted on this PC, kept past the week's buckets
        self._dirty = False
        self._load()

    # persistence -----------------------------------------------------------------

    def _load(self) -> None:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return
        except OSError as exc:
            log.warning("usage history: cannot read %s (%s); starting afresh", self.path, exc)
            return
        try:
            self._parse(json.loads(raw))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            self._buckets, self._run_id, self._last_total = {}, None, 0
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            log.warning(
                "usage history: %s is unreadable (%s); moved it to %s and started afresh",
                self.path,
                exc,
                aside.name,
            )
            try:
                os.replace(self.path, aside)
            except OSError as move_exc:
                log.warning("usage history: could not move the bad file aside (%s)", move_exc)

    def _parse(self, data: Any) -> None:
        if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
            raise ValueError("not a usage history")
        buckets: dict[int, int] = {}
        for key, value in data["buckets"].items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"bad bucket {key}={value!r}")
            buckets[int(key)] = value
        last = data["last"]
        run_id, total = last["run_id"], last["total"]
        if run_id is not None and not isinstance(run_id, str):
            raise TypeError("run_id")
        if isinstance(total, bool) or not isinstance(total, int) or total < 0:
            raise TypeError("total")
        # files written before "all_time" existed start it from the week they kept
        all_time = data.get("all_time", sum(buckets.values()))
        if isinstance(all_time, bool) or not isinstance(all_time, int) or all_time < 0:
            raise TypeError("all_time")
        self._buckets, self._run_id, self._last_total = buckets, run_id, total
        self._all_time = max(all_time, sum(buckets.values()))

    def save(self) -> None:
        """Write the history if it changed; atomic, so a crash mid-write keeps the old file."""
        if not self._dirty:
            return
        data = {
            "version": FORMAT_VERSION,
            "buckets": {str(hour): tokens for hour, tokens in sorted(self._buckets.items())},
            "last": {"run_id": self._run_id, "total": self._last_total},
            "all_time": self._all_time,
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(self.path.name + ".tmp")
        with temporary.open("w", encoding="utf-8") as handle:
            json.dump(data, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.path)
        self._dirty = False

    # samples ---------------------------------------------------------------------

    def record(self, now: float, tokens_served_total: int, run_id: str) -> int:
        """Count one stats sample; returns the tokens it added."""
        total = max(0, int(tokens_served_total))
        if run_id != self._run_id or total < self._last_total:
            added = total  # a new run (or a reset counter) started from 0
        else:
            added = total - self._last_total
        if run_id != self._run_id or total != self._last_total:
            self._dirty = True
        self._run_id, self._last_total = run_id, total
        if added:
            hour = _hour(now)
            self._buckets[hour] = self._buckets.get(hour, 0) + added
            self._all_time += added
            self._dirty = True
        self._prune(now)
        return added

    def _prune(self, now: float) -> None:
        oldest = _hour(now) - (HOURS_KEPT - 1) * HOUR_S
        stale = [hour for hour in self._buckets if hour < oldest]
        for hour in stale:
            del self._buckets[hour]
        if stale:
            self._dirty = True

    def hourly(self, now: float) -> list[tuple[float, int]]:
        """168 (hour start, tokens) pairs, oldest first, the last one the current hour."""
        current = _hour(now)
        return [
            (float(hour), self._buckets.get(hour, 0))
            for hour in range(current - (HOURS_KEPT - 1) * HOUR_S, current + HOUR_S, HOUR_S)
        ]

    def totals(self, now: float) -> tuple[int, int, int]:
        """(today since local midnight, the last 7 days, all time) for the status window."""
        local = time.localtime(now)
        midnight = time.mktime((local.tm_year, local.tm_mon, local.tm_mday, 0, 0, 0, 0, 0, -1))
        today = sum(tokens for hour, tokens in self._buckets.items() if hour + HOUR_S > midnight)
        week = sum(tokens for _hour_start, tokens in self.hourly(now))
        return today, week, max(self._all_time, week)
