"""The tracker's recipes, dark and certified, with the one this computer serves marked.

A recipe is a model plus the exact way it is run (dtypes, backend, runtime);
the tracker certifies one once a whole route of nodes has produced matching
output with it, until then it is "dark". Contributors look here to see whether
what their computer serves is certified yet.

Reads go through :func:`app.ui.tasks.run_in_background` (``fetch_recipes``
blocks on HTTP); while the window is visible it refreshes itself every
``AUTO_REFRESH_S`` seconds, and not at all while hidden. A failed read is one
sentence in the window, never a dialog: with auto-refresh, dialogs would pile up.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from PySide6.QtCore import QSortFilterProxyModel, Qt, QTimer
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QHideEvent,
    QPalette,
    QShowEvent,
    QStandardItem,
    QStandardItemModel,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.errors import TrackerReadError
from app.network_join import no_network_sentence, tracker_url_for
from app.texts import number, text
from app.tracker_api import RecipeRow, fetch_recipes
from app.ui.settings_store import SettingsStore
from app.ui.tasks import BackgroundTask, run_in_background
from app.ui.widgets.settings_fields import error_style

log = logging.getLogger(__name__)

AUTO_REFRESH_S = 30.0
DIGEST_PREFIX = 12
COLUMNS = (
    "model",
    "recipe",
    "status",
    "model-digest",
    "recipe-digest",
    "certified-on",
    "nodes",
    "detail",
)
# the served row: the palette's highlight, faint, so it reads on light and dark palettes
SERVED_ALPHA = 60
STATUS_WORDS = ("certified", "dark")


class StatusSource(Protocol):
    """What the view reads of app.ui.controller.NodeController."""

    @property
    def status(self) -> Any: ...


def digest_prefix(digest: str) -> str:
    """Enough of a digest to tell recipes apart at a glance (the tooltip has it all)."""
    return digest.removeprefix("sha256:")[:DIGEST_PREFIX]


def served_background(palette: QPalette) -> QColor:
    """The served row's background: the highlight colour, faint (light and dark palettes)."""
    colour = QColor(palette.color(QPalette.ColorRole.Highlight))
    colour.setAlpha(SERVED_ALPHA)
    return colour


def status_words(status: str) -> tuple[str, str]:
    """(the status in a word, its explanation) in the chosen language."""
    if status in STATUS_WORDS:
        return text(f"recipes.{status}"), text(f"recipes.{status}.help")
    return status.capitalize(), ""


def updated_sentence(count: int, certified: int) -> str:
    return text(
        "recipes.updated",
        time=time.strftime("%H:%M:%S"),
        count=number(count),
        certified=number(certified),
        dark=number(count - certified),
    )


def short_time(timestamp: float | None) -> str:
    if timestamp is None:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))


