""" "What this network serves": the models, whether each is ready, how many computers help.

Plain words only; the recipes, their digests and certification live in the
Recipes window, one click away (Details). Reads GET /api/v1/network in the
background (:func:`app.ui.tasks.run_in_background`) each time the window opens
or Refresh is pressed; a failed read is a sentence in the window.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.network_join import tracker_url_for
from app.texts import number, plain, text
from app.tracker_api import NetworkSummary, ServedModel, fetch_network
from app.ui.settings_store import SettingsStore
from app.ui.tasks import BackgroundTask, run_in_background
from app.ui.widgets.labels import wrapping_label

log = logging.getLogger(__name__)


def model_line(model: ServedModel) -> str:
    """ "SmolLM2-135M-Instruct — Ready to answer — 3 computers help"."""
    name = model.artifact_id.rstrip("/").rsplit("/", 1)[-1]
    ready = text("serves.ready" if model.ready else "serves.not-ready")
    helpers = (
        text("serves.computer")
        if model.computers == 1
        else text("serves.computers", count=number(model.computers))
    )
    return f"{name}\n{ready} — {helpers}"


class NetworkView(QWidget):
    """The network's models in words; Details opens the engineer's Recipes window."""

    details_requested = Signal()
    SAMPLE_NAMES = ("default",)

    def __init__(
        self,
        store: SettingsStore,
        *,
        fetch: Callable[[str], NetworkSummary] = fetch_network,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.store = store
        self._fetch = fetch
        self._pending: BackgroundTask | None = None
        self._sample = False
        self.setWindowTitle(text("serves.title"))
        self.resize(560, 360)
        layout = QVBoxLayout(self)
        self.name_label = QLabel()
        font = self.name_label.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.name_label.setFont(font)
        layout.addWidget(self.name_label)
        self.intro = wrapping_label(text("serves.intro"))
        layout.addWidget(self.intro)
        self.models = QListWidget()
        self.models.setAccessibleName(plain("serves.title"))
        # a longer translation wraps inside the row instead of hiding behind a scrollbar
        self.models.setWordWrap(True)
        self.models.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.models.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.models.setResizeMode(QListWidget.ResizeMode.Adjust)
        self.models.setSpacing(3)
        layout.addWidget(self.models, 1)
        self.message = wrapping_label()
        layout.addWidget(self.message)
        buttons = QHBoxLayout()
        self.details_button = QPushButton(text("button.details"))
        self.details_button.setAccessibleName(plain("button.details"))
        self.details_button.clicked.connect(self.details_requested)
        self.refresh_button = QPushButton(text("serves.refresh"))
        self.refresh_button.setAccessibleName(plain("serves.refresh"))
        self.refresh_button.clicked.connect(self.refresh)
        self.close_button = QPushButton(text("serves.close"))
        self.close_button.setAccessibleName(plain("serves.close"))
        self.close_button.clicked.connect(self.close)
        buttons.addWidget(self.details_button)
        buttons.addStretch(1)
        buttons.addWidget(self.refresh_button)
        buttons.addWidget(self.close_button)
        layout.addLayout(buttons)

    def refresh(self) -> None:
        if self._sample or self._pending is not None:
            return
        url = tracker_url_for(self.store.load().tracker_url)
        if url is None:
            self.message.setText(text("why.not-joined"))
            return
        self.message.setText(text("serves.loading"))
        self.refresh_button.setEnabled(False)
        fetch = self._fetch
        self._pending = run_in_background(
            lambda: fetch(url), on_success=self._loaded, on_failure=self._failed, parent=self
        )

    def _loaded(self, summary: object) -> None:
        self._pending = None
        self.refresh_button.setEnabled(True)
        assert isinstance(summary, NetworkSummary)
        self.show_summary(summary)

    def _failed(self, error: BaseException) -> None:
        self._pending = None
        self.refresh_button.setEnabled(True)
        log.info("could not read the network: %s", error)
        sentence = str(error) or type(error).__name__
        self.message.setText(text("serves.failed", sentence=sentence))

    def show_summary(self, summary: NetworkSummary) -> None:
        self.name_label.setText(summary.name or text("serves.title"))
        self.models.clear()
        for model in summary.models:
            item = QListWidgetItem(model_line(model))
            item.setToolTip(model.artifact_id)
            self.models.addItem(item)
        self.message.setText("" if summary.models else text("serves.none"))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.refresh()

    def show_sample(self, name: str = "default") -> None:
        """Realistic data for screenshots; reads nothing."""
        self._sample = True
        self.show_summary(
            NetworkSummary(
                name="Riverside Makers",
                description="",
                operator="Riverside Makerspace e.V.",
                models=(
                    ServedModel("HuggingFaceTB/SmolLM2-135M-Instruct", True, 3),
                    ServedModel("HuggingFaceTB/SmolLM2-360M-Instruct", False, 1),
                ),
            )
        )
