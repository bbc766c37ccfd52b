"""``meshnet-app``: the contributor's tray app.

Composition root of the GUI: one settings store, one node controller, the
pause monitor, the tray (or, where the desktop has none, the status window
as the main window) and the screens C2 builds (doctor wizard, recipes,
settings), opened on demand. The GUI process never imports torch: the node
runs as a child process (``app.ui.controller``).

``--screenshot DIR`` renders every screen offscreen and exits; a second
launch asks the first to show its window and exits 0. ``--join LINK`` (what a
``meshnet://`` link opens) shows the wizard's join page with the link, in this app
or in the one already running; a branded installer's ``network.json`` does the same
on a first run.
"""

from __future__ import annotations

import argparse
import logging
import logging.handlers
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import psutil
from PySide6 import __version__ as pyside_version
from PySide6.QtCore import QObject, QSettings, QTimer, qVersion
from PySide6.QtWidgets import QApplication, QMessageBox, QSystemTrayIcon, QWidget

from app.machine_use import MachineUseReader
from app.network_join import APP_PROFILE, no_network_sentence, tracker_url_for
from app.run_location import run_location_problem
from app.settings_model import validate_settings
from app.texts import text
from app.ui.actions import AppActions
from app.ui.batch_jobs import BatchJobsSupervisor
from app.ui.controller import NodeController
from app.ui.credit_linker import CreditLinker
from app.ui.errors import apology, guarded, install_excepthook, set_log_file, user_sentence
from app.ui.i18n import install_language
from app.ui.link_events import LinkOpenFilter
from app.ui.network_watch import JoinedNetworkWatch, network_name
from app.ui.pause_monitor import DEFAULT_PERIOD_MS, PauseMonitor
from app.ui.quit_signals import QuitOnSignal
from app.ui.screens.status.window import StatusWindow
from app.ui.screens.tray import Tray
from app.ui.settings_store import SettingsStore, default_qsettings
from app.ui.single_instance import SingleInstance
from app.ui.widgets.icons import app_icon

log = logging.getLogger(__name__)

APP_NAME = "MeshNet"
CONTRIBUTE_KEY = "state/contribute"
# "Pause until the computer restarts": the boot it was asked in (psutil.boot_time)
PAUSED_BOOT_KEY = "state/paused-boot"
# Quitting waits this long for the node to drain and deregister before killing it
QUIT_TIMEOUT_S = 8.0


def app_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("meshnet")
    except PackageNotFoundError:
        from core import __version__

        return __version__


def versions() -> dict[str, str]:
    """What "Copy diagnostics" and bug reports need to know about this install."""
    return {
        "MeshNet": app_version(),
        "Python": platform.python_version(),
        "Qt": qVersion(),
        "PySide6": pyside_version,
        "OS": f"{platform.system()} {platform.release()} ({platform.machine()})",
    }


def setup_logging() -> Path | None:
    """Log to ``<data home>/logs/app.log`` (rotated) and stderr; returns the file."""
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    stream = logging.StreamHandler()
    stream.setFormatter(formatter)
    root.addHandler(stream)
    try:
        from core.paths import data_home

        folder = data_home() / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "app.log"
        handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=2_000_000, backupCount=3, encoding="utf-8"
        )
    except OSError as exc:
        log.warning("cannot write the log file (%s); logging to stderr only", exc)
        return None
    handler.setFormatter(formatter)
    root.addHandler(handler)
    return path


