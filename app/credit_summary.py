"""This node's credit, as the tracker's ledger shows it (docs/credits.md).

Read from ``GET /api/v1/credits/{node_id}``: today (the last 24 hours), this
week (7 days), in all, and rank. Blocking: the GUI calls it through
``app.ui.tasks.run_in_background``. No Qt here.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

log = logging.getLogger(__name__)

TIMEOUT_S = 10.0


@dataclass(frozen=True)
class CreditSummary:
    today: float
    week: float
    total: float
    rank: int
    forfeited: str | None = None

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> CreditSummary:
        return cls(
            today=float(body.get("last_24h") or 0.0),
            week=float(body.get("last_7d") or 0.0),
            total=float(body.get("total") or 0.0),
            rank=int(body.get("rank") or 0),
            forfeited=str(body["forfeited"]) if body.get("forfeited") else None,
        )

    def one_line(self) -> str:
        """The tray tooltip's line."""
        if self.forfeited:
            return f"Credit forfeited: {self.forfeited}"
        return f"Credit: {self.today:.2f} today, {self.total:.2f} in all (rank #{self.rank})"


NO_CREDIT_YET = CreditSummary(0.0, 0.0, 0.0, 0)


def fetch_credit(tracker_url: str, node_id: str) -> CreditSummary:
    """This identity's credit; NO_CREDIT_YET when the tracker has none for it (404)."""
    url = f"{tracker_url.rstrip('/')}/api/v1/credits/{quote(node_id, safe='')}"
    reply = httpx.get(url, timeout=TIMEOUT_S, follow_redirects=False)
    if reply.status_code == 404:
        return NO_CREDIT_YET
    reply.raise_for_status()
    return CreditSummary.from_json(reply.json())
