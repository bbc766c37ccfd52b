"""The gamer's controls: Pause with a choice of how long beside Stop (and in the
tray's menu), Resume now, and Leave this network, which stops the node (it
deregisters as it stops), forgets the network and its invite, and says what was kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMessageBox

from app.texts import text
from app.ui.main import PAUSED_BOOT_KEY
from core.identity.keystore import DEFAULT_PROFILE
from core.network.joined_network import load_joined_network, save_joined_network
from tests.app.ui.test_controller import _kill_children, _live, fake_controller  # noqa: F401
from tests.app.ui.test_live_state import LAN_PARTY
from tests.app.ui.test_main import make_app


@pytest.fixture
def serving_app(qtbot: Any, tmp_path: Path) -> Any:
    controller = fake_controller(qtbot, tmp_path)
    app, _stub = make_app(qtbot, tmp_path, controller=controller)
    app.show_initial()
    app.actions.contribute.trigger()
    qtbot.waitUntil(lambda: controller.status.state == "serving", timeout=15000)
    return app


@pytest.mark.parametrize(
    ("choice", "sentence"),
    [
        ("pause_until_resume", "pause.until-resume"),
        ("pause_until_restart", "pause.until-restart"),
    ],
)
def test_pause_beside_stop_until_resumed(
    qtbot: Any, serving_app: Any, choice: str, sentence: str
) -> None:
    app, window = serving_app, serving_app.status_window
    assert window.pause_button.isVisible() and window.pause_button.isEnabled()
    assert window.pause_button.menu() is app.actions.pause_menu
    assert window.contribute_button.text() == text("button.stop")
    getattr(app.actions, choice).trigger()
    qtbot.waitUntil(lambda: app.controller.status.state == "paused", timeout=15000)
    assert window.sentence_label.text() == text(sentence)
    assert window.resume_button.isVisible() and not window.pause_button.isVisible()
    assert app.monitor.manual_pause_until == float("inf")  # no timer ends it
    assert app.paused_until_restart() == (choice == "pause_until_restart")
    window.resume_button.click()
    qtbot.waitUntil(lambda: app.controller.status.state == "serving", timeout=15000)
    assert not app.paused_until_restart() and app.state.value(PAUSED_BOOT_KEY) is None
    assert window.pause_button.isVisible()


def test_paused_until_restart_is_not_started_again_in_the_same_boot(
    qtbot: Any, tmp_path: Path
) -> None:
    import psutil

    app, _ = make_app(qtbot, tmp_path)
    app.state.setValue("state/contribute", "true")
    app.state.setValue(PAUSED_BOOT_KEY, str(psutil.boot_time()))
    started: list[bool] = []
    app.controller.start = lambda *a, **k: started.append(True)  # type: ignore[method-assign]
    app.show_initial()
    assert started == []
    app.state.setValue(PAUSED_BOOT_KEY, str(psutil.boot_time() - 3600))  # restarted since
    app.show_initial()
    assert started == [True]


def test_leave_stops_the_node_forgets_the_network_and_says_what_was_kept(
    qtbot: Any, serving_app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = serving_app
    save_joined_network(DEFAULT_PROFILE, LAN_PARTY)
    said: list[str] = []
    monkeypatch.setattr(QMessageBox, "question", lambda *a: QMessageBox.StandardButton.Yes)
    monkeypatch.setattr(QMessageBox, "information", lambda _p, _t, words: said.append(words))
    app.actions.leave.trigger()
    qtbot.waitUntil(lambda: said != [], timeout=20000)
    assert not app.controller.running and app.controller.status.state == "stopped"
    assert load_joined_network(DEFAULT_PROFILE) is None  # its invite and join token with it
    assert said == [text("leave.done", name="Sam's LAN Party")]
    assert "key" in said[0] and "settings" in said[0]
    assert not app.contribute_wish()
    qtbot.waitUntil(
        lambda: app.status_window.network_label.text() == text("status.network.none"),
        timeout=10000,
    )


def test_join_another_is_its_own_menu_item(qtbot: Any, tmp_path: Path) -> None:
    from app.ui.screens.doctor.wizard import DoctorWizard

    save_joined_network(DEFAULT_PROFILE, LAN_PARTY)
    app, _ = make_app(qtbot, tmp_path)
    app.actions.join_another.trigger()
    wizard = app._windows["doctor"]
    assert isinstance(wizard, DoctorWizard)
    qtbot.addWidget(wizard)
    assert wizard.currentId() == DoctorWizard.PAGE_JOIN
    assert wizard.join_page.entry.isVisible()  # ready for the new invite
