"""The last 7 days in words: per local day, the words written and the hours spent helping.

Built from ``app.usage_history.UsageHistory.hourly(now)`` (168 hour buckets): a day's
words are its buckets' sum, its hours those buckets with any word in them. The
tracker's credit has no per-day split, so the week's credit is said once, beside it
(``app.ui.widgets.week_in_words``). No Qt here.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from app.status_model import format_count
from app.texts import text

DAYS = 7


@dataclass(frozen=True)
class Day:
    start: float  # local midnight, epoch seconds
    words: int
    hours: int  # hours with any word written


def midnight(at: float) -> float:
    local = time.localtime(at)
    return time.mktime((local.tm_year, local.tm_mon, local.tm_mday, 0, 0, 0, 0, 0, -1))


def last_week(hours: Sequence[tuple[float, int]], now: float) -> list[Day]:
    """Seven days, oldest first, the last one today (hours outside them are left out)."""
    starts = [midnight(now)]
    for _ in range(DAYS - 1):  # the day before a midnight, whatever its length (DST)
        starts.insert(0, midnight(starts[0] - 3600))
    words = dict.fromkeys(starts, 0)
    busy = dict.fromkeys(starts, 0)
    for at, tokens in hours:
        day = midnight(at)
        if day in words and tokens > 0:
            words[day] += tokens
            busy[day] += 1
    return [Day(start, words[start], busy[start]) for start in starts]


def day_sentence(day: Day) -> str:
    """ "1,234 words in 3 h" / "nothing" — one row of the week in words."""
    if not day.words:
        return text("week.nothing")
    if day.hours == 1:
        return text("week.day.one", words=format_count(day.words))
    return text("week.day", words=format_count(day.words), hours=day.hours)


def week_sentence(days: Sequence[Day]) -> str:
    """The whole week in one sentence (the chart's accessible description)."""
    words = sum(day.words for day in days)
    hours = sum(day.hours for day in days)
    if not words:
        return text("week.empty")
    return text("week.total", words=format_count(words), hours=format_count(hours))
