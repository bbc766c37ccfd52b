"""The status window's credit card and the tracker read behind it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from app.credit_summary import NO_CREDIT_YET, CreditSummary, fetch_credit


def test_the_summary_reads_the_trackers_row_and_says_it_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str] = []

    def fake_get(url: str, **_kw: object) -> httpx.Response:
        asked.append(url)
        if url.endswith("/nobody"):
            return httpx.Response(404, json={"reason": "unknown-credit-id", "detail": "-"})
        body = {"last_24h": 1.5, "last_7d": 4.25, "total": 9.0, "rank": 3, "forfeited": None}
        return httpx.Response(200, json=body, request=httpx.Request("GET", url))

    monkeypatch.setattr(httpx, "get", fake_get)
    summary = fetch_credit("http://tracker:8000/", "abc")
    assert asked[0] == "http://tracker:8000/api/v1/credits/abc"
    assert summary == CreditSummary(1.5, 4.25, 9.0, 3)
    assert summary.one_line() == "Credit: 1.50 today, 9.00 in all (rank #3)"
    assert fetch_credit("http://tracker:8000", "nobody") == NO_CREDIT_YET
    forfeited = CreditSummary.from_json({"total": 0, "forfeited": "quarantined: lied"})
    assert forfeited.one_line() == "Credit forfeited: quarantined: lied"


def test_the_card_shows_today_week_total_and_rank(qtbot: Any) -> None:
    from app.ui.credit_card import CreditCard

    card = CreditCard(lambda: None)
    qtbot.addWidget(card)
    assert "registered" in card.label.text()
    card.set_summary(CreditSummary(1.5, 4.25, 9.0, 3))
    text = card.label.text()
    assert "today 1.50" in text and "this week 4.25" in text
    assert "in all 9.00" in text and "rank #3" in text
    card.set_summary(CreditSummary(0, 0, 0, 7, forfeited="quarantined: lied"))
    assert card.label.text() == "Credit forfeited: quarantined: lied"
