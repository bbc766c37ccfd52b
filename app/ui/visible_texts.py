"""Every string a screen shows, for ``--screenshot``'s texts.json and the plain-words tests."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QAbstractButton,
    QGroupBox,
    QLabel,
    QMenu,
    QTabWidget,
    QWidget,
    QWizard,
)


def _clean(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").strip()


def visible_texts(root: QWidget) -> list[str]:
    """The window title, then each visible label, button, group and tab, in widget order.

    A wizard adds its current page's title and subtitle; a menu its actions' texts.
    Line edits are left out: what they hold is the user's (a pasted link), not ours.
    """
    texts: list[str] = [root.windowTitle()] if root.isWindow() else []
    if isinstance(root, QWizard) and root.currentPage() is not None:
        texts += [root.currentPage().title(), root.currentPage().subTitle()]
    if isinstance(root, QMenu):
        texts += [action.text() for action in root.actions() if not action.isSeparator()]
    for widget in root.findChildren(QWidget):
        if not widget.isVisibleTo(root):
            continue
        if isinstance(widget, QLabel | QAbstractButton):
            texts.append(widget.text())
        elif isinstance(widget, QGroupBox):
            texts.append(widget.title())
        elif isinstance(widget, QTabWidget):
            texts += [widget.tabText(index) for index in range(widget.count())]
    return [cleaned for cleaned in (_clean(text) for text in texts) if cleaned]


def clipped_texts(root: QWidget) -> list[str]:
    """Visible labels and buttons whose words do not fit the room the layout gave them
    (a longer translation, a larger scale): their text is cut off on screen."""
    clipped = []
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
