"""The recipes view: fake reads for the behaviour, a real tracker on loopback for the truth."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from PySide6.QtCore import QObject, QSettings, Signal

from app.errors import TrackerReadError
from app.settings_model import AppSettings
from app.tracker_api import RecipeRow
from app.ui.screens.recipes_view import COLUMNS, RecipesView, sample_rows
from app.ui.settings_store import SettingsStore
from tests.tracker_service.server_process import TrackerProcess


class FakeController(QObject):
    status_changed = Signal()

    def __init__(self, registration: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.status = SimpleNamespace(registration=registration)

    def serve(self, row: RecipeRow) -> None:
        self.status.registration = {
            "model_artifact_digest": row.model_artifact_digest,
            "runtime_recipe_digest": row.runtime_recipe_digest,
        }
        self.status_changed.emit()


class FakeFetch:
    def __init__(self, rows: list[RecipeRow]) -> None:
        self.rows = rows
        self.error: str | None = None
        self.urls: list[str] = []

    def __call__(self, url: str) -> list[RecipeRow]:
        self.urls.append(url)
        if self.error:
            raise TrackerReadError(self.error)
        return list(self.rows)


@pytest.fixture
def store(tmp_path: Path) -> SettingsStore:
    store = SettingsStore(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    store.save(AppSettings(tracker_url="http://tracker.test:8765"))
    return store


def make_view(qtbot: Any, store: SettingsStore, fetch: Any, **kw: Any) -> RecipesView:
    controller = kw.pop("controller", FakeController())
    view = RecipesView(store, controller, fetch=fetch, **kw)
    qtbot.addWidget(view)
    return view


def cell(view: RecipesView, row: int, column: str) -> str:
    return str(view.proxy.index(row, COLUMNS.index(column.lower().replace(" ", "-"))).data())


def visible_rows(view: RecipesView) -> int:
    return view.proxy.rowCount()


def test_showing_reads_the_recipes_in_the_background_and_lists_them(
    qtbot: Any, store: SettingsStore
) -> None:
    fetch = FakeFetch(sample_rows())
    view = make_view(qtbot, store, fetch)
    view.show()
    qtbot.waitUntil(lambda: visible_rows(view) == 2, timeout=10_000)
    assert fetch.urls == ["http://tracker.test:8765"]
    assert cell(view, 0, "Recipe") == "llama-fp32 v1"
    assert cell(view, 0, "Status") == "Certified" and cell(view, 1, "Status") == "Dark"
    assert cell(view, 0, "Model digest") == sample_rows()[0].model_artifact_digest[:12]
    assert cell(view, 0, "Nodes") == "2" and cell(view, 1, "Certified on") == "—"
    assert "1 certified, 1 dark" in view.message.text()
    assert view.legend.isHidden()  # this computer serves nothing


def test_the_filter_narrows_the_rows(qtbot: Any, store: SettingsStore) -> None:
    view = make_view(qtbot, store, FakeFetch([]))
    view.show_rows(sample_rows())
    view.filter_box.setText("DARK")
    assert visible_rows(view) == 1 and cell(view, 0, "Recipe") == "llama-bf16 v1"
    view.filter_box.setText("7e2b9d")  # a digest prefix
    assert visible_rows(view) == 1
    view.filter_box.clear()
    assert visible_rows(view) == 2


def test_the_served_recipe_is_marked_as_the_node_registers(
    qtbot: Any, store: SettingsStore
) -> None:
    controller = FakeController()
    view = make_view(qtbot, store, FakeFetch([]), controller=controller)
    view.show_rows(sample_rows())
    assert not cell(view, 1, "Model").startswith("★")
    controller.serve(sample_rows()[1])
    assert cell(view, 1, "Model").startswith("★ ") and not cell(view, 0, "Model").startswith("★")
    assert view.model.item(1, 2).font().bold() and not view.model.item(0, 2).font().bold()
    assert not view.legend.isHidden()


def test_a_failed_read_is_a_sentence_and_keeps_the_last_rows(
    qtbot: Any, store: SettingsStore
) -> None:
    fetch = FakeFetch(sample_rows())
    view = make_view(qtbot, store, fetch)
    view.show()
    qtbot.waitUntil(lambda: visible_rows(view) == 2, timeout=10_000)
    fetch.error = "Nothing answers at http://tracker.test:8765: check the address."
    view.refresh_button.click()
    qtbot.waitUntil(lambda: "Could not read" in view.message.text(), timeout=10_000)
    assert fetch.error in view.message.text() and "last recipes read" in view.message.text()
    assert visible_rows(view) == 2 and view.refresh_button.isEnabled()


def test_auto_refresh_runs_only_while_the_window_is_visible(
    qtbot: Any, store: SettingsStore
) -> None:
    fetch = FakeFetch(sample_rows())
    view = make_view(qtbot, store, fetch, auto_refresh_s=0.05)
    qtbot.wait(200)
    assert fetch.urls == []  # never shown: never read
    view.show()
    qtbot.waitUntil(lambda: len(fetch.urls) >= 3, timeout=10_000)
    view.hide()
    qtbot.waitUntil(lambda: not view.loading, timeout=10_000)
    count = len(fetch.urls)
    qtbot.wait(300)
    assert len(fetch.urls) == count


def test_a_new_tracker_address_is_read_at_once(qtbot: Any, store: SettingsStore) -> None:
    fetch = FakeFetch([])
    view = make_view(qtbot, store, fetch)
    view.show()
    qtbot.waitUntil(lambda: "no recipes yet" in view.message.text(), timeout=10_000)
    store.update(tracker_url="http://other.test:8765")
    qtbot.waitUntil(lambda: fetch.urls[-1] == "http://other.test:8765", timeout=10_000)


def test_show_sample_has_one_certified_served_and_one_dark_without_a_tracker(
    qtbot: Any, store: SettingsStore
) -> None:
    fetch = FakeFetch([])
    view = make_view(qtbot, store, fetch)
    view.show_sample("default")
    view.show()
    qtbot.wait(50)
    assert fetch.urls == []
    assert [cell(view, r, "Status") for r in range(2)] == ["Certified", "Dark"]
    assert cell(view, 0, "Model").startswith("★ ") and not view.grab().isNull()


# -- a real tracker on loopback -----------------------------------------------------------


@pytest.mark.slow
def test_a_real_tracker_lists_one_certified_and_one_dark_recipe_and_the_served_one_is_marked(
    qtbot: Any, store: SettingsStore, seeded_tracker: TrackerProcess
) -> None:
    recipes = httpx.get(seeded_tracker.url + "/api/v1/state", timeout=10).json()["recipes"]
    served = next(r for r in recipes if r["recipe_id"] == "smollm2-fp16")
    controller = FakeController(
        {
            "model_artifact_digest": served["model_artifact_digest"],
            "runtime_recipe_digest": served["runtime_recipe_digest"],
        }
    )
    store.update(tracker_url=seeded_tracker.url)
    view = RecipesView(store, controller)  # the real fetch_recipes
    qtbot.addWidget(view)
    view.show()
    qtbot.waitUntil(lambda: visible_rows(view) == 2, timeout=20_000)
    by_recipe = {cell(view, r, "Recipe").split(" v")[0]: r for r in range(2)}
    certified, dark = by_recipe["smollm2-135m-fp32"], by_recipe["smollm2-fp16"]
    assert cell(view, certified, "Status") == "Certified"
    assert cell(view, certified, "Nodes") == "2"
    assert cell(view, certified, "Certified on") != "—"
    assert cell(view, dark, "Status") == "Dark"
    assert cell(view, dark, "Model").startswith("★ ")
    assert not cell(view, certified, "Model").startswith("★")
    seeded_tracker.stop()
    view.refresh()
    qtbot.waitUntil(lambda: "Could not read recipes" in view.message.text(), timeout=20_000)
    assert visible_rows(view) == 2
