"""Every string a screen shows, for ``--screenshot``'s texts.json and the plain-words tests."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QGroupBox,
    QLabel,
    QListWidget,
    QMenu,
    QTabWidget,
    QWidget,
    QWizard,
)


def _clean(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").strip()


def visible_texts(root: QWidget) -> list[str]:
    """The window title, then each visible label, button, group, tab and list row, in
    widget order, and each tooltip after the widget it belongs to.

    A wizard adds its current page's title and subtitle; a menu its actions' texts and
    tooltips. Line edits are left out: what they hold is the user's (a pasted link),
    not ours; so are the rows of an editable list (the user's program names).
    """
    texts: list[str] = [root.windowTitle()] if root.isWindow() else []
    if isinstance(root, QWizard) and root.currentPage() is not None:
        texts += [root.currentPage().title(), root.currentPage().subTitle()]
    if isinstance(root, QMenu):
        for action in root.actions():
            if not action.isSeparator():
                texts.append(action.text())
                if action.toolTip() and action.toolTip() != _clean(action.text()):
                    texts.append(action.toolTip())
    for widget in root.findChildren(QWidget):
        if not widget.isVisibleTo(root):
            continue
        if isinstance(widget, QLabel | QAbstractButton):
            texts.append(widget.text())
        elif isinstance(widget, QGroupBox):
            texts.append(widget.title())
        elif isinstance(widget, QTabWidget):
            texts += [widget.tabText(index) for index in range(widget.count())]
        elif isinstance(widget, QListWidget) and not _editable(widget):
            texts += [widget.item(row).text() for row in range(widget.count())]
        if widget.toolTip():
            texts.append(widget.toolTip())
    return [cleaned for cleaned in (_clean(text) for text in texts) if cleaned]


def _editable(rows: QListWidget) -> bool:
    return any(rows.item(row).flags() & Qt.ItemFlag.ItemIsEditable for row in range(rows.count()))


def _clipped_rows(rows: QListWidget) -> list[str]:
    """A list's rows wider than its viewport (cut, or behind a sideways scrollbar)."""
    room = rows.viewport().width()
    return [
        _clean(rows.item(row).text())
        for row in range(rows.count())
        if rows.visualItemRect(rows.item(row)).width() > room + 1
        or rows.horizontalScrollBar().isVisible()
    ]


def clipped_texts(root: QWidget) -> list[str]:
    """Visible labels, buttons and list rows whose words do not fit the room the layout
    gave them (a longer translation, a larger scale): their text is cut off on screen."""
    clipped = []
    for rows in root.findChildren(QListWidget):
        if rows.isVisibleTo(root):
            clipped += _clipped_rows(rows)
    for widget in root.findChildren(QLabel) + root.findChildren(QAbstractButton):
        if not widget.isVisibleTo(root) or not widget.text() or widget.width() <= 0:
            continue
        if isinstance(widget, QLabel) and widget.wordWrap():
            too_small = widget.heightForWidth(widget.width()) > widget.height() + 1
        else:
            too_small = widget.minimumSizeHint().width() > widget.width() + 1
        if too_small:
            clipped.append(_clean(widget.text()))
    return clipped
