"""The status window's credit card and the tracker read behind it.

The read against a real tracker is in tests/app/ui/test_credit_link.py; here the
client's own paths: the answer's fields, a 404, and the tracker trust it uses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from app.credit_summary import NO_CREDIT_YET, CreditSummary, fetch_credit
from core.errors import ConfigError
from core.network.tls_trust import CA_FILE_ENV


def test_the_summary_reads_the_trackers_row_and_says_it_in_one_line() -> None:
    asked: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        if request.url.path.endswith("/nobody"):
            return httpx.Response(404, json={"reason": "unknown-credit-id", "detail": "-"})
        body = {"last_24h": 1.5, "last_7d": 4.25, "total": 1234.5, "rank": 3, "forfeited": None}
        return httpx.Response(200, json={**body, "display_name": "Ada", "team": ""})

    transport = httpx.MockTransport(answer)
    summary = fetch_credit("http://tracker:8000/", "abc", transport=transport)
    assert asked[0] == "http://tracker:8000/api/v1/credits/abc"
    assert summary == CreditSummary(1.5, 4.25, 1234.5, 3, display_name="Ada")
    assert summary.one_line() == "Credit: 1.50 today, 1,234.50 in all, rank #3"
    assert summary.listed_as() == "On the leaderboard as Ada"
    assert fetch_credit("http://tracker:8000", "nobody", transport=transport) == NO_CREDIT_YET
    assert NO_CREDIT_YET.one_line() == "Credit: 0.00 today, 0.00 in all, rank —"
    forfeited = CreditSummary.from_json({"total": 0, "forfeited": "quarantined: lied"})
    assert forfeited.one_line() == "Credit: taken away by the network"


def test_an_https_tracker_is_trusted_as_the_rest_of_the_app_trusts_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(CA_FILE_ENV, str(tmp_path / "missing-ca.pem"))
    with pytest.raises(ConfigError) as refused:
        fetch_credit("https://tracker.invalid", "abc")
    assert refused.value.reason == "ca-file-unreadable"


def test_the_card_shows_today_week_total_rank_and_the_name_listed(qtbot: Any) -> None:
    from app.ui.credit_card import CreditCard

    card = CreditCard(lambda: None)
    qtbot.addWidget(card)
    assert "joined a network" in card.label.text()
    with qtbot.waitSignal(card.summary_changed) as emitted:
        card.set_summary(CreditSummary(1.5, 4.25, 9.0, 3, display_name="Ada", team="Makers"))
    assert emitted.args[0].rank == 3
    figures = {key: label.text() for key, label in card.figures.items()}
    assert figures == {"today": "1.50", "week": "4.25", "total": "9.00", "rank": "#3"}
    assert card.label.text() == "On the leaderboard as Ada, team Makers"
    card.set_summary(CreditSummary(0, 0, 0, 7, forfeited="quarantined: lied"))
    assert card.label.text().startswith("The network took this computer's credit away")
    assert card.figures["rank"].text() == "—"
    card.set_summary(CreditSummary(0, 0, 0, 0))
    assert card.label.isHidden() and card.figures["rank"].text() == "—"
