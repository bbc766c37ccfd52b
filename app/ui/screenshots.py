"""``meshnet-app --screenshot DIR``: every screen rendered to PNG with realistic data,
and ``DIR/texts.json``: each screen's name, whether it is on the main path (or a
Details view), and every string it shows.

No tracker and no node: the status window is driven by sample protocol events
(the same path real events take, ``NodeController.handle_event``), the other
screens by their ``show_sample(name)`` hooks. Settings live in a throwaway ini
file so a screenshot run never reads or writes the user's settings. The
README shows the results; reviewers look at them to judge wording and spacing.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSettings, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPalette, QPixmap
from PySide6.QtWidgets import QApplication, QWidget

from app.credit_summary import CreditSummary
from app.machine_use import MachineUse
from app.pause_rules import contributing_sentence
from app.texts import text
from app.ui.actions import AppActions
from app.ui.controller import NodeController
from app.ui.screens.status.window import StatusWindow
from app.ui.screens.tray import Tray
from app.ui.settings_store import SettingsStore
from app.ui.visible_texts import clipped_texts, visible_texts
from app.ui.widgets.icons import TRAY_STATES, tray_icon

log = logging.getLogger(__name__)
SAMPLE_DATA_FOLDER = "/home/sam/.local/share/meshnet"

NODE_ID = "node-7f3a9c21e4b8"
MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
TRACKER = "https://tracker.meshnet.example"


def _event(kind: str, message: str = "", at: float = 0.0, **fields: Any) -> dict[str, Any]:
    return {
        "kind": kind,
        "message": message,
        "state": fields.get("state"),
        "gate": fields.get("gate"),
        "gate_state": fields.get("gate_state"),
        "reason": fields.get("reason"),
        "data": fields.get("data", {}),
        "at": at or time.time(),
    }


def pull_events(repo: str) -> list[dict[str, Any]]:
    """``models pull --json`` 40 % through a model's one weights file."""
    return [
        _event(
            "progress",
            f"Looking up {repo} at main…",
            data={"stage": "fetch", "done": 0, "total": 0},
        ),
        _event(
            "progress",
            "Fetching model.safetensors (988.1 MB)…",
            data={
                "stage": "fetch",
                "done": 395_240_000,
                "total": 988_097_824,
                "item": "model.safetensors",
            },
        ),
    ]


def pull_refused_events(repo: str) -> list[dict[str, Any]]:
    """``models pull --json`` of a name with a typo: the Hub has no such model."""
    message = (
        f"{repo} is not a model repository on https://huggingface.co: check the name "
        "(ORG/NAME, as in its address); if it is private or gated, log in with "
        "`hf auth login` first"
    )
    return [
        _event(
            "progress",
            f"Looking up {repo} at main…",
            data={"stage": "fetch", "done": 0, "total": 0},
        ),
        _event("error", message, reason="repo-not-found"),
    ]


def sample_report(now: float) -> dict[str, Any]:
    return {
        "status": "passed",
        "passed": True,
        "diagnostics": [],
        "tokens_per_second": 41.7,
        "shard": {"start": 0, "end": 15},
        "model": {"model_id": MODEL, "revision": "main", "content_digest": "sha256:9c1e…"},
        "recipe": {"recipe_id": "llama-fp32", "recipe_version": "1"},
        "backend": {"backend_id": "meshnet-torch", "device": "cuda:0"},
        "memory": {"free_bytes": 6_400_000_000},
        "validated_at": now - 4 * 60 - 12,
    }