class MeshNetApp(QObject):
    """Wires the store, controller, pause monitor, tray and windows together."""

    def __init__(
        self,
        qapp: QApplication,
        *,
        store: SettingsStore | None = None,
        controller: NodeController | None = None,
        probes: Any | None = None,
        usage: Any | None = None,
        tray_available: bool | None = None,
        probe_period_ms: int | None = None,
        state: QSettings | None = None,
    ) -> None:
        super().__init__()
        self.qapp = qapp
        # the Contribute wish outlives the app, so a login start carries on contributing
        self.state = state if state is not None else default_qsettings()
        qapp.setQuitOnLastWindowClosed(False)
        self.store = store or SettingsStore(parent=self)
        if usage is None:
            from app.usage_history import UsageHistory, default_history_path

            usage = UsageHistory(default_history_path())
        self.usage = usage
        self.controller = controller or NodeController(self.store, usage=usage, parent=self)
        self.actions = AppActions(self.controller, self)
        if tray_available is None:
            tray_available = QSystemTrayIcon.isSystemTrayAvailable()
        self.has_tray = tray_available
        self.status_window = StatusWindow(
            self.controller,
            self.actions,
            usage=usage,
            main_window=not tray_available,
            versions=versions(),
            network_name=_joined_name,
            read_use=MachineUseReader().read,
        )
        self.tray = Tray(self.controller, self.actions, self) if tray_available else None
        if probes is None:
            from app.pause_rules import system_probes

            probes = system_probes()
        self.monitor = PauseMonitor(
            self.controller,
            self.store,
            probes,
            period_ms=probe_period_ms or DEFAULT_PERIOD_MS,
            parent=self,
        )
        self.batch_jobs = BatchJobsSupervisor(parent=self)
        self.credit_linker = CreditLinker(self.store, self.controller, parent=self)
        self.network_watch = JoinedNetworkWatch(parent=self)
        self._windows: dict[str, QWidget] = {}
        self._quitting = False
        self._leaving: str | None = None  # the network being left while the node stops
        self._wire()

    def _wire(self) -> None:
        actions, controller = self.actions, self.controller
        actions.contribute_requested.connect(self.set_contributing)
        actions.pause_hour.triggered.connect(lambda: self.monitor.pause_for())
        actions.pause_until_resume.triggered.connect(lambda: self.monitor.pause_until_resumed())
        actions.pause_until_restart.triggered.connect(self.pause_until_restart)
        actions.resume.triggered.connect(self.resume_now)
        actions.join_another.triggered.connect(self.join_another)
        actions.leave.triggered.connect(self.leave_network)
        actions.doctor.triggered.connect(self.open_doctor)
        actions.status.triggered.connect(self.raise_window)
        actions.recipes.triggered.connect(self.open_recipes)
        actions.settings.triggered.connect(self.open_settings)
        actions.quit.triggered.connect(self.request_quit)
        self.monitor.manual_pause_changed.connect(actions.set_manual_pause)
        self.monitor.decision_changed.connect(self.status_window.set_pause_rules_sentence)
        self.status_window.quit_requested.connect(self.request_quit)
        self.network_watch.changed.connect(self._network_changed)
        self.credit_linker.sentence_changed.connect(self.status_window.set_credit_link_sentence)
        if self.tray is not None:
            self.status_window.credit_card.summary_changed.connect(self.tray.set_credit)
        controller.crashed.connect(self._crashed)
        controller.running_changed.connect(self._running_changed)
        controller.running_changed.connect(self.batch_jobs.set_serving)
        self.store.changed.connect(self.batch_jobs.set_settings)
        self.batch_jobs.set_settings(self.store.load())
        self.qapp.aboutToQuit.connect(self.shutdown)

    def show_initial(self, *, hidden: bool = False, join_link: str | None = None) -> None:
        """Show the tray (and the status window unless started hidden, e.g. at login);
        with ``join_link``, the wizard's join page with it."""
        if self.tray is not None:
            self.tray.show()
        if not hidden or self.tray is None:
            self.status_window.show()
        self.monitor.start()
        if join_link:
            QTimer.singleShot(0, lambda: self.open_join(join_link))
        elif not hidden and self.store.never_saved():
            # A first launch: join a network (a branded installer's is filled in), then
            # the doctor finds the hardware and proves it.
            link = self.first_run_link()
            QTimer.singleShot(0, (lambda: self.open_join(link)) if link else self.open_doctor)
        if self.contribute_wish() and self.paused_until_restart():
            log.info("paused until the computer restarts; not starting the node")
        elif self.contribute_wish():
            log.info("Contribute was on when MeshNet last ran; starting the node")
            self.set_contributing(True)

    def contribute_wish(self) -> bool:
        return str(self.state.value(CONTRIBUTE_KEY, "false")).lower() == "true"

    def _remember_wish(self, on: bool) -> None:
        self.state.setValue(CONTRIBUTE_KEY, "true" if on else "false")
        self.state.sync()

    # --- actions ---------------------------------------------------------
    @guarded
    def set_contributing(self, on: bool) -> None:
        if not self._quitting:
            self._remember_wish(on)
        if not on:
            self.controller.stop()
            return
        problems = validate_settings(self.store.load())
        if problems:
            self.actions.refresh()
            sentence = " ".join(problems.values())
            QMessageBox.information(
                self._parent_window(),
                APP_NAME,
                text("settings.need-change", sentence=sentence),
            )
            self._remember_wish(False)
            self.open_settings()
            return
        if not self._has_network():
            # Nowhere to contribute to yet: say so and open the page that fixes it.
            self._remember_wish(False)
            self.actions.refresh()
            QMessageBox.information(self._parent_window(), APP_NAME, no_network_sentence())
            self.open_doctor()
            return
        self.controller.start()

    def _has_network(self) -> bool:
        return tracker_url_for(self.store.load().tracker_url) is not None

    # --- pausing and leaving ---------------------------------------------
    def paused_until_restart(self) -> bool:
        """True while the computer has not restarted since "until the computer restarts"."""
        asked = self.state.value(PAUSED_BOOT_KEY, None)
        try:
            return asked is not None and abs(float(str(asked)) - psutil.boot_time()) < 1.0
        except ValueError:
            return False

    @guarded
    def pause_until_restart(self) -> None:
        self.state.setValue(PAUSED_BOOT_KEY, str(psutil.boot_time()))
        self.state.sync()
        self.monitor.pause_until_resumed(until_restart=True)

    @guarded
    def resume_now(self) -> None:
        self.state.remove(PAUSED_BOOT_KEY)
        self.state.sync()
        self.monitor.resume_now()

    @guarded
    def join_another(self) -> None:
        """The wizard's join page, ready for a new invite (joining replaces the network)."""
        self.open_doctor()
        wizard = self._windows["doctor"]
        show_entry = getattr(getattr(wizard, "join_page", None), "_show_entry", None)
        if show_entry is not None:
            show_entry()

    @guarded
    def leave_network(self) -> None:
        """Stop (the node deregisters as it stops), then forget the network and its invite."""
        from app.network_join import joined_network

        joined = joined_network()
        parent = self._parent_window()
        if joined is None:
            QMessageBox.information(parent, APP_NAME, text("leave.none"))
            return
        name = network_name(joined) or ""
        answer = QMessageBox.question(parent, APP_NAME, text("leave.confirm", name=name))
        if answer != QMessageBox.StandardButton.Yes:
            return
        self._leaving = name
        self._remember_wish(False)
        if self.controller.running:
            self.controller.stop()  # _running_changed finishes the leave
        else:
            self._finish_leave()

    def _finish_leave(self) -> None:
        from core.network.joined_network import network_file

        name, self._leaving = self._leaving, None
        network_file(APP_PROFILE).unlink(missing_ok=True)  # its join credential with it
        log.info("left the network %s", name)
        self.network_watch.reread()
        QMessageBox.information(self._parent_window(), APP_NAME, text("leave.done", name=name))

    @guarded
    def _network_changed(self, joined: Any) -> None:
        """Joined or left: every screen that names the network says so now."""
        self.status_window.set_network_name(network_name(joined))
        settings = self._windows.get("settings")
        show_network = getattr(settings, "show_network", None)
        if show_network is not None:
            show_network(joined)

    @guarded
    def raise_window(self) -> None:
        window = self.status_window
        window.showNormal()
        window.raise_()
        window.activateWindow()

    def _window(self, key: str) -> QWidget:
        window = self._windows.get(key)
        if window is None:
            window = self._make_window(key)
            window.setWindowIcon(app_icon())
            self._windows[key] = window
        return window

    def _make_window(self, key: str) -> QWidget:
        if key == "doctor":
            from app.ui.screens.doctor.wizard import DoctorWizard

            return DoctorWizard(self.store, self.controller)
        if key == "recipes":
            from app.ui.screens.recipes_view import RecipesView

            return RecipesView(self.store, self.controller)
        if key == "network":
            from app.ui.screens.network_view import NetworkView

            view = NetworkView(self.store)
            view.details_requested.connect(lambda: self._show("recipes"))
            return view
        from app.ui.screens.settings.settings_dialog import SettingsDialog

        return SettingsDialog(self.store)

    def _show(self, key: str) -> None:
        window = self._window(key)
        window.show()
        window.raise_()
        window.activateWindow()

    @guarded
    def open_doctor(self) -> None:
        existing = self._windows.get("doctor")
        if existing is not None and not existing.isVisible():
            existing.deleteLater()  # a fresh wizard each time it is opened again
            del self._windows["doctor"]
        self._show("doctor")

    @guarded
    def open_join(self, link: str) -> None:
        """Show the wizard's join page with ``link`` (opened, --join, network.json)."""
        from app.ui.screens.doctor.wizard import DoctorWizard

        existing = self._windows.get("doctor")
        if existing is None or not existing.isVisible():
            self.open_doctor()
        wizard = self._windows["doctor"]
        assert isinstance(wizard, DoctorWizard)
        wizard.open_link(link)
        wizard.raise_()
        wizard.activateWindow()

    def first_run_link(self) -> str | None:
        """The network a branded installer carries, until this computer joined one."""
        from app.network_join import bundled_network_link, joined_network

        if joined_network() is not None:
            return None
        return bundled_network_link()

    @guarded
    def open_recipes(self) -> None:
        """ "What this network serves"; its Details button opens the recipes."""
        self._show("network")

    @guarded
    def open_settings(self) -> None:
        self._show("settings")

    @guarded
    def _crashed(self, _sentence: str) -> None:
        if self.tray is None:
            self.raise_window()  # without a tray the window is the only place to say it

    # --- quitting --------------------------------------------------------
    @guarded
    def request_quit(self) -> None:
        """Quit after the node has left the network (or been killed after QUIT_TIMEOUT_S).

        Asking again while quitting changes nothing: closing the main window, the
        Quit action and a signal all end here, and none may start a second round.
        """
        if self._quitting:
            return
        self._quitting = True
        self.monitor.stop()
        self.batch_jobs.stop()
        if self.controller.running:
            log.info("quitting: stopping the node first")
            self.controller.stop(QUIT_TIMEOUT_S)
        else:
            QTimer.singleShot(0, self._finish_quit)

    @guarded
    def _running_changed(self, running: bool) -> None:
        if running and not self.contribute_wish():
            self._remember_wish(True)  # started elsewhere too (the wizard's Finish)
        if not running and self._leaving is not None:
            self._finish_leave()
        if not running and self._quitting:
            QTimer.singleShot(0, self._finish_quit)

    def _finish_quit(self) -> None:
        # Qt 6's quit() first asks every window to close and gives up when one
        # declines: the status window, which declined to ask for this quit, now closes.
        # (Not exit(): outside exec() it would end every later event loop of the process.)
        self.status_window.allow_close()
        self.qapp.quit()

    @guarded
    def shutdown(self) -> None:
        """Last moments: the node must not outlive the app."""
        self.monitor.stop()
        self.batch_jobs.stop()
        if self.controller.running:
            self.controller.stop()
            if not self.controller.wait_for_exit(int(self.controller.stop_timeout_s * 1000)):
                self.controller.kill()
                self.controller.wait_for_exit(3000)
        self.controller.save_usage()
        if self.tray is not None:
            self.tray.hide()

    def _parent_window(self) -> QWidget | None:
        return self.status_window if self.status_window.isVisible() else None


