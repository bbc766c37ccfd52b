"""The doctor wizard's first page: join a network with an invite.

Paste a link (or open one: ``meshnet-app --join LINK``, a ``meshnet://`` link, a
branded installer's network.json fill it in), see what the network is and who runs
it, then Join. The look-up and the join block on the network, so both run through
app/ui/tasks.py; a refusal shows its plain sentence here and saves nothing. Words on
this page stay plain (issue 22): the network, the organiser, the invite.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
    QWizardPage,
)

from app.network_join import (
    Preview,
    join_and_save,
    joined_network,
    preview_link,
    preview_parts,
    refusal_sentence,
)
from app.texts import plain, text
from app.ui.errors import apology, user_sentence
from app.ui.tasks import BackgroundTask, run_in_background
from app.ui.widgets.labels import wrapping_label
from core.errors import InviteError
from core.network.invites import parse_invite_link
from core.network.joined_network import JoinedNetwork

log = logging.getLogger(__name__)

PreviewLink = Callable[[str], Preview]
PreviewParts = Callable[[str, str], Preview]
Join = Callable[[str], JoinedNetwork]
JoinedNow = Callable[[], JoinedNetwork | None]


def plain_sentence(exc: BaseException) -> str:
    """What the page says about a failed look-up or join: ours, the error's, or the apology."""
    return refusal_sentence(exc) or user_sentence(exc) or apology()