def serving_events(now: float) -> list[dict[str, Any]]:
    """A node that passed every gate and has served for a while."""
    registration = {
        "node_id": NODE_ID,
        "tracker_url": TRACKER,
        "endpoint": "ws://203.0.113.24:47211",
        "model_id": MODEL,
        "shard": [0, 15],
        "recipe_id": "llama-fp32",
        "recipe_version": "1",
        "model_artifact_digest": "sha256:9c1e5a0b7d",
        "runtime_recipe_digest": "sha256:41f0c2aa19",
    }
    t = now - 3 * 3600 - 14 * 60
    return [
        _event("state", "Loading layers 0–15…", t, state="loading"),
        _event(
            "gate",
            "node " + NODE_ID,  # what core/node/lifecycle.py says
            t + 1,
            gate="identity",
            gate_state="passed",
        ),
        _event(
            "gate",
            "This computer computed layers 0–15 correctly at 41.7 tokens/s.",
            t + 30,
            gate="capability",
            gate_state="passed",
            data={"report": sample_report(now)},
        ),
        _event(
            "gate",
            "Admitted: the report matches the loaded shard.",
            t + 31,
            gate="admission",
            gate_state="passed",
        ),
        _event(
            "gate",
            "listening on ws://203.0.113.24:47211",
            t + 32,
            gate="data-plane",
            gate_state="passed",
        ),
        _event(
            "gate",
            "Registered with the tracker.",
            t + 33,
            gate="registration",
            gate_state="passed",
            data=registration,
        ),
        _event(
            "gate",
            "Other nodes can reach this computer.",
            t + 40,
            gate="reachability",
            gate_state="passed",
            data={"reachability": "reachable"},
        ),
        _event(
            "gate",
            "Recipe llama-fp32 is certified: users are served through it.",
            t + 41,
            gate="recipe",
            gate_state="passed",
            data={"status": "certified", "detail": "certified across 3 nodes"},
        ),
        _event("state", "Serving layers 0–15", t + 42, state="serving"),
        _event(
            "gate",
            "2 open sessions, 12,480 tokens served.",
            now - 5,
            gate="sessions",
            gate_state="info",
            data={"open_sessions": 2, "tokens_served": 12480},
        ),
        _event(
            "stats",
            "",
            now - 5,
            data={"open_sessions": 2, "tokens_served": 12480, "uptime_s": now - t - 42},
        ),
    ]


RELAY = "wss://tracker.meshnet.example/relay"
RELAY_WHY = (
    "the tracker could not dial this node directly (no answer from 203.0.113.24:47211 "
    "within 3 s: a home router or firewall drops inbound connections)"
)


def relayed_events(now: float) -> list[dict[str, Any]]:
    """A node behind a home router: the tracker could not dial it, so it serves through
    a relay (core/node_relay.py's reachability gate, as a real node says it)."""
    events = serving_events(now)
    for index, event in enumerate(events):
        if event["gate"] == "reachability":
            events[index] = _event(
                "gate",
                f"Serving through a relay ({RELAY}) because {RELAY_WHY}. "
                "The tracker: answered the signed challenge through its relay",
                event["at"],
                gate="reachability",
                gate_state="passed",
                data={"reachability": "reachable", "relay": RELAY, "relay_why": RELAY_WHY},
            )
    return events


def refused_events(now: float) -> list[dict[str, Any]]:
    """A node the admission gate refused: its report went stale."""
    report = dict(sample_report(now), validated_at=now - 21 * 60)
    sentence = (
        "This computer's test is 21 minutes old and the network accepts tests up to "
        "15 minutes old. Run the doctor again, then Retry."
    )
    return [
        _event("state", "Loading layers 0–15…", now - 70, state="loading"),
        _event(
            "gate",
            "node " + NODE_ID,  # what core/node/lifecycle.py says
            now - 69,
            gate="identity",
            gate_state="passed",
        ),
        _event(
            "gate",
            "Capability report from the doctor.",
            now - 60,
            gate="capability",
            gate_state="passed",
            data={"report": report},
        ),
        _event("gate", sentence, now - 59, gate="admission", gate_state="failed", reason="stale"),
        _event("state", sentence, now - 58, state="refused", reason="stale"),
    ]


SAMPLE_LOG = [
    "INFO core.node: loading layers 0–15 of HuggingFaceTB/SmolLM2-135M-Instruct on cuda:0",
    "INFO core.doctor.checkup: test forward passed: 41.7 tokens/s",
    "INFO core.network.tracker_client: registered as node-7f3a9c21e4b8",
    "INFO core.dataplane.server: session 4c1d opened (layers 0–15)",
    "INFO core.dataplane.server: session 4c1d closed after 312 tokens",
]


