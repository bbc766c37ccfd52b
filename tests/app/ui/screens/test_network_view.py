""" "What this network serves": the network's models in plain words, read in the background."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from PySide6.QtCore import QSettings

from app.errors import TrackerReadError
from app.settings_model import AppSettings
from app.texts import forbidden_words_in
from app.tracker_api import NetworkSummary, ServedModel, fetch_network
from app.ui.screens.network_view import NetworkView
from app.ui.settings_store import SettingsStore


def store_with_tracker(tmp_path: Path) -> SettingsStore:
    store = SettingsStore(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    store.save(AppSettings(tracker_url="http://tracker.test"))
    return store


def lines(view: NetworkView) -> list[str]:
    return [view.models.item(row).text() for row in range(view.models.count())]


def test_the_models_show_whether_ready_and_how_many_computers_help(
    qtbot: Any, tmp_path: Path
) -> None:
    asked: list[str] = []

    def fetch(url: str) -> NetworkSummary:
        asked.append(url)
        return NetworkSummary(
            name="Riverside Makers",
            description="",
            operator="R",
            models=(
                ServedModel("HuggingFaceTB/SmolLM2-135M-Instruct", True, 3),
                ServedModel("org/Other-1B", False, 1),
            ),
        )

    view = NetworkView(store_with_tracker(tmp_path), fetch=fetch)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitUntil(lambda: view.models.count() == 2, timeout=10_000)
    assert asked == ["http://tracker.test"]
    assert view.name_label.text() == "Riverside Makers"
    assert lines(view) == [
        "SmolLM2-135M-Instruct\nReady to answer — 3 computers help",
        "Other-1B\nNot ready yet: it needs more computers — 1 computer helps",
    ]
    assert [w for line in lines(view) for w in forbidden_words_in(line)] == []
    details: list[bool] = []
    view.details_requested.connect(lambda: details.append(True))
    view.details_button.click()
    assert details == [True]  # the recipes (and their digests) are one click away


def test_a_failed_read_is_a_sentence_in_the_window(qtbot: Any, tmp_path: Path) -> None:
    def fetch(url: str) -> NetworkSummary:
        raise TrackerReadError("Nothing answers at http://tracker.test.", reason="refused")

    view = NetworkView(store_with_tracker(tmp_path), fetch=fetch)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitUntil(lambda: view.refresh_button.isEnabled() and "could not" in view.message.text())
    assert view.message.text() == (
        "MeshNet could not ask the network: Nothing answers at http://tracker.test."
    )


def test_fetch_network_reads_the_models_of_api_v1_network() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/api/v1/network"
        return httpx.Response(
            200,
            json={
                "name": "N",
                "description": "D",
                "operator": "O",
                "models": [{"artifact_id": "a/b", "ready": True, "computers": 2}],
            },
        )

    summary = fetch_network("http://t.test", transport=httpx.MockTransport(answer))
    assert summary == NetworkSummary("N", "D", "O", (ServedModel("a/b", True, 2),))
