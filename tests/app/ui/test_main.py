"""meshnet-app: the entry point, the composition, single instance, errors, screenshots."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, QSettings, Signal

from app.settings_model import AppSettings
from app.ui import errors
from app.ui.main import MeshNetApp, main, versions
from app.ui.screenshots import render_all
from app.ui.settings_store import SettingsStore
from app.ui.single_instance import SingleInstance
from tests.app.ui.test_controller import _kill_children, _live, fake_controller  # noqa: F401

ROOT = Path(__file__).resolve().parents[3]


class StubApp(QObject):
    """Stands in for QApplication so a test can see quit() without ending the test run."""

    aboutToQuit = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.quits = 0

    def setQuitOnLastWindowClosed(self, _value: bool) -> None:
        pass

    def quit(self) -> None:
        self.quits += 1

    def exit(self, _code: int = 0) -> None:
        self.quits += 1


class NoProbes:
    def read(self, node_pid: int | None) -> Any:
        from app.pause_rules import ProbeReadings

        return ProbeReadings()


class Usage:
    def hourly(self, now: float) -> list[tuple[float, int]]:
        return []

    def record(self, now: float, tokens: int, run_id: str) -> int:
        return 0

    def save(self) -> None:
        pass


def make_store(tmp_path: Path, settings: AppSettings | None = None) -> SettingsStore:
    store = SettingsStore(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    if settings is not None:
        store.save(settings)
    return store


def make_app(qtbot: Any, tmp_path: Path, **kwargs: Any) -> tuple[MeshNetApp, StubApp]:
    stub = StubApp()
    if "store" not in kwargs:
        # saved: not a first launch; an own tracker stands in for a joined network
        kwargs["store"] = make_store(tmp_path, AppSettings(tracker_url="http://127.0.0.1:9"))
    kwargs.setdefault("state", QSettings(str(tmp_path / "state.ini"), QSettings.Format.IniFormat))
    app = MeshNetApp(
        stub,  # type: ignore[arg-type]
        probes=NoProbes(),
        usage=Usage(),
        tray_available=False,
        **kwargs,
    )
    qtbot.addWidget(app.status_window)
    return app, stub


def test_version_prints_and_exits(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("meshnet-app ")
    assert set(versions()) == {"MeshNet", "Python", "Qt", "PySide6", "OS"}


def test_the_gui_process_never_imports_torch() -> None:
    code = (
        "import sys, app.ui.main, app.ui.screenshots, app.ui.pause_monitor; "
        "from app.pause_rules import system_probes; system_probes(); "
        "print('torch' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_without_a_tray_the_status_window_is_the_main_window(qtbot: Any, tmp_path: Path) -> None:
    app, _stub = make_app(qtbot, tmp_path)
    assert app.tray is None
    app.show_initial(hidden=True)  # hidden is ignored: there is nowhere else to show
    assert app.status_window.isVisible()
    assert app.status_window.toolbar is not None


def test_a_first_launch_opens_the_doctor_and_later_launches_do_not(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    monkeypatch.setattr(MeshNetApp, "open_doctor", lambda self: opened.append("doctor"))
    first, _ = make_app(qtbot, tmp_path / "first", store=make_store(tmp_path / "first"))
    first.show_initial()
    qtbot.waitUntil(lambda: opened == ["doctor"], timeout=5000)
    later, _ = make_app(qtbot, tmp_path / "later")
    later.show_initial()
    qtbot.wait(200)
    assert opened == ["doctor"]  # settings were saved before: no wizard forced on the user


def test_quit_drains_the_node_before_quitting(qtbot: Any, tmp_path: Path) -> None:
    controller = fake_controller(qtbot, tmp_path)
    app, stub = make_app(qtbot, tmp_path, controller=controller)
    app.actions.contribute.trigger()
    qtbot.waitUntil(lambda: controller.status.state == "serving", timeout=15000)
    app.actions.quit.trigger()
    assert stub.quits == 0  # not before the node has left the network
    qtbot.waitUntil(lambda: stub.quits == 1, timeout=15000)
    assert not controller.running
    assert controller.status.state == "stopped"
    assert app.contribute_wish()  # quitting is not turning Contribute off


def test_contribute_is_remembered_across_launches(qtbot: Any, tmp_path: Path) -> None:
    controller = fake_controller(qtbot, tmp_path)
    app, _stub = make_app(qtbot, tmp_path, controller=controller)
    app.show_initial()
    assert not controller.running
    app.actions.contribute.trigger()
    qtbot.waitUntil(lambda: controller.status.state == "serving", timeout=15000)
    with qtbot.waitSignal(controller.running_changed, timeout=15000):
        app.actions.contribute.trigger()
    assert not app.contribute_wish()
    app.set_contributing(True)
    qtbot.waitUntil(lambda: controller.status.state == "serving", timeout=15000)
    again = fake_controller(qtbot, tmp_path)
    relaunched, _ = make_app(qtbot, tmp_path, controller=again)
    relaunched.show_initial(hidden=True)
    qtbot.waitUntil(lambda: again.status.state == "serving", timeout=15000)
    for running in (controller, again):
        with qtbot.waitSignal(running.running_changed, timeout=15000):
            running.stop()


def test_invalid_settings_open_settings_instead_of_starting(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    controller = fake_controller(qtbot, tmp_path)
    app, _stub = make_app(qtbot, tmp_path, controller=controller)
    # a stored value this bad is dropped on load; settings held in memory can still be
    monkeypatch.setattr(app.store, "load", lambda: AppSettings(tracker_url="not a url"))
    shown: list[str] = []
    monkeypatch.setattr("app.ui.main.QMessageBox.information", lambda *a: shown.append(a[2]))
    monkeypatch.setattr(app, "open_settings", lambda: shown.append("settings"))
    app.actions.contribute.trigger()
    assert not controller.running
    assert not app.actions.contribute.isChecked()
    assert shown[0].startswith("Your settings need a change before contributing:")
    assert shown[1] == "settings"


def test_a_second_launch_raises_the_first(qtbot: Any) -> None:
    name = f"meshnet-test-{uuid.uuid4().hex[:8]}"
    first = SingleInstance(name)
    assert first.claim() and first.is_primary
    second = SingleInstance(name)
    with qtbot.waitSignal(first.raise_requested, timeout=5000):
        assert not second.claim()
    assert not second.is_primary
    first.release()
    third = SingleInstance(name)
    assert third.claim()  # the name is free again
    third.release()


def test_guarded_slots_log_instead_of_raising(
    qtbot: Any, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[BaseException] = []
    monkeypatch.setattr(errors, "show_error", lambda parent, exc: shown.append(exc))

    @errors.guarded
    def broken() -> None:
        raise ValueError("bug")

    with caplog.at_level(logging.ERROR):
        assert broken() is None
    assert "error in" in caplog.text
    qtbot.waitUntil(lambda: len(shown) == 1)


def test_user_errors_show_their_own_words() -> None:
    class TrackerReadError(Exception):
        pass

    assert errors.user_sentence(TrackerReadError("The tracker did not answer.")) == (
        "The tracker did not answer."
    )
    assert errors.user_sentence(KeyError("x")) is None
    assert "Something went wrong inside MeshNet" in errors.apology()


def test_excepthook_logs_and_does_not_raise(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[BaseException] = []
    monkeypatch.setattr(errors, "show_error", lambda parent, exc: shown.append(exc))
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    errors.install_excepthook()
    with caplog.at_level(logging.CRITICAL):
        sys.excepthook(RuntimeError, RuntimeError("boom"), None)
    assert "uncaught exception" in caplog.text
    assert isinstance(shown[0], RuntimeError)
    with caplog.at_level(logging.CRITICAL):
        worker = threading.Thread(target=lambda: 1 / 0, name="worker-x")
        worker.start()
        worker.join()
    assert "uncaught exception in thread worker-x" in caplog.text
    assert len(shown) == 1  # nothing shown from another thread


def test_signal_emits_keep_the_reference_count_of_true(qtbot: Any) -> None:
    """PySide6 6.12.0 dropped a reference to True per emit; Python 3.11 then aborts
    ("bool_dealloc") after a few thousand, killing a serving app within an hour.
    pyproject excludes it; this catches a version that brings the bug back."""

    class Emitter(QObject):
        ping = Signal()
        flag = Signal(bool)

    emitter = Emitter()
    before = sys.getrefcount(True)
    for _ in range(200):
        emitter.ping.emit()
        emitter.flag.emit(True)
    assert sys.getrefcount(True) >= before - 5


def test_screenshot_mode_renders_every_screen(qtbot: Any, tmp_path: Path) -> None:
    from PySide6.QtWidgets import QApplication

    qapp = QApplication.instance()
    assert render_all(tmp_path, qapp) == 0  # type: ignore[arg-type]
    names = {path.stem for path in tmp_path.glob("*.png")}
    assert {
        "status-serving",
        "status-refused",
        "status-relay",
        "status-details",
        "status-main-window",
        "tray-menu",
        "tray-icons",
        "wizard-welcome",
        "wizard-result-failed",
        "recipes-default",
        "settings-advanced",
    } <= names
    assert all(path.stat().st_size > 1000 for path in tmp_path.glob("*.png"))


def test_logging_goes_to_a_file_under_the_data_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.ui.main import setup_logging

    monkeypatch.setenv("MESHNET_HOME", str(tmp_path))
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        path = setup_logging()
        logging.getLogger("app.test").warning("hello from the test")
        for handler in root.handlers:
            handler.flush()
        assert path == tmp_path / "logs" / "app.log"
        assert "hello from the test" in path.read_text(encoding="utf-8")
    finally:
        for handler in root.handlers[:]:
            if handler not in before:
                root.removeHandler(handler)
                handler.close()


def test_language_is_a_command_line_option(capsys: pytest.CaptureFixture[str]) -> None:
    from app.ui.main import parse_args

    assert parse_args(["--language", "de"]).language == "de"
    assert parse_args([]).language is None  # the system's language
    with pytest.raises(SystemExit):
        parse_args(["--language", "fr"])
    assert "invalid choice: 'fr'" in capsys.readouterr().err