class SampleUsage:
    """A week of plausible evening-heavy contribution for the chart."""

    def hourly(self, now: float) -> list[tuple[float, int]]:
        current = int(now // 3600) * 3600
        hours = []
        for index in range(168):
            at = current - (167 - index) * 3600
            hour = time.localtime(at).tm_hour
            busy = 1.0 if 18 <= hour <= 23 else 0.35 if 9 <= hour <= 17 else 0.0
            wobble = ((index * 37) % 11) / 10
            if index >= 164:  # the node has served for the last few hours, whatever the time
                busy = max(busy, 0.6)
            hours.append((float(at), int(900 * busy * (0.5 + wobble))))
        return hours

    def record(self, now: float, tokens_served_total: int, run_id: str) -> int:
        return 0

    def save(self) -> None:
        return None

    def totals(self, now: float) -> tuple[int, int, int]:
        """(today, this week, all time), as app.usage_history.UsageHistory says them."""
        hours = self.hourly(now)
        midnight = time.mktime((*time.localtime(now)[:3], 0, 0, 0, 0, 0, -1))
        today = sum(tokens for at, tokens in hours if at + 3600 > midnight)
        week = sum(tokens for _at, tokens in hours)
        return today, week, week * 9 + 3_112


# a card with 12 GB, the node holding 6.2 of it, busy 40 % of the time
SAMPLE_USE = MachineUse(
    gpu_used_bytes=6_200_000_000, gpu_total_bytes=12_000_000_000, gpu_busy_percent=40.0
)
SAMPLE_CREDIT = CreditSummary(today=18.42, week=96.7, total=412.05, rank=37)
SAMPLE_CREDIT_LISTED = replace(SAMPLE_CREDIT, display_name="Ada", team="Riverside Makers")

# Screens that are not the main path (issues 22, 37): the engineer's views, marked as
# Details or Advanced; Settings' simple pages (settings-computer, -pause, -problems) are
# the main path, as the tray opens them.
DETAILS_SCREENS = ("status-details", "recipes-")
ADVANCED_SCREENS = ("settings-advanced", "settings-checked", "settings-download-")
_texts: list[dict[str, Any]] = []  # what texts.json lists, screen by screen


def _record(name: str, texts: list[str], clipped: list[str] | None = None) -> None:
    marked = (
        "Details"
        if name.startswith(DETAILS_SCREENS)
        else "Advanced"
        if name.startswith(ADVANCED_SCREENS)
        else ""
    )
    _texts.append(
        {
            "screen": name,
            "main_path": not marked,
            "marked": marked,
            "texts": texts,
            "clipped": clipped or [],
        }
    )


_made: list[QObject] = []


def _keep(obj: Any) -> Any:
    """Remember what a screenshot built, so it is torn down before returning."""
    _made.append(obj)
    return obj


def _tear_down() -> None:
    """Close and delete every window built here; a screenshot run leaves nothing live."""
    while _made:
        obj = _made.pop()
        if isinstance(obj, QWidget):
            obj.close()
        elif isinstance(obj, Tray):
            obj.hide()
        obj.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QApplication.processEvents()


def _settle(widget: QWidget) -> None:
    widget.show()
    for _ in range(5):
        QApplication.processEvents()


def _save(widget: QWidget, path: Path) -> None:
    _settle(widget)
    if not widget.grab().save(str(path)):
        raise OSError(f"could not write {path}")
    _record(path.stem, visible_texts(widget), clipped_texts(widget))


def _tray_sheet(path: Path) -> None:
    """The five tray icons with their names, as a user would see them on a light panel."""
    cell = 120
    image = QImage(cell * len(TRAY_STATES), 110, QImage.Format.Format_ARGB32)
    image.fill(QColor("#f3f3f3"))
    painter = QPainter(image)
    font = QFont(QApplication.font())
    painter.setFont(font)
    names = {
        "off": "Off",
        "starting": "Starting",
        "serving": "Serving",
        "paused": "Paused",
        "error": "Needs attention",
    }
    for index, state in enumerate(TRAY_STATES):
        x = index * cell
        painter.drawPixmap(x + (cell - 64) // 2, 8, tray_icon(state).pixmap(64, 64))
        painter.drawPixmap(x + 8, 8, tray_icon(state).pixmap(16, 16))
        painter.drawText(x, 78, cell, 24, int(Qt.AlignmentFlag.AlignCenter), names[state])
    painter.end()
    if not image.save(str(path)):
        raise OSError(f"could not write {path}")


def _menu(controller: NodeController, actions: AppActions, path: Path) -> None:
    tray = _keep(Tray(controller, actions))
    tray.set_credit(SAMPLE_CREDIT)
    menu = tray.menu
    menu.adjustSize()
    pixmap: QPixmap = menu.grab()
    if not pixmap.save(str(path)):
        raise OSError(f"could not write {path}")
    _record(path.stem, [*visible_texts(menu), *tray.icon.toolTip().splitlines()])
    tray.hide()


def _notifications(store: SettingsStore) -> None:
    from app.ui.screenshot_notifications import tray_notifications

    now = time.time()
    shown = tray_notifications(store, _keep, serving_events(now), refused_events(now + 4))
    _record("tray-notifications", shown)


# a dark desktop's palette (``--screenshot DIR --dark``): the status colours and the
# banner must stay readable on it (tests/app/ui/test_scale_and_dark.py)
DARK_COLOURS = {
    "Window": "#202124",
    "WindowText": "#e8eaed",
    "Base": "#1b1b1d",
    "AlternateBase": "#2a2b2e",
    "Text": "#e8eaed",
    "Button": "#303134",
    "ButtonText": "#e8eaed",
    "PlaceholderText": "#9aa0a6",
}


def dark_palette() -> QPalette:
    palette = QPalette()
    for role, colour in DARK_COLOURS.items():
        palette.setColor(getattr(QPalette.ColorRole, role), QColor(colour))
    return palette


def render_all(folder: Path, qapp: QApplication) -> int:
    """Write every screen to ``folder``; 0 when all of them rendered."""
    folder.mkdir(parents=True, exist_ok=True)
    scratch = tempfile.TemporaryDirectory(prefix="meshnet-shots-")
    qsettings = QSettings(str(Path(scratch.name) / "settings.ini"), QSettings.Format.IniFormat)
    store = SettingsStore(qsettings)
    store.update(tracker_url=TRACKER, layers=(0, 15), pause_programs=("eldenring.exe",))
    now = time.time()
    jobs: list[tuple[str, Callable[[Path], None]]] = []

    def status(
        name: str,
        events: list[dict[str, Any]],
        main_window: bool = False,
        credit: CreditSummary = SAMPLE_CREDIT,
    ) -> None:
        def job(path: Path) -> None:
            controller = _keep(NodeController(store))
            for event in events:
                controller.handle_event(event)
            for line in SAMPLE_LOG:
                controller.status.add_log_line(line)
            actions = _keep(AppActions(controller))
            if name not in ("status-refused", "status-off"):
                # no child runs here: show the actions as a serving node has them
                actions.contribute.setChecked(True)
                actions.pause.setEnabled(True)
            window = _keep(
                StatusWindow(
                    controller,
                    actions,
                    usage=SampleUsage() if events else None,
                    main_window=main_window,
                    versions={"MeshNet": "0.1.0"},
                    network_name=lambda: "Riverside Makers",
                    credit_fetch=lambda _tracker, _node: credit,  # asks no tracker
                    read_use=lambda _pid: SAMPLE_USE,  # measures no process
                    # a computer without a keyring, the same on every machine that renders it
                    key_place=lambda: text(
                        "details.key-file.no-keyring", folder=SAMPLE_DATA_FOLDER
                    ),
                )
            )
            if events:
                window.set_pause_rules_sentence(contributing_sentence())
                window.credit_card.set_summary(credit)  # now, not after the first fetch
                window.cost_reward.set_use(SAMPLE_USE)
            if name == "status-details":
                window.show_details()
                window.details.tabs.setCurrentIndex(1)
            _save(window, path)
            window.hide()
            if name == "status-serving":
                _menu(controller, actions, folder / "tray-menu.png")

        jobs.append((name, job))

    status("status-off", [])
    status("status-serving", serving_events(now))
    status("status-refused", refused_events(now))
    status("status-relay", relayed_events(now))
    status("status-details", serving_events(now))
    status("status-main-window", serving_events(now), main_window=True)
    status("status-credit", serving_events(now), credit=SAMPLE_CREDIT_LISTED)
    jobs.append(("tray-icons", _tray_sheet))
    # no picture: a notification is the desktop's to draw; its words go to texts.json
    jobs.append(("tray-notifications", lambda _path: _notifications(store)))
    jobs += _c2_screens(store)
    failed = []
    _texts.clear()
    for name, job in jobs:
        path = folder / f"{name}.png"
        try:
            job(path)
            log.info("wrote %s", path)
        except Exception:
            log.exception("could not render %s", name)
            failed.append(name)
    _tear_down()
    scratch.cleanup()
    (folder / "texts.json").write_text(
        json.dumps(_texts, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    if failed:
        log.error("screens not rendered: %s", ", ".join(failed))
        return 1
    return 0


def _c2_screens(store: SettingsStore) -> list[tuple[str, Callable[[Path], None]]]:
    """The wizard, recipes and settings screens through their show_sample hooks."""
    from app.ui.screens.doctor.wizard import DoctorWizard
    from app.ui.screens.network_view import NetworkView
    from app.ui.screens.recipes_view import RecipesView
    from app.ui.screens.settings.settings_dialog import SettingsDialog

    controller = _keep(NodeController(store))
    for event in serving_events(time.time()):
        controller.handle_event(event)
    jobs: list[tuple[str, Callable[[Path], None]]] = []

    def sample(factory: Callable[[], Any], name: str, prefix: str) -> None:
        def job(path: Path) -> None:
            widget = _keep(factory())
            widget.show_sample(name)
            _save(widget, path)
            widget.hide()

        jobs.append((f"{prefix}-{name}", job))

    for name in DoctorWizard.SAMPLE_NAMES:
        sample(lambda: DoctorWizard(store, controller), name, "wizard")
    for name in NetworkView.SAMPLE_NAMES:
        sample(lambda: NetworkView(store), name, "serves")
    for name in RecipesView.SAMPLE_NAMES:
        sample(lambda: RecipesView(store, controller), name, "recipes")
    for name in SettingsDialog.SAMPLE_NAMES:
        sample(lambda: SettingsDialog(store, gpu_measurable=lambda: True), name, "settings")
    jobs.append(("settings-download-progress", lambda path: _hub_download(path, failed=False)))
    jobs.append(("settings-download-failed", lambda path: _hub_download(path, failed=True)))
    return jobs


def _hub_download(path: Path, *, failed: bool) -> None:
    """Settings' Hugging Face download, driven by sample ``models pull`` events (no child)."""
    from app.ui.screens.settings.hub_download import EXAMPLE_REPO, HubDownloadDialog

    dialog = _keep(HubDownloadDialog())
    repo = "Qwen/Qwen2.5-0.5B-Instruckt" if failed else EXAMPLE_REPO
    dialog.name_edit.setText(repo)
    _settle(dialog)  # shown before the download starts, as a user opens it
    dialog.begin(repo, "main")
    for event in pull_refused_events(repo) if failed else pull_events(repo):
        dialog.on_event(event)
    if failed:
        dialog.finish(2, "")
    _save(dialog, path)
    dialog.hide()


__all__ = ["refused_events", "relayed_events", "render_all", "serving_events"]