class RecipesView(QWidget):
    """A window listing the tracker's recipes; ``show_sample(name)`` fills it for screenshots."""

    SAMPLE_NAMES = ("default",)

    def __init__(
        self,
        store: SettingsStore,
        controller: StatusSource,
        parent: QWidget | None = None,
        *,
        fetch: Callable[[str], list[RecipeRow]] = fetch_recipes,
        auto_refresh_s: float = AUTO_REFRESH_S,
    ) -> None:
        super().__init__(parent)
        self.store = store
        self.controller = controller
        self._fetch = fetch
        self._sample = False
        self._served_override: tuple[str, str] | None = None
        self._pending: BackgroundTask | None = None
        self.rows: list[RecipeRow] = []
        self.setWindowTitle(text("recipes.title"))
        self.resize(1180, 380)

        self.filter_box = QLineEdit()
        self.filter_box.setPlaceholderText(text("recipes.filter"))
        self.filter_box.setClearButtonEnabled(True)
        self.refresh_button = QPushButton(text("serves.refresh"))
        self.refresh_button.clicked.connect(self.refresh)
        top = QHBoxLayout()
        top.addWidget(self.filter_box, 1)
        top.addWidget(self.refresh_button)

        self.model = QStandardItemModel(0, len(COLUMNS), self)
        self.model.setHorizontalHeaderLabels([text(f"recipes.column.{c}") for c in COLUMNS])
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.filter_box.textChanged.connect(self.proxy.setFilterFixedString)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # the tracker's order
        self.table.setWordWrap(False)

        self.message = QLabel()
        self.message.setWordWrap(True)
        self.legend = QLabel(text("recipes.legend"))
        self.legend.setVisible(False)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.legend)
        layout.addWidget(self.message)

        self.timer = QTimer(self)
        self.timer.setInterval(int(auto_refresh_s * 1000))
        self.timer.timeout.connect(self.refresh)
        store.changed.connect(self._settings_changed)
        status_changed = getattr(controller, "status_changed", None)
        if status_changed is not None:
            status_changed.connect(self._fill)

    # -- reading ----------------------------------------------------------------

    @property
    def loading(self) -> bool:
        return self._pending is not None

    def refresh(self) -> None:
        """Read the recipes again in the background (one read at a time)."""
        if self._sample or self._pending is not None:
            return
        url = tracker_url_for(self.store.load().tracker_url)
        if url is None:
            self.message.setText(no_network_sentence())
            return
        self.refresh_button.setEnabled(False)
        self.message.setStyleSheet("")
        self.message.setText(text("recipes.reading", url=url))
        fetch = self._fetch
        self._pending = run_in_background(
            lambda: fetch(url),
            on_success=self._loaded,
            on_failure=self._failed,
            parent=self,
        )

    def _loaded(self, rows: object) -> None:
        self._pending = None
        self.refresh_button.setEnabled(True)
        assert isinstance(rows, list)
        self.show_rows(rows)
        certified = sum(1 for row in rows if row.status == "certified")
        self.message.setText(
            updated_sentence(len(rows), certified) if rows else text("recipes.empty")
        )

    def _failed(self, error: BaseException) -> None:
        self._pending = None
        self.refresh_button.setEnabled(True)
        if isinstance(error, TrackerReadError):
            sentence = str(error)
        else:
            sentence = text("recipes.failed.other")
        self.message.setStyleSheet(error_style())
        key = "recipes.failed.kept" if self.rows else "recipes.failed"
        self.message.setText(text(key, sentence=sentence))

    def _settings_changed(self, _settings: object) -> None:
        if self.isVisible():
            if self._pending is not None:
                self._pending.discard()
                self._pending = None
            self.refresh()

    # -- showing ----------------------------------------------------------------

    def served_digests(self) -> tuple[str, str] | None:
        """(model artifact digest, runtime recipe digest) this node registered with."""
        if self._served_override is not None:
            return self._served_override
        status = getattr(self.controller, "status", None)
        registration = getattr(status, "registration", None) or {}
        model = registration.get("model_artifact_digest")
        recipe = registration.get("runtime_recipe_digest")
        return (model, recipe) if model and recipe else None

    def show_rows(self, rows: list[RecipeRow]) -> None:
        self.rows = list(rows)
        self._fill()

    def served_row(self) -> int | None:
        served = self.served_digests()
        for index, row in enumerate(self.rows):
            if served == (row.model_artifact_digest, row.runtime_recipe_digest):
                return index
        return None

    def _fill(self) -> None:
        self.model.removeRows(0, self.model.rowCount())
        served = self.served_row()
        for index, row in enumerate(self.rows):
            items = self._items(row)
            if index == served:
                items[0].setText(f"★ {items[0].text()}")
                for item in items:
                    font = QFont(item.font())
                    font.setBold(True)
                    item.setFont(font)
                    item.setBackground(QBrush(served_background(self.palette())))
                    served_tip = f"{text('recipes.served.tip')} {item.toolTip()}"
                    item.setToolTip(served_tip.strip())
            self.model.appendRow(items)
        self.legend.setVisible(served is not None)

    @staticmethod
    def _items(row: RecipeRow) -> list[QStandardItem]:
        detail = row.detail
        if row.last_certification_failure:
            detail = text("recipes.why-dark", detail=detail, why=row.last_certification_failure)
        values = [
            (row.artifact_id, ""),
            (
                f"{row.recipe_id} v{row.recipe_version}",
                text("recipes.layers", count=number(row.layer_count)),
            ),
            status_words(row.status),
            (digest_prefix(row.model_artifact_digest), row.model_artifact_digest),
            (digest_prefix(row.runtime_recipe_digest), row.runtime_recipe_digest),
            (short_time(row.certified_at), ""),
            (
                "—" if row.certified_node_count is None else number(row.certified_node_count),
                "",
            ),
            (detail, detail),
        ]
        items = []
        for words, tip in values:
            item = QStandardItem(words)
            item.setToolTip(tip)
            items.append(item)
        return items

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._sample:
            self.timer.start()
            self.refresh()

    def hideEvent(self, event: QHideEvent) -> None:
        self.timer.stop()
        super().hideEvent(event)

    # -- screenshots ----------------------------------------------------------------

    def show_sample(self, name: str = "default") -> None:
        """One certified recipe (the one this computer serves) and one dark; no tracker."""
        if name not in self.SAMPLE_NAMES:
            raise ValueError(f"unknown sample {name!r}; choose one of {self.SAMPLE_NAMES}")
        self._sample = True
        self.timer.stop()
        if self._pending is not None:
            self._pending.discard()
            self._pending = None
        self.refresh_button.setEnabled(True)
        status = getattr(self.controller, "status", None)
        rows = sample_rows(getattr(status, "registration", None))
        self.show_rows(rows)
        if self.served_row() is None:  # no node registered: mark the certified one as served
            self._served_override = (rows[0].model_artifact_digest, rows[0].runtime_recipe_digest)
            self._fill()
        self.message.setStyleSheet("")
        self.message.setText(updated_sentence(2, 1))


