"""The tray: an icon and tooltip per state, the menu's actions, notifications."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from app.ui.actions import AppActions
from app.ui.controller import NodeController
from app.ui.screens.tray import Tray
from app.ui.widgets.icons import TRAY_STATES, app_icon, gate_icon, icons_dir, tray_icon
from tests.app.test_status_model import event
from tests.app.ui.test_controller import _kill_children, fake_controller  # noqa: F401


def idle_controller() -> NodeController:
    return NodeController(argv_factory=lambda _r: [sys.executable, "-c", "pass"])


def test_every_icon_exists_at_every_size() -> None:
    folder = icons_dir()
    for name in ("app", *(f"tray-{state}" for state in TRAY_STATES)):
        assert (folder / f"{name}.svg").is_file()
        for size in (16, 24, 32, 48, 64, 128, 256):
            assert (folder / "png" / f"{name}-{size}.png").is_file(), (name, size)


def test_icons_load(qtbot: Any) -> None:
    assert not app_icon().isNull()
    images = {state: tray_icon(state).pixmap(32, 32).toImage() for state in TRAY_STATES}
    assert all(not image.isNull() for image in images.values())
    assert len({bytes(image.constBits()) for image in images.values()}) == len(TRAY_STATES)
    assert not gate_icon("passed").isNull() and not gate_icon("never-heard-of").isNull()


def test_menu_holds_the_actions_in_order(qtbot: Any) -> None:
    controller = idle_controller()
    tray = Tray(controller, AppActions(controller))
    texts = [action.text() for action in tray.menu.actions() if not action.isSeparator()]
    assert texts[0] == "Not contributing" and not tray.menu.actions()[0].isEnabled()
    assert texts[1:] == [
        "Contribute",
        "Pause",
        "Resume now",
        "Join another network…",
        "Leave this network…",
        "Check this computer…",
        "Status",
        "What this network serves",
        "Settings",
        "Quit",
    ]
    assert tray.menu.actions()[2].isCheckable()


def test_icon_and_tooltip_follow_the_state(qtbot: Any) -> None:
    controller = idle_controller()
    tray = Tray(controller, AppActions(controller))
    assert tray.look == "off"
    assert tray.icon.toolTip() == "MeshNet — not contributing"
    controller.handle_event(event("state", "Loading layers 0–15…", state="loading"))
    assert tray.look == "starting"
    # the node's own words ("Loading layers 0–15…") stay in Details
    assert tray.icon.toolTip() == "MeshNet — getting ready"
    controller.handle_event(
        event(
            "gate",
            "Registered",
            gate="registration",
            gate_state="passed",
            data={"shard": [0, 15], "node_id": "n"},
        )
    )
    controller.handle_event(event("state", "Serving", state="serving"))
    controller.handle_event(event("stats", data={"tokens_served": 120, "open_sessions": 1}))
    controller.handle_event(
        event(
            "gate",
            gate="sessions",
            gate_state="info",
            data={"tokens_served": 120, "open_sessions": 1},
        )
    )
    assert tray.look == "serving"
    assert tray.icon.toolTip() == "MeshNet — contributing: helping answer questions"
    assert tray.state_line.text() == "Contributing: helping answer questions"
    controller.handle_event(event("state", "Paused: game.exe is running", state="paused"))
    assert tray.look == "paused"
    assert tray.icon.toolTip() == "MeshNet — paused: Paused: game.exe is running"
    controller.handle_event(
        event("state", "CUDA out of memory.", state="error", reason="out-of-memory")
    )
    assert tray.look == "error"
    assert tray.icon.toolTip().startswith(
        "MeshNet — stopped by a problem: This computer ran out of graphics memory."
    )
    assert "CUDA" not in tray.icon.toolTip()


def test_contribute_follows_the_node_and_reports_the_users_wish(qtbot: Any, tmp_path: Path) -> None:
    controller = fake_controller(qtbot, tmp_path)
    actions = AppActions(controller)
    wishes: list[bool] = []
    actions.contribute_requested.connect(wishes.append)
    actions.contribute_requested.connect(lambda on: controller.start() if on else controller.stop())
    assert not actions.contribute.isChecked() and not actions.pause.isEnabled()
    actions.contribute.trigger()
    assert wishes == [True]
    qtbot.waitUntil(lambda: controller.status.state == "serving", timeout=15000)
    assert actions.contribute.isChecked() and actions.pause.isEnabled()
    with qtbot.waitSignal(controller.running_changed, timeout=15000):
        actions.contribute.trigger()
    assert wishes == [True, False]
    assert not actions.contribute.isChecked()


def test_crash_unchecks_contribute(qtbot: Any, tmp_path: Path) -> None:
    controller = fake_controller(qtbot, tmp_path, mode="crash")
    actions = AppActions(controller)
    with qtbot.waitSignal(controller.crashed, timeout=15000):
        controller.start()
    assert not actions.contribute.isChecked()


def test_manual_pause_changes_the_pause_action(qtbot: Any) -> None:
    controller = idle_controller()
    actions = AppActions(controller)
    actions.set_manual_pause(True)
    assert actions.resume.isVisible() and actions.resume.isEnabled()
    assert not actions.pause.isVisible()
    actions.set_manual_pause(False)
    assert actions.pause.isVisible() and not actions.resume.isVisible()
    choices = [action.text() for action in actions.pause_menu.actions()]
    assert choices == ["For 1 hour", "Until I resume", "Until the computer restarts"]


def test_clicking_the_icon_opens_status_and_notifications_never_fail(qtbot: Any) -> None:
    controller = idle_controller()
    actions = AppActions(controller)
    opened: list[bool] = []
    actions.status.triggered.connect(lambda *_: opened.append(True))
    tray = Tray(controller, actions)
    tray.icon.activated.emit(tray.icon.ActivationReason.Trigger)
    assert opened == [True]
    tray.icon.activated.emit(tray.icon.ActivationReason.Context)
    assert opened == [True]
    tray.show()  # no tray offscreen: showing and notifying must still be harmless
    controller.notify.emit("Contributing", "This computer is serving layers 0–15.")