def _joined_name() -> str | None:
    from app.network_join import joined_network

    joined = joined_network()
    return (joined.name or joined.tracker_url) if joined else None


def log_startup_time() -> None:
    launched = psutil.Process().create_time()
    log.info("window shown %.3f s after launch (at %.3f)", time.time() - launched, time.time())


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="meshnet-app", description="MeshNet: lend this computer to the network."
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument(
        "--screenshot", metavar="DIR", help="render every screen to PNG files in DIR and exit"
    )
    parser.add_argument(
        "--dark",
        action="store_true",
        help="with --screenshot: render in a dark palette, as a dark desktop shows the app",
    )
    parser.add_argument(
        "--hidden", action="store_true", help="start in the tray without opening a window"
    )
    parser.add_argument(
        "--language",
        choices=("en", "de", "es"),
        help="show the app in this language (en, de, es); default: the system's",
    )
    parser.add_argument(
        "--join",
        metavar="LINK",
        help="open the join page with this invite link (meshnet://join?...); what a "
        "meshnet:// link opens",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.version:
        print(f"meshnet-app {app_version()}")
        return 0
    if args.screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
        from app.ui.screenshots import dark_palette, render_all

        qapp = QApplication.instance() or QApplication(["meshnet-app"])
        if args.dark:
            qapp.setPalette(dark_palette())  # type: ignore[attr-defined]
        install_language(qapp, args.language)
        return render_all(Path(args.screenshot), qapp)  # type: ignore[arg-type]
    log_file = setup_logging()
    set_log_file(log_file)
    qapp = QApplication.instance() or QApplication(["meshnet-app"])
    assert isinstance(qapp, QApplication)
    install_language(qapp, args.language)
    qapp.setApplicationName(APP_NAME)
    qapp.setOrganizationName(APP_NAME)
    qapp.setWindowIcon(app_icon())
    install_excepthook()
    problem = run_location_problem()
    if problem is not None:  # nowhere to keep the node's files, or no node beside the app
        log.error("MeshNet cannot run from here (%s): %s", problem.reason, problem.sentence)
        QMessageBox.critical(None, APP_NAME, problem.sentence)
        return 1
    instance = SingleInstance()
    if not instance.claim(args.join):
        return 0
    try:
        app = MeshNetApp(qapp)
    except Exception as exc:  # the app could not even be built: say so, don't trace back
        log.exception("MeshNet could not start")
        QMessageBox.critical(None, APP_NAME, user_sentence(exc) or apology())
        return 1
    instance.raise_requested.connect(app.raise_window)
    instance.join_requested.connect(app.open_join)
    links = LinkOpenFilter(app)
    links.link_opened.connect(app.open_join)
    qapp.installEventFilter(links)
    signals = QuitOnSignal(app.request_quit)  # SIGTERM leaves the network, then quits
    app.show_initial(hidden=args.hidden, join_link=args.join)
    log.info("MeshNet %s started (tray: %s)", app_version(), app.has_tray)
    # The first turn of the event loop paints the window: log how long launch took
    # (benchmarks/app_startup.py reads this line).
    QTimer.singleShot(0, log_startup_time)
    code = int(qapp.exec())
    signals.uninstall()
    instance.release()
    return code


if __name__ == "__main__":
    raise SystemExit(main())