class JoinPage(QWizardPage):
    """Paste → see the network → Join. Complete once this computer belongs to a network."""

    network_joined = Signal()  # Join succeeded: the wizard goes on by itself

    def __init__(
        self,
        *,
        preview: PreviewLink = preview_link,
        preview_by_address: PreviewParts = preview_parts,
        join: Join = join_and_save,
        joined_now: JoinedNow = joined_network,
    ) -> None:
        super().__init__()
        self._preview_fn = preview
        self._preview_parts_fn = preview_by_address
        self._join_fn = join
        self._joined_now = joined_now
        self.joined: JoinedNetwork | None = None
        self.own_tracker_url = ""  # set by the wizard from the settings (Advanced)
        self.preview: Preview | None = None
        self.sample = False
        self._task: BackgroundTask | None = None
        self._pending_link: str | None = None
        self.setTitle(text("join.title"))
        self.setSubTitle(text("join.subtitle"))
        layout = QVBoxLayout(self)
        layout.setSpacing(10)

        # Already joined: say which, and offer another.
        self.current = wrapping_label()
        self.current.setObjectName("joinedNetwork")
        self.current.setTextFormat(Qt.TextFormat.RichText)
        self.another = QPushButton(text("join.another"))
        self.another.setAccessibleName(text("join.another"))
        self.another.clicked.connect(self._show_entry)
        current_row = QHBoxLayout()
        current_row.addWidget(self.current, 1)
        current_row.addWidget(self.another, 0, Qt.AlignmentFlag.AlignTop)
        self.current_box = QWidget()
        self.current_box.setLayout(current_row)
        current_row.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.current_box)

        # Paste a link.
        self.entry = QWidget()
        entry = QVBoxLayout(self.entry)
        entry.setContentsMargins(0, 0, 0, 0)
        self.link_label = QLabel(text("join.link"))
        self.link_edit = QLineEdit()
        self.link_edit.setPlaceholderText("meshnet://join?…")
        self.link_edit.setAccessibleName(text("join.link.name"))
        self.link_edit.setClearButtonEnabled(True)
        self.link_label.setBuddy(self.link_edit)
        self.link_edit.textChanged.connect(self._link_changed)
        self.link_edit.returnPressed.connect(self.look_up)
        self.look_button = QPushButton(text("join.show"))
        self.look_button.setAccessibleName(text("join.show.name"))
        self.look_button.clicked.connect(self.look_up)
        link_row = QHBoxLayout()
        link_row.addWidget(self.link_edit, 1)
        link_row.addWidget(self.look_button)
        entry.addWidget(self.link_label)
        entry.addLayout(link_row)

        # Advanced: an address and a code, for people who run their own network.
        self.advanced = QCheckBox(text("join.advanced"))
        self.advanced.setAccessibleName(text("join.advanced.name"))
        self.advanced.toggled.connect(self._advanced_toggled)
        entry.addWidget(self.advanced)
        self.advanced_box = QWidget()
        form = QFormLayout(self.advanced_box)
        form.setContentsMargins(20, 0, 0, 0)
        self.address_edit = QLineEdit()
        self.address_edit.setPlaceholderText("https://tracker.example.org")
        self.address_edit.setAccessibleName(plain("join.address").rstrip(":"))
        self.code_edit = QLineEdit()
        self.code_edit.setAccessibleName(plain("join.code").rstrip(":"))
        self.code_edit.returnPressed.connect(self.look_up)
        address_label, code_label = QLabel(text("join.address")), QLabel(text("join.code"))
        address_label.setBuddy(self.address_edit)
        code_label.setBuddy(self.code_edit)
        form.addRow(address_label, self.address_edit)
        form.addRow(code_label, self.code_edit)
        self.advanced_box.setVisible(False)
        entry.addWidget(self.advanced_box)
        layout.addWidget(self.entry)

        # What the network says about itself, before the user agrees.
        self.network_box = QFrame()
        self.network_box.setFrameShape(QFrame.Shape.StyledPanel)
        box = QVBoxLayout(self.network_box)
        box.setSpacing(6)
        self.network_name = wrapping_label()
        font = self.network_name.font()
        font.setPointSizeF(font.pointSizeF() * 1.2)
        font.setBold(True)
        self.network_name.setFont(font)
        self.operator = wrapping_label()
        self.description = wrapping_label()
        self.serves = wrapping_label()
        for label in (self.network_name, self.operator, self.description, self.serves):
            label.setTextFormat(Qt.TextFormat.RichText)  # the texts are escaped
            box.addWidget(label)
        join_row = QHBoxLayout()
        join_row.addStretch(1)
        self.join_button = QPushButton(text("join.join"))
        self.join_button.setAccessibleName(text("join.join"))
        self.join_button.clicked.connect(self.join)
        join_row.addWidget(self.join_button)
        box.addLayout(join_row)
        self.network_box.setVisible(False)
        layout.addWidget(self.network_box)

        self.message = wrapping_label()
        self.message.setObjectName("joinMessage")
        layout.addWidget(self.message)
        layout.addStretch(1)

    # -- what the wizard asks ----------------------------------------------------------

    def isComplete(self) -> bool:
        return (self.joined is not None or bool(self.own_tracker_url)) and self._task is None

    def set_link(self, link: str) -> None:
        """Fill in a link (opened, given with --join, or from the installer); look it up."""
        self._pending_link = link.strip()
        if self.wizard() is not None and self.wizard().currentPage() is self:
            self._apply_pending()

    def initializePage(self) -> None:
        if self.sample:
            return
        self.joined = self._joined_now()
        self._show_joined()
        self._apply_pending()
        self.completeChanged.emit()

    def _apply_pending(self) -> None:
        link, self._pending_link = self._pending_link, None
        if link:
            self._show_entry()
            self.advanced.setChecked(False)
            self.link_edit.setText(link)  # _link_changed looks a whole link up by itself
            self.link_edit.setCursorPosition(0)  # show where the link leads, not its end

    # -- drawing ---------------------------------------------------------------------

    def _show_joined(self) -> None:
        joined = self.joined
        own = self.own_tracker_url if joined is None else ""
        self.current_box.setVisible(joined is not None or bool(own))
        self.entry.setVisible(joined is None and not own)
        self.another.setText(text("join.one" if own else "join.another"))
        self.another.setAccessibleName(self.another.text())
        if own:
            self.current.setText(text("join.own", url=_escape(own)))
            return
        if joined is None:
            return
        self.current.setText(text("join.part-of", network=_network_words(joined)))

    def _show_entry(self) -> None:
        self.entry.setVisible(True)
        self.another.setVisible(False)
        self.link_edit.setFocus()

    def _advanced_toggled(self, on: bool) -> None:
        self.advanced_box.setVisible(on)
        self.link_label.setEnabled(not on)
        self.link_edit.setEnabled(not on)

    def show_preview(self, preview: Preview) -> None:
        self.preview = preview
        info = preview.info
        self.network_name.setText(_escape(info.name or preview.tracker_url))
        self.operator.setText(
            text("join.run-by", operator=_escape(info.operator))
            if info.operator
            else text("join.no-operator")
        )
        self.description.setText(_escape(info.description))
        self.description.setVisible(bool(info.description))
        models = ", ".join(_short_model(m) for m in info.models if m)
        self.serves.setText(text("join.serves", models=_escape(models)) if models else "")
        self.serves.setVisible(bool(models))
        self.network_box.setVisible(True)
        self.join_button.setEnabled(True)
        self.join_button.setFocus()
        self.message.setText(f"{text('join.explain')} {text('credit.explain')}")

    def _say(self, sentence: str) -> None:
        self.message.setText(sentence)

    # -- look up and join, in the background --------------------------------------------

    def _link_changed(self, typed: str) -> None:
        self.network_box.setVisible(False)
        self.preview = None
        self.message.setText("")
        try:
            parse_invite_link(typed)
        except InviteError:
            return  # still typing; the button says what is wrong
        self.look_up()

    def look_up(self) -> None:
        if self._task is not None:
            self._task.discard()
        self.network_box.setVisible(False)
        self.preview = None
        if self.advanced.isChecked():
            address, code = self.address_edit.text(), self.code_edit.text()
            if not address.strip() or not code.strip():
                self._say(text("join.type-both"))
                return

            def fetch() -> Preview:
                return self._preview_parts_fn(address, code)
        else:
            link = self.link_edit.text().strip()
            if not link:
                self._say(text("join.paste"))
                return

            def fetch() -> Preview:
                return self._preview_fn(link)

        self._say(text("join.looking"))
        self._start(fetch, self._looked_up)

    def _looked_up(self, preview: Any) -> None:
        self.show_preview(preview)

    def join(self) -> None:
        preview = self.preview
        if preview is None or self._task is not None:
            return
        self.join_button.setEnabled(False)
        self._say(text("join.joining", network=preview.info.name or text("join.the-network")))
        self._start(lambda: self._join_fn(preview.link), self._joined)

    def _joined(self, joined: Any) -> None:
        self.joined = joined
        self.network_box.setVisible(False)
        self.entry.setVisible(False)
        self.current_box.setVisible(True)
        self.another.setVisible(True)
        self.current.setText(text("join.joined", network=_network_words(joined)))
        self._say("")
        self.network_joined.emit()

    def _start(self, fn: Callable[[], Any], done: Callable[[Any], None]) -> None:
        def succeeded(value: Any) -> None:
            self._task = None
            done(value)
            self.completeChanged.emit()

        def failed(exc: BaseException) -> None:
            self._task = None
            if self.preview is not None:
                self.join_button.setEnabled(True)
            self._say(plain_sentence(exc))
            self.completeChanged.emit()

        self._task = run_in_background(fn, on_success=succeeded, on_failure=failed, parent=self)
        self.completeChanged.emit()

    def cancel(self) -> None:
        if self._task is not None:
            self._task.discard()
            self._task = None


def _network_words(joined: JoinedNetwork) -> str:
    """ "<b>Name</b> (run by Operator)", escaped; the brackets keep "e.V." from doubling
    the sentence's full stop."""
    name = f"<b>{_escape(joined.name or joined.tracker_url)}</b>"
    if not joined.operator:
        return name
    return text("join.network-by", name=name, operator=_escape(joined.operator))


def _short_model(artifact_id: str) -> str:
    """A model's name as people say it: the last part of its id."""
    return artifact_id.rstrip("/").rpartition("/")[2] or artifact_id


def _escape(raw: str) -> str:
    return raw.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
