"""The status window: gate rows, the banner, clocks, chart, log and diagnostics."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from PySide6.QtGui import QCloseEvent, QGuiApplication

from app.status_model import GATE_ORDER
from app.ui.actions import AppActions
from app.ui.controller import NodeController
from app.ui.screens.status.window import StatusWindow
from app.ui.screenshots import SampleUsage, refused_events, serving_events
from app.usage_history import UsageHistory
from tests.app.ui.test_controller import _kill_children, fake_controller  # noqa: F401


def window_for(
    qtbot: Any, controller: NodeController, **kwargs: Any
) -> tuple[StatusWindow, AppActions]:
    actions = AppActions(controller)
    window = StatusWindow(controller, actions, versions={"MeshNet": "9.9"}, **kwargs)
    qtbot.addWidget(window)
    return window, actions


def idle_controller() -> NodeController:
    return NodeController(argv_factory=lambda _r: [sys.executable, "-c", "pass"])


def sentences(window: StatusWindow) -> dict[str, str]:
    return {name: row[1].text() for name, row in window.details.gate_rows.items()}


def test_rows_fill_in_as_the_node_passes_its_gates(qtbot: Any) -> None:
    controller = idle_controller()
    window, _ = window_for(qtbot, controller)
    assert set(sentences(window)) == set(GATE_ORDER)
    assert all(text == "—" for text in sentences(window).values())
    for event in serving_events(time.time()):
        controller.handle_event(event)
    texts = sentences(window)
    assert texts["registration"] == "Registered with the tracker."
    assert texts["recipe"].startswith("Recipe llama-fp32 is certified")
    assert "Report 4 min old, stale in 10 min." in texts["capability"]
    assert window.headline_label.text() == "Contributing"
    assert window.details.tokens_label.text() == "12,480"
    assert window.details.sessions_label.text() == "2"
    assert window.uptime_label.text().startswith("3 h 1")
    assert window.details.gate_rows["identity"][3].text()  # a time
    assert not window.retry_button.isVisibleTo(window)


def test_capability_clock_ticks_every_second(qtbot: Any) -> None:
    controller = idle_controller()
    window, _ = window_for(qtbot, controller)
    events = serving_events(time.time())
    report = events[2]["data"]["report"]
    report["validated_at"] = time.time() - 15 * 60 + 3  # three seconds before stale
    for event in events:
        controller.handle_event(event)
    assert " old, stale in " in sentences(window)["capability"]
    qtbot.waitUntil(
        lambda: "stale; Retry tests this computer again" in sentences(window)["capability"],
        timeout=8000,
    )


def test_refused_banner_shows_the_sentence_and_retry_restarts(qtbot: Any, tmp_path: Path) -> None:
    controller = fake_controller(qtbot, tmp_path, mode="refuse")
    window, _ = window_for(qtbot, controller)
    window.show()
    with qtbot.waitSignal(controller.crashed, timeout=15000):
        controller.start()
    assert window.headline_label.text() == "The network did not accept this computer"
    # the node's sentence ("Not enough memory for layers 0–15") is in Details only
    assert window.sentence_label.text().startswith("This computer ran out of graphics memory.")
    assert "layers" not in window.sentence_label.text()
    assert "Not enough memory for layers 0–15" in window.details.details_state.text()
    assert window.retry_button.isVisible() and window.doctor_button.isVisible()
    assert not window.contribute_button.isVisible()
    with qtbot.waitSignal(controller.crashed, timeout=15000):
        window.retry_button.click()
    assert len(controller.argvs) == 2  # type: ignore[attr-defined]


def test_refused_sample_marks_the_failed_gate_and_later_ones_unreached(qtbot: Any) -> None:
    controller = idle_controller()
    window, _ = window_for(qtbot, controller)
    for event in refused_events(time.time()):
        controller.handle_event(event)
    assert window.details.gate_rows["admission"][2].text() == "stale"
    assert sentences(window)["registration"] == "Not reached."


def test_contribute_button_drives_the_action(qtbot: Any, tmp_path: Path) -> None:
    controller = fake_controller(qtbot, tmp_path)
    window, actions = window_for(qtbot, controller)
    actions.contribute_requested.connect(lambda on: controller.start() if on else controller.stop())
    assert window.contribute_button.text() == "Start contributing"
    window.contribute_button.click()
    qtbot.waitUntil(lambda: controller.status.state == "serving", timeout=15000)
    assert window.contribute_button.text() == "Stop contributing"
    qtbot.waitUntil(lambda: "fake node starting" in window.details.log_view.toPlainText())
    with qtbot.waitSignal(controller.running_changed, timeout=15000):
        window.contribute_button.click()
    assert window.headline_label.text() == "Not contributing"


def test_copy_diagnostics_puts_the_status_on_the_clipboard(qtbot: Any) -> None:
    controller = idle_controller()
    window, _ = window_for(qtbot, controller)
    for event in serving_events(time.time()):
        controller.handle_event(event)
    controller.status.add_log_line("INFO core.node: last words")
    window.details.copy_button.click()
    text = QGuiApplication.clipboard().text()
    assert text.startswith("MeshNet diagnostics")
    assert "MeshNet: 9.9" in text
    assert "registration: passed — Registered with the tracker." in text
    assert "INFO core.node: last words" in text


def test_chart_reads_the_usage_history(qtbot: Any, tmp_path: Path) -> None:
    history = UsageHistory(tmp_path / "usage.json")
    now = time.time()
    history.record(now - 7200, 100, "run-1")
    history.record(now, 350, "run-1")
    controller = idle_controller()
    window, _ = window_for(qtbot, controller, usage=history)
    assert window.details.chart.total == 350
    assert window.details.chart.summary().startswith("350 tokens served in the last 7 days")
    window.details.chart.set_hours(SampleUsage().hourly(now))
    window.show()
    window.details.tabs.setCurrentIndex(0)
    assert not window.details.chart.grab().isNull()  # paints without error


def test_closing_hides_with_a_tray_and_quits_without_one(qtbot: Any) -> None:
    controller = idle_controller()
    window, _ = window_for(qtbot, controller)
    window.show()
    event = QCloseEvent()
    window.closeEvent(event)
    assert not event.isAccepted() and not window.isVisible()

    main, _actions = window_for(qtbot, controller, main_window=True)
    toolbar_texts = [a.text() for a in main.toolbar.actions() if not a.isSeparator()]
    assert toolbar_texts == [
        "Contribute",
        "Pause",
        "Resume now",
        "Check this computer…",
        "Settings",
        "Network",
        "Quit",
    ]
    main.show()
    with qtbot.waitSignal(main.quit_requested, timeout=2000):
        main.close()
    assert main.isVisible()  # it stays until the node has drained