def sample_rows(registration: dict[str, Any] | None = None) -> list[RecipeRow]:
    """Two realistic rows; the certified one is what ``registration`` (if any) serves."""
    now = time.time()
    served = registration or {}
    artifact = served.get("model_id") or "HuggingFaceTB/SmolLM2-135M-Instruct"
    recipe = served.get("recipe_id") or "llama-fp32"
    # The catalogue's other recipe for this architecture (core/recipes/catalogue.json).
    dark_recipe = recipe.replace("fp32", "bf16") if "fp32" in recipe else f"{recipe}-bf16"
    model = served.get("model_artifact_digest") or (
        "3f5a9c1e7b2d4a60c8e1f0b9d7a6c5e4b3a29180f7e6d5c4b3a291807f6e5d4c"
    )
    return [
        RecipeRow(
            status="certified",
            detail="Certified by route session rs-8c1f across 2 nodes.",
            artifact_id=artifact,
            recipe_id=recipe,
            recipe_version=str(served.get("recipe_version") or "1"),
            layer_count=30,
            model_artifact_digest=model,
            runtime_recipe_digest=served.get("runtime_recipe_digest")
            or "a1c4e9f2b7d04c3e8f5a6b1d9c2e7f40a3b6c9d2e5f8a1b4c7d0e3f6a9b2c5d8",
            certified_at=now - 3 * 3600,
            certified_node_count=2,
            last_certification_failure=None,
        ),
        RecipeRow(
            status="dark",
            detail="Waiting for a full route of nodes serving this recipe.",
            artifact_id=artifact,
            recipe_id=dark_recipe,
            recipe_version="1",
            layer_count=30,
            model_artifact_digest=model,
            runtime_recipe_digest="7e2b9d4f1a6c3e8b5d0f2a7c4e9b1d6f3a8c5e0b2d7f4a9c6e1b3d8f5a0c2e7b",
            certified_at=None,
            certified_node_count=None,
            last_certification_failure=None,
        ),
    ]
