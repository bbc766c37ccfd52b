"""This node's credit, as the tracker's ledger shows it (docs/credits.md).

Read from ``GET /api/v1/credits/{node_id}``: today (the last 24 hours), this
week (7 days), in all, rank, and the leaderboard name and team it is listed
under. Blocking: the GUI calls it through ``app.ui.tasks.run_in_background``.
An ``https://`` tracker is trusted as everywhere else in the app
(``core.network.tls_trust``: ``MESHNET_CA_FILE``, else the system's store). No Qt here.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from app.texts import number, text
from core.network.tls_trust import tracker_verify

log = logging.getLogger(__name__)

TIMEOUT_S = 10.0
# What a credited request spends per word (token) of prompt and answer (docs/credits.md,
# "Credit spent: contributors go first"): 1 credit puts 100 words first in line.
PRIORITY_CREDIT_PER_WORD = 0.01


def credit_figure(value: float) -> str:
    return number(value, 2)


def rank_figure(rank: int) -> str:
    return f"#{number(rank)}" if rank > 0 else "—"


@dataclass(frozen=True)
class CreditSummary:
    today: float
    week: float
    total: float
    rank: int
    forfeited: str | None = None  # the tracker's reason, for the log; the app says it plainly
    display_name: str = ""
    team: str = ""

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> CreditSummary:
        return cls(
            today=float(body.get("last_24h") or 0.0),
            week=float(body.get("last_7d") or 0.0),
            total=float(body.get("total") or 0.0),
            rank=int(body.get("rank") or 0),
            forfeited=str(body["forfeited"]) if body.get("forfeited") else None,
            display_name=str(body.get("display_name") or ""),
            team=str(body.get("team") or ""),
        )

    def one_line(self) -> str:
        """The tray tooltip's line."""
        if self.forfeited:
            return text("credit.line.forfeited")
        return text(
            "credit.line",
            today=credit_figure(self.today),
            total=credit_figure(self.total),
            rank=rank_figure(self.rank),
        )

    def listed_as(self) -> str:
        """How the leaderboard names this computer; "" when by its number only."""
        if self.display_name and self.team:
            return text("credit.listed.both", name=self.display_name, team=self.team)
        if self.display_name:
            return text("credit.listed.name", name=self.display_name)
        if self.team:
            return text("credit.listed.team", team=self.team)
        return ""


NO_CREDIT_YET = CreditSummary(0.0, 0.0, 0.0, 0)


def earned_sentence(summary: CreditSummary | None) -> str:
    """What this computer earned, and what that buys, in two plain sentences."""
    if summary is not None and summary.forfeited:
        return text("credit.forfeited")
    if summary is None or summary.week <= 0:
        return f"{text('credit.none-yet')} {text('credit.explain')}"
    earned = text(
        "credit.earned", today=credit_figure(summary.today), week=credit_figure(summary.week)
    )
    credit = summary.today if summary.today > 0 else summary.week
    buys = text(
        "credit.buys",
        credit=credit_figure(credit),
        words=number(credit / PRIORITY_CREDIT_PER_WORD),
    )
    return f"{earned} {buys}"


def fetch_credit(
    tracker_url: str, node_id: str, *, transport: httpx.BaseTransport | None = None
) -> CreditSummary:
    """This identity's credit; NO_CREDIT_YET when the tracker has none for it (404)."""
    url = f"{tracker_url.rstrip('/')}/api/v1/credits/{quote(node_id, safe='')}"
    with httpx.Client(
        timeout=TIMEOUT_S, transport=transport, follow_redirects=False, verify=tracker_verify()
    ) as client:
        reply = client.get(url, headers={"Accept": "application/json"})
    if reply.status_code == 404:
        return NO_CREDIT_YET
    reply.raise_for_status()
    summary = CreditSummary.from_json(reply.json())
    if summary.forfeited:
        log.info("the tracker forfeited this computer's credit: %s", summary.forfeited)
    return summary
