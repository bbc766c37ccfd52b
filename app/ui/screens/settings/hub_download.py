"""Settings › Model › Download from Hugging Face…: ``meshnet-node models pull`` as a child.

The user types a model's name (``ORG/NAME``, or the model's whole address) and,
if they like, a version; Download runs ``models pull REPO --json`` through a
:class:`~app.ui.json_child.JsonChild` and turns its progress events into a bar
and a sentence in plain words. Cancel asks the child to stop through its stdin
(what arrived is kept for the next try); closing the window while it runs
cancels too, and the window stays until the child has stopped. On success the
dialog emits ``downloaded(folder)`` and closes; on failure it says what to do in
one sentence (the node's own sentence on hover) and stays usable.

The logic lives in plain methods (``begin``, ``on_event``, ``finish``) so a test,
or the screenshot mode, can drive it with sample events and no child.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.node_command import hub_pull_argv
from app.texts import number, plain, text
from app.ui.json_child import JsonChild, last_error_sentence, progress_fraction
from app.ui.widgets.labels import wrapping_label
from app.ui.widgets.settings_fields import error_style

log = logging.getLogger(__name__)

EXAMPLE_REPO = "Qwen/Qwen2.5-0.5B-Instruct"
# The Hub's rules for a name: letters, digits, ".", "_", "-", starting and ending with a
# letter or digit, no "--" or "..", 96 characters in all (huggingface_hub's validate_repo_id).
_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_REPO_ID = re.compile(rf"{_PART}/{_PART}")
_ADDRESS = re.compile(r"^(?:https?://)?(?:www\.)?huggingface\.co/", re.IGNORECASE)
# the node's refusals (reason codes) that have a sentence of the app's own
_REASON_KEYS = {
    "bad-repo-id": "hub.bad-name",
    "repo-not-found": "hub.error.repo-not-found",
    "revision-not-found": "hub.error.revision-not-found",
    "hub-unreachable": "hub.error.hub-unreachable",
    "hub-offline": "hub.error.hub-offline",
    "unsupported-architecture": "hub.error.unsupported-architecture",
}


def repo_id_from(typed: str) -> str | None:
    """``ORG/NAME`` from what the user typed (the name, or the model's address);
    None when it does not have that shape."""
    candidate = _ADDRESS.sub("", typed.strip()).strip("/")
    if len(candidate) > 96 or "--" in candidate or ".." in candidate:
        return None
    return candidate if _REPO_ID.fullmatch(candidate) else None


def progress_sentence(event: Mapping[str, Any], repo: str) -> tuple[str, int | None]:
    """A pull's progress event as a plain sentence, with its percentage (None: unknown)."""
    fraction = progress_fraction(event)
    item = str((event.get("data") or {}).get("item") or "")  # the file arriving, if named
    if fraction is None:
        if item:
            return text("hub.fetching", file=item), None
        return text("hub.looking-up", repo=repo), None
    done, total = fraction
    percent = done * 100 // total
    if item:
        return text("hub.downloading-file", file=item, percent=number(percent)), percent
    return text("hub.downloading", percent=number(percent)), percent


def pulled_folder(exit_code: int, stdout: str) -> str | None:
    """The folder a finished ``models pull --json`` printed, or None when it failed."""
    lines = stdout.strip().splitlines()
    if exit_code != 0 or not lines:
        return None
    try:
        result = json.loads(lines[-1])
    except json.JSONDecodeError:
        return None
    path = result.get("path") if isinstance(result, dict) else None
    return path if isinstance(path, str) and path else None


class HubDownloadDialog(QDialog):
    """Download one Hub model; ``downloaded(folder)`` when it is on this computer."""

    downloaded = Signal(str)
    # A cancelled pull stops at its next progress point (the node takes JsonChild's SIGINT
    # as one more stop). One stalled on the network notices only when huggingface_hub gives
    # up its read, so it is terminated after 15 s (what arrived stays for the next try),
    # and killed last of all.
    terminate_after_s = 15.0
    kill_after_s = 30.0

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(text("hub.title"))
        self.child: JsonChild | None = None
        self.folder: str | None = None  # the downloaded model's folder, once there is one
        self.repo = ""
        self.revision = "main"
        self.progress_events = 0  # in the current download
        self._log: list[str] = []
        self._error: Mapping[str, Any] = {}  # the child's last error event
        intro = wrapping_label(text("hub.intro", example=EXAMPLE_REPO))
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText(EXAMPLE_REPO)
        self.name_edit.setAccessibleName(plain("hub.name").rstrip(":"))
        self.revision_edit = QLineEdit()
        self.revision_edit.setPlaceholderText(text("hub.revision.hint"))
        self.revision_edit.setToolTip(text("hub.revision.tip"))
        self.revision_edit.setAccessibleName(plain("hub.revision").rstrip(":"))
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow(text("hub.name"), self.name_edit)
        form.addRow(text("hub.revision"), self.revision_edit)
        self.status = wrapping_label()
        self.progress = QProgressBar()
        self.progress.setFormat(text("percent", value="%p"))  # "40 %" in German
        self.progress.setTextVisible(False)  # the sentence above says the percentage
        policy = self.progress.sizePolicy()
        policy.setRetainSizeWhenHidden(True)  # the window keeps its size when it goes
        self.progress.setSizePolicy(policy)
        self.download_button = QPushButton(text("hub.download"))
        self.download_button.setDefault(True)
        self.download_button.clicked.connect(self.start)
        self.close_button = QPushButton(text("hub.close"))
        self.close_button.setAutoDefault(False)
        self.close_button.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.download_button)
        buttons.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addSpacing(6)
        layout.addLayout(form)
        layout.addSpacing(6)
        layout.addWidget(self.status)
        layout.addWidget(self.progress)
        layout.addStretch(1)
        layout.addLayout(buttons)
        self.setMinimumWidth(520)
        # room for a sentence of three lines, so the window need not grow for one
        self.resize(520, self.sizeHint().height() + 2 * self.status.fontMetrics().lineSpacing())
        self._set_busy(False)
        self._say("")

    @property
    def busy(self) -> bool:
        return self.child is not None and self.child.running

    # -- running the child ----------------------------------------------------------

    def start(self) -> bool:
        """Check the fields and start the download; False when a field was refused."""
        if self.busy:
            return False
        repo = repo_id_from(self.name_edit.text())
        if repo is None:
            self._say(text("hub.bad-name", example=EXAMPLE_REPO), error=True)
            self.name_edit.setFocus()
            return False
        revision = self.revision_edit.text().strip() or "main"
        if any(character.isspace() for character in revision):
            self._say(text("hub.bad-revision"), error=True)
            self.revision_edit.setFocus()
            return False
        self.begin(repo, revision)
        self.child = JsonChild(
            self, terminate_after_s=self.terminate_after_s, kill_after_s=self.kill_after_s
        )
        self.child.event.connect(self.on_event)
        self.child.log_line.connect(self.on_log_line)
        self.child.finished.connect(self._on_finished)
        self.child.start(hub_pull_argv(repo, revision))
        return True

    def begin(self, repo: str, revision: str) -> None:
        """Show a download of ``repo`` at ``revision`` as started (the child's events follow)."""
        self.repo, self.revision = repo, revision
        self.folder = None
        self.progress_events = 0
        self._log = []
        self._error = {}
        self._set_busy(True)
        self._say(text("hub.looking-up", repo=repo))

    def cancel(self) -> None:
        """Ask the child to stop (stdin first); it says so when it has."""
        if self.busy:
            assert self.child is not None
            self._say(text("hub.stopping"))
            self.close_button.setEnabled(False)
            self.child.cancel()

    def reject(self) -> None:
        """Close, or while downloading: cancel, and stay until the child has stopped."""
        if self.busy:
            self.cancel()
            return
        super().reject()

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("kind")
        if kind == "progress":
            self.progress_events += 1
            self.show_progress(event)
        elif kind == "error":
            self._error = event

    def on_log_line(self, line: str) -> None:
        log.debug("models pull: %s", line)
        self._log.append(line)

    def show_progress(self, event: Mapping[str, Any]) -> None:
        sentence, percent = progress_sentence(event, self.repo)
        if percent is None:
            self.progress.setRange(0, 0)  # busy: nothing to count yet
        else:  # in percent: a model's bytes overflow the bar's int range
            self.progress.setRange(0, 100)
            self.progress.setValue(percent)
        if not (self.child is not None and self.child.cancelled):
            self._say(sentence)
        self.progress.setToolTip(str(event.get("message") or ""))

    def _on_finished(self, exit_code: int, stdout: str) -> None:
        cancelled = self.child is not None and self.child.cancelled
        self.finish(exit_code, stdout, cancelled=cancelled)

    def finish(self, exit_code: int, stdout: str, *, cancelled: bool = False) -> None:
        """Judge the finished pull: close with its folder, or say what to do."""
        self._set_busy(False)
        if cancelled:
            self._say(text("hub.cancelled"))
            return
        folder = pulled_folder(exit_code, stdout)
        if folder is None:
            sentence, node_sentence = self.failure_sentences()
            self._say(sentence, error=True, tip=node_sentence)
            return
        log.info("downloaded %s at %s into %s", self.repo, self.revision, folder)
        self.folder = folder
        self.downloaded.emit(folder)
        self.accept()

    def failure_sentences(self) -> tuple[str, str]:
        """What to do, and the node's own sentence (empty when it said none)."""
        node_sentence = str(self._error.get("message") or "") or last_error_sentence(self._log, "")
        key = _REASON_KEYS.get(str(self._error.get("reason") or ""))
        if key is not None:
            values = {"repo": self.repo, "revision": self.revision, "example": EXAMPLE_REPO}
            return text(key, **values), node_sentence
        return node_sentence or text("hub.failed"), node_sentence

    # -- showing ----------------------------------------------------------------------

    def _set_busy(self, busy: bool) -> None:
        self.name_edit.setEnabled(not busy)
        self.revision_edit.setEnabled(not busy)
        self.download_button.setEnabled(not busy)
        self.close_button.setEnabled(True)
        self.close_button.setText(text("import.cancel" if busy else "hub.close"))
        self.progress.setVisible(busy)
        if busy:
            self.progress.setRange(0, 0)  # busy until the first counted bytes
            self.progress.setToolTip("")

    def _say(self, sentence: str, *, error: bool = False, tip: str = "") -> None:
        self.status.setText(sentence)
        self.status.setStyleSheet(error_style() if error else "")
        self.status.setToolTip(tip if tip != sentence else "")
