"""Plain-text tables and times for meshnet-tracker's listings."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime


def when(ts: float | None) -> str:
    """A UTC timestamp as the listings print it, or '-' for never."""
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell, under a dashed rule."""
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows, strict=False)]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    head = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    return "\n".join([head, "  ".join("-" * w for w in widths), *lines])
