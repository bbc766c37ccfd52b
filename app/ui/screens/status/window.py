"""The Status window: what this computer is doing for the network, in plain words.

The main view says it in a sentence with the next step as a button, and shows
the contribution (words written today, this week, in all, and for how long);
nothing on it names a gate, a shard or a digest. **Details** (one click, or
Alt+D) shows the engineer's view (``details.py``): the per-step rows, the
usage chart, the node's log and Copy diagnostics. The main view is a column of sections
(:meth:`StatusWindow.add_section` adds one, e.g. credits).

It reads ``controller.status`` only (never the event stream) and refreshes
when the controller says the status changed, plus once a second for the
clocks (the capability report's age and time left before it goes stale,
the uptime). Where the desktop has no system tray this is the main window:
it then carries the tray's actions in a toolbar, and closing it quits.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QFont, QGuiApplication, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.credit_summary import fetch_credit
from app.status_model import (
    FAILED_STATES,
    diagnostics_text,
    format_count,
    format_duration,
    headline,
    tray_state,
)
from app.texts import plain, text
from app.ui.actions import AppActions
from app.ui.controller import CRASHED_TWICE, NodeController
from app.ui.cost_reward import CostReward, ReadUse
from app.ui.credit_card import CreditCard, FetchCredit
from app.ui.errors import guarded
from app.ui.screens.status.details import DetailsView, key_place_sentence
from app.ui.widgets.icons import app_icon, tray_icon
from app.ui.widgets.labels import stat_box

log = logging.getLogger(__name__)


CHART_REFRESH_MS = 60_000
# Reason codes whose next step is not Retry (app.status_model.WHY_BY_REASON's keys)
SETTINGS_REASONS = frozenset({"bad-settings"})
JOIN_REASONS = frozenset({"no-tracker", "not-joined"})
CHECK_REASONS = frozenset(
    {"out-of-memory", "load-failed", "probe-failed", "not-passed", "serving-failed"}
)
# The banner's looks: a palette role blended with a hue, so dark palettes stay readable
BANNER_STYLE = (
    "#banner { border-radius: 8px; background: palette(alternate-base); }"
    '#banner[look="error"] { border: 2px solid #d0473e; }'
    '#banner[look="serving"] { border: 2px solid #2e9d5b; }'
    '#banner[look="paused"] { border: 2px solid #d89a1e; }'
    "#stat, #gates { border: 1px solid palette(mid); border-radius: 6px; }"
    "#gates { background: palette(base); }"
    "#gate-title { font-weight: bold; }"
    "#reason { font-family: monospace; }"
    "#caption { color: palette(placeholder-text); }"
    "#section { font-weight: bold; }"
)


class StatusWindow(QMainWindow):
    """The main view in plain words, the Details view with every step, one click apart."""

    quit_requested = Signal()
    MAIN_VIEW, DETAILS_VIEW = 0, 1

    def __init__(
        self,
        controller: NodeController,
        actions: AppActions,
        *,
        usage: Any | None = None,
        main_window: bool = False,
        versions: Mapping[str, str] | None = None,
        network_name: Callable[[], str | None] | None = None,
        credit_fetch: FetchCredit = fetch_credit,
        key_place: Callable[[], str] | None = None,
        read_use: ReadUse | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._key_place = key_place or key_place_sentence
        self._controller = controller
        self._actions = actions
        self._usage = usage
        self._main_window = main_window
        self._versions = dict(versions or {})
        self._pause_sentence = ""
        self._closing_for_good = False
        self._network_name = network_name  # read when the window shows (a file read)
        self._credit_fetch = credit_fetch
        self._read_use = read_use  # the node's use of this PC (app.machine_use)
        self.setWindowTitle("MeshNet")
        self.setWindowIcon(app_icon())
        self.resize(760, 560)
        # wrapped sentences grow tall at a narrow width; the main view keeps room for two columns
        self.setMinimumWidth(700)
        self._build()
        self.set_network_name(network_name() if network_name else None)
        if main_window:
            self._build_toolbar()
        controller.status_changed.connect(self.refresh)
        controller.log_line.connect(self._append_log)
        self._clock = QTimer(self)
        self._clock.setInterval(1000)
        self._clock.timeout.connect(self._tick)
        self._clock.start()
        self._chart_timer = QTimer(self)
        self._chart_timer.setInterval(CHART_REFRESH_MS)
        self._chart_timer.timeout.connect(self.refresh_chart)
        self._chart_timer.start()
        controller.stats_received.connect(self._stats)
        controller.gate_changed.connect(self._gate_changed)
        for line in controller.status.log_lines:
            self.details.log_view.appendPlainText(line)
        self.refresh()
        self.refresh_chart()
        # buttons hidden before the first show still counted in the cached least height:
        # the window opened 200 px too tall, half of its main view empty
        for layout in [*self.banner.findChildren(QVBoxLayout), self.banner.layout()]:
            if layout is not None:
                layout.invalidate()

    # --- building --------------------------------------------------------
    def _build(self) -> None:
        self.views = QStackedWidget()
        self.views.addWidget(self._build_main_view())
        self.details = DetailsView(lambda: self._controller.status, key_place=self._key_place)
        self.details.back_button.clicked.connect(self.show_main)
        self.details.copy_button.clicked.connect(self.copy_diagnostics)
        self.views.addWidget(self.details)
        self.setCentralWidget(self.views)
        self._set_view(self.MAIN_VIEW)
        self.setStyleSheet(BANNER_STYLE)

    def _build_main_view(self) -> QWidget:
        self.main_view = QWidget()
        layout = QVBoxLayout(self.main_view)
        layout.setContentsMargins(16, 16, 16, 12)
        layout.setSpacing(12)
        layout.addWidget(self._build_banner())
        # sections stack here, in order; add_section appends one (e.g. credits)
        self.sections = QVBoxLayout()
        self.sections.setSpacing(12)
        self.sections.addWidget(self._build_contribution())
        self.credit_card = CreditCard(
            lambda: self._controller.status.registration, fetch=self._credit_fetch
        )
        self.sections.addWidget(self.credit_card)
        # what contributing costs this PC and earns, and the week in words
        self.cost_reward = CostReward(
            active=lambda: self._controller.status.active,
            node_pid=lambda: self._controller.pid,
            read_use=self._read_use,
        )
        self.credit_card.summary_changed.connect(self.cost_reward.set_credit)
        self.sections.addWidget(self.cost_reward)
        layout.addLayout(self.sections)
        layout.addStretch(1)
        self.rules_label = QLabel("")
        self.rules_label.setObjectName("caption")
        self.rules_label.setWordWrap(True)
        layout.addWidget(self.rules_label)
        bottom = QHBoxLayout()
        self.network_label = QLabel()
        self.network_label.setObjectName("caption")
        self.network_label.setWordWrap(True)
        self.serves_button = QPushButton(text("button.serves"))
        self.serves_button.setAccessibleName(plain("button.serves"))
        self.serves_button.clicked.connect(self._actions.recipes.trigger)
        self.details_button = QPushButton(text("button.details"))
        self.details_button.setAccessibleName(plain("button.details"))
        self.details_button.setToolTip(text("button.details.tip"))
        self.details_button.clicked.connect(self.show_details)
        bottom.addWidget(self.network_label, 1)
        bottom.addWidget(self.serves_button)
        bottom.addWidget(self.details_button)
        layout.addLayout(bottom)
        return self.main_view

    def add_section(self, widget: QWidget) -> None:
        """Add a section to the main view, below the contribution numbers."""
        self.sections.addWidget(widget)

    def _build_contribution(self) -> QWidget:
        section = QWidget()
        column = QVBoxLayout(section)
        column.setContentsMargins(0, 0, 0, 0)
        title = QLabel(text("status.contribution"))
        title.setObjectName("section")
        column.addWidget(title)
        stats = QHBoxLayout()
        stats.setSpacing(10)
        today, self.today_label = stat_box(text("stat.today"))
        week, self.week_label = stat_box(text("stat.week"))
        total, self.total_label = stat_box(text("stat.total"))
        uptime, self.uptime_label = stat_box(text("stat.time"))
        for frame in (today, week, total):
            frame.setToolTip(text("stat.words.tip"))
        for frame in (today, week, total, uptime):
            stats.addWidget(frame)
        column.addLayout(stats)
        return section

    def _build_banner(self) -> QFrame:
        self.banner = QFrame()
        self.banner.setObjectName("banner")
        row = QHBoxLayout(self.banner)
        row.setContentsMargins(14, 12, 14, 12)
        row.setSpacing(14)
        self.state_icon = QLabel()
        self.state_icon.setFixedSize(48, 48)
        row.addWidget(self.state_icon, 0, Qt.AlignmentFlag.AlignTop)
        words = QVBoxLayout()
        words.setSpacing(4)
        self.headline_label = QLabel()
        font = QFont(self.headline_label.font())
        font.setPointSizeF(font.pointSizeF() * 1.35)
        font.setBold(True)
        self.headline_label.setFont(font)
        self.headline_label.setWordWrap(True)
        self.sentence_label = QLabel()
        self.sentence_label.setWordWrap(True)
        self.sentence_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # the window's least height is measured at its least width: a sentence squeezed
        # to a few words a line made the window tall and the main view half empty
        for label in (self.headline_label, self.sentence_label):
            label.setMinimumWidth(360)
        words.addWidget(self.headline_label)
        words.addWidget(self.sentence_label)
        row.addLayout(words, 1)
        buttons = QVBoxLayout()
        self.contribute_button = QPushButton(text("button.start"))
        self.contribute_button.setMinimumWidth(150)
        self.contribute_button.clicked.connect(self._actions.contribute.trigger)
        self._actions.contribute.changed.connect(self._sync_contribute)
        # Pause beside Stop: for 1 hour, until I resume, until the computer restarts
        self.pause_button = QPushButton(text("action.pause.menu"))
        self.pause_button.setMenu(self._actions.pause_menu)
        self.resume_button = QPushButton(text("action.resume"))
        self.resume_button.clicked.connect(self._actions.resume.trigger)
        self._actions.pause.changed.connect(self._sync_contribute)
        self._actions.resume.changed.connect(self._sync_contribute)
        self.retry_button = QPushButton(text("button.retry"))
        self.retry_button.clicked.connect(self._retry)
        self.doctor_button = QPushButton(text("button.check"))
        self.doctor_button.clicked.connect(self._actions.doctor.trigger)
        self.settings_button = QPushButton(text("button.settings"))
        self.settings_button.clicked.connect(self._actions.settings.trigger)
        self.join_button = QPushButton(text("button.join"))
        self.join_button.clicked.connect(self._actions.doctor.trigger)  # opens on Join a network
        # after two crashes in a row: no endless Retry, the diagnostics for a helper instead
        self.banner_copy_button = QPushButton(text("details.copy"))
        self.banner_copy_button.clicked.connect(self.copy_diagnostics)
        for button in (
            self.contribute_button,
            self.pause_button,
            self.resume_button,
            self.retry_button,
            self.doctor_button,
            self.settings_button,
            self.join_button,
            self.banner_copy_button,
        ):
            button.setAccessibleName(button.text().replace("…", ""))
            buttons.addWidget(button)
        buttons.addStretch(1)
        row.addLayout(buttons)
        self.banner.setAccessibleName(text("action.status"))
        return self.banner

    def _build_toolbar(self) -> None:
        toolbar = QToolBar("MeshNet")
        toolbar.setMovable(False)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        for action in self._actions.toolbar():
            if action is None:
                toolbar.addSeparator()
            else:
                toolbar.addAction(action)
        for menu in (self._actions.pause, self._actions.network_menu.menuAction()):
            button = toolbar.widgetForAction(menu)
            if isinstance(button, QToolButton):  # one click opens the choices
                button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.addToolBar(toolbar)
        self.toolbar = toolbar

    # --- the two views ---------------------------------------------------
    def _set_view(self, index: int) -> None:
        # a hidden view must not hold the window at its size: only the shown one counts
        for page in (self.main_view, self.details):
            policy = (
                QSizePolicy.Policy.Preferred
                if page is self.views.widget(index)
                else (QSizePolicy.Policy.Ignored)
            )
            page.setSizePolicy(policy, policy)
        self.views.setCurrentIndex(index)

    def show_details(self) -> None:
        self.refresh_key_place()
        self._set_view(self.DETAILS_VIEW)
        # nine rows and a log, and room for the leaderboard's sentence when there is one
        extra = self.details.extra_height()
        self.resize(max(self.width(), 760), max(self.height(), 640 + extra))
        self.details.back_button.setFocus()

    def show_main(self) -> None:
        self._set_view(self.MAIN_VIEW)
        self.details_button.setFocus()

    @property
    def showing_details(self) -> bool:
        return self.views.currentIndex() == self.DETAILS_VIEW

    def set_network_name(self, name: str | None) -> None:
        """The joined network's name under the numbers (None: not joined yet)."""
        self.network_label.setText(
            text("status.network", name=name) if name else text("status.network.none")
        )

    # --- refreshing ------------------------------------------------------
    @guarded
    def refresh(self) -> None:
        status = self._controller.status
        title, sentence = headline(status)
        self.headline_label.setText(title)
        self.sentence_label.setText(sentence)
        self.banner.setAccessibleDescription(f"{title}. {sentence}")
        look = tray_state(status.state)
        self.state_icon.setPixmap(tray_icon(look).pixmap(48, 48))
        self.state_icon.setAccessibleName(title)
        self.banner.setProperty("look", look)
        self.banner.style().unpolish(self.banner)
        self.banner.style().polish(self.banner)
        failed = status.state in FAILED_STATES
        reason = status.reason or ""
        self.settings_button.setVisible(failed and reason in SETTINGS_REASONS)
        self.join_button.setVisible(failed and reason in JOIN_REASONS)
        gave_up = failed and reason == CRASHED_TWICE
        self.retry_button.setVisible(failed and reason not in JOIN_REASONS and not gave_up)
        self.banner_copy_button.setVisible(gave_up)
        self.doctor_button.setVisible(
            (failed and reason in CHECK_REASONS) or status.state == "stopped"
        )
        self._sync_contribute()
        # pause rules apply to a running node only
        self.rules_label.setText(self._pause_sentence if status.active else "")
        self.cost_reward.refresh_use()
        self.cost_reward.read_use()
        self.details.refresh()
        self._refresh_totals()
        self._tick()

    def _refresh_totals(self) -> None:
        totals = getattr(self._usage, "totals", None)
        if totals is None:
            for label in (self.today_label, self.week_label, self.total_label):
                label.setText("—")
            return
        today, week, everything = totals(time.time())
        self.today_label.setText(format_count(today))
        self.week_label.setText(format_count(week))
        self.total_label.setText(format_count(everything))

    @guarded
    def _tick(self) -> None:
        status = self._controller.status
        now = time.time()
        self.uptime_label.setText(
            format_duration(status.uptime(now)) if status.state == "serving" else "—"
        )
        self.details.tick(now)

    @guarded
    def refresh_chart(self) -> None:
        now = time.time()
        if self._usage is None:
            self.cost_reward.set_hours([], now)
            return
        hours = self._usage.hourly(now)
        self.details.chart.set_hours(hours)
        self.cost_reward.set_hours(hours, now)
        self._refresh_totals()

    def _gate_changed(self, gate: str) -> None:
        if gate == "registration":  # the credit need not wait for the next minute
            self.credit_card.refresh()

    def _stats(self, _data: dict[str, Any]) -> None:
        if self.isVisible():  # a hidden window catches up on its next minute tick
            self.refresh_chart()

    def set_pause_rules_sentence(self, sentence: str) -> None:
        """The pause monitor's latest decision, shown under the numbers."""
        self._pause_sentence = sentence
        self.rules_label.setText(sentence if self._controller.status.active else "")

    def refresh_key_place(self) -> None:
        """Say, in Details, where the node's key lives when it is not in a keyring."""
        self.details.refresh_key_place()

    def set_credit_link_sentence(self, sentence: str) -> None:
        """What became of the leaderboard name and team, shown in the Details view."""
        self.details.set_credit_link_sentence(sentence)

    def _sync_contribute(self) -> None:
        action = self._actions.contribute
        self.contribute_button.setEnabled(action.isEnabled())
        key = "button.stop" if action.isChecked() else "button.start"
        self.contribute_button.setText(text(key))
        self.contribute_button.setAccessibleName(self.contribute_button.text())
        failed = self._controller.status.state in FAILED_STATES
        self.contribute_button.setVisible(not failed)  # Retry says the same there
        pause, resume = self._actions.pause, self._actions.resume
        self.pause_button.setVisible(action.isChecked() and pause.isVisible())
        self.pause_button.setEnabled(pause.isEnabled())
        self.resume_button.setVisible(resume.isVisible())

    @guarded
    def _append_log(self, line: str) -> None:
        self.details.log_view.appendPlainText(line)

    @guarded
    def _retry(self) -> None:
        self._controller.retry()

    @guarded
    def copy_diagnostics(self) -> None:
        diagnostics = diagnostics_text(self._controller.status, self._versions)
        clipboard = QGuiApplication.clipboard()
        clipboard.setText(diagnostics)
        self.statusBar().showMessage(text("details.copied"), 5000)

    def showEvent(self, event: QShowEvent) -> None:
        """A window opened late shows the truth: refresh everything as it appears."""
        super().showEvent(event)
        if self._network_name is not None:
            self.set_network_name(self._network_name())
        self.refresh()
        self.refresh_chart()

    # --- closing ---------------------------------------------------------
    def allow_close(self) -> None:
        """The app is quitting for good: a close now closes (never asks to quit again)."""
        self._closing_for_good = True

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing hides the window; without a tray it is the app, so it asks to quit
        (the app drains the node, then lets this window close)."""
        if self._closing_for_good:
            event.accept()
            return
        event.ignore()
        if self._main_window:
            self.quit_requested.emit()
        else:
            self.hide()
