"""Tokens served per hour over a week: deltas across node and app restarts, kept on disk."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from app.usage_history import HOUR_S, HOURS_KEPT, UsageHistory, default_history_path

# A fixed Monday 00:00 UTC, so bucket edges are easy to read.
T0 = 1_764_547_200.0
assert T0 % HOUR_S == 0


def served(history: UsageHistory, now: float) -> dict[float, int]:
    return {hour: tokens for hour, tokens in history.hourly(now) if tokens}


def test_hourly_is_168_buckets_oldest_first_ending_with_this_hour(tmp_path: Path) -> None:
    history = UsageHistory(tmp_path / "usage.json")
    buckets = history.hourly(T0 + 1800)
    assert len(buckets) == HOURS_KEPT == 168
    assert buckets[-1] == (T0, 0)
    assert buckets[0] == (T0 - 167 * HOUR_S, 0)
    assert [b[0] for b in buckets] == sorted(b[0] for b in buckets)


def test_samples_of_one_run_count_their_deltas_in_their_hour(tmp_path: Path) -> None:
    history = UsageHistory(tmp_path / "usage.json")
    assert history.record(T0 + 10, 100, "run-1") == 100
    assert history.record(T0 + 20, 130, "run-1") == 30
    assert history.record(T0 + 30, 130, "run-1") == 0
    assert history.record(T0 + HOUR_S + 5, 200, "run-1") == 70
    assert served(history, T0 + HOUR_S + 5) == {T0: 130, T0 + HOUR_S: 70}


def test_a_node_restart_counts_the_new_runs_total_from_zero(tmp_path: Path) -> None:
    history = UsageHistory(tmp_path / "usage.json")
    history.record(T0 + 10, 500, "run-1")
    # The new node's counter started again at 0; 40 tokens served since.
    assert history.record(T0 + 60, 40, "run-2") == 40
    assert history.record(T0 + 70, 45, "run-2") == 5
    assert served(history, T0 + 70) == {T0: 545}


def test_a_counter_that_goes_down_in_the_same_run_restarted_from_zero(tmp_path: Path) -> None:
    history = UsageHistory(tmp_path / "usage.json")
    history.record(T0 + 10, 500, "run-1")
    assert history.record(T0 + 20, 20, "run-1") == 20  # paused and resumed: a fresh server
    assert served(history, T0 + 20) == {T0: 520}


def test_an_app_restart_neither_loses_nor_double_counts(tmp_path: Path) -> None:
    path = tmp_path / "app" / "usage.json"
    history = UsageHistory(path)
    history.record(T0 + 10, 100, "run-1")
    history.record(T0 + 20, 150, "run-1")
    history.save()
    reopened = UsageHistory(path)
    assert served(reopened, T0 + 30) == {T0: 150}
    # The same run's next sample (the app reconnected to it): only the new tokens count.
    assert reopened.record(T0 + 30, 160, "run-1") == 10
    # A node started by the restarted app.
    assert reopened.record(T0 + 40, 7, "run-2") == 7
    reopened.save()
    assert served(UsageHistory(path), T0 + 40) == {T0: 167}


def test_buckets_older_than_a_week_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "usage.json"
    history = UsageHistory(path)
    history.record(T0, 10, "run-1")
    history.record(T0 + HOUR_S, 15, "run-1")
    week_later = T0 + HOURS_KEPT * HOUR_S
    history.record(week_later, 15, "run-1")
    history.save()
    assert served(history, week_later) == {T0 + HOUR_S: 5}
    stored = json.loads(path.read_text())
    assert list(stored["buckets"]) == [str(int(T0 + HOUR_S))]
    # Hours past the window do not show even before a record prunes them.
    assert served(UsageHistory(path), week_later + HOUR_S) == {}


def test_save_is_atomic_and_writes_only_changes(tmp_path: Path) -> None:
    path = tmp_path / "usage.json"
    history = UsageHistory(path)
    history.save()
    assert not path.exists()  # nothing recorded, nothing written
    history.record(T0, 3, "run-1")
    history.save()
    assert json.loads(path.read_text())["last"] == {"run_id": "run-1", "total": 3}
    assert not path.with_name("usage.json.tmp").exists()
    before = path.stat().st_mtime_ns
    history.record(T0 + 1, 3, "run-1")
    history.save()
    assert path.stat().st_mtime_ns == before


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[]",
        '{"version": 1, "buckets": {"x": 3}, "last": {"run_id": null, "total": 0}}',
        '{"version": 1, "buckets": {"3600": -5}, "last": {"run_id": null, "total": 0}}',
        '{"version": 1, "buckets": {}, "last": {"run_id": 7, "total": 0}}',
        '{"version": 99, "buckets": {}, "last": {"run_id": null, "total": 0}}',
    ],
)
def test_a_corrupt_file_is_moved_aside_and_a_fresh_history_starts(
    tmp_path: Path, content: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "usage.json"
    path.write_text(content)
    with caplog.at_level(logging.WARNING, logger="app.usage_history"):
        history = UsageHistory(path)
    assert served(history, T0) == {}
    [aside] = tmp_path.glob("usage.json.corrupt-*")
    assert aside.read_text() == content
    assert "unreadable" in caplog.text and aside.name in caplog.text
    assert history.record(T0, 9, "run-1") == 9
    history.save()
    assert served(UsageHistory(path), T0) == {T0: 9}


def test_the_default_path_is_under_the_meshnet_data_home(isolated_meshnet_home: Path) -> None:
    assert default_history_path() == isolated_meshnet_home / "app" / "usage_history.json"


def test_totals_count_today_this_week_and_all_time_across_restarts(tmp_path: Path) -> None:
    import time as _time

    path = tmp_path / "usage.json"
    now = _time.mktime((2026, 12, 2, 15, 0, 0, 0, 0, -1))
    history = UsageHistory(path)
    history.record(now - 9 * 86400, 500, "old-run")  # before this week: all time only
    history.record(now - 86400, 200, "yesterday")
    history.record(now - 3600, 30, "today")
    history.record(now, 70, "today")
    history.save()
    today, week, total = UsageHistory(path).totals(now)
    assert (today, week, total) == (70, 270, 770)
