"""The wizard's join page against a real tracker on loopback (offscreen, dict keyring).

A contributor opens an invite link (``meshnet-app --join LINK`` lands in
``MeshNetApp.show_initial(join_link=...)``), sees the network's name and organiser, and
joins with one click; refused invites and forged links say so and save nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QAbstractButton

from app.settings_model import AppSettings
from app.ui.screens.doctor.join import JoinPage
from app.ui.screens.doctor.wizard import DoctorWizard
from app.ui.settings_store import SettingsStore
from core.identity.keypair import NodeIdentity
from core.identity.keystore import DEFAULT_PROFILE
from core.network.invites import join_network
from core.network.joined_network import load_joined_network
from tests.app.ui.join_support import (
    ENGINEERING_WORDS,
    NAME,
    OPERATOR,
    make_app,
    make_invite,
    open_wizard,
)
from tests.app.ui.join_support import dict_keyring as dict_keyring  # a fixture
from tests.app.ui.join_support import network as network  # a fixture
from tests.tracker_service.server_process import TrackerProcess


def click(qtbot: Any, button: QAbstractButton, clicks: list[str]) -> None:
    assert button.isVisible() and button.isEnabled(), button.text()
    clicks.append(button.text())
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def visible_text(page: JoinPage) -> str:
    from PySide6.QtWidgets import QLabel

    parts = [page.title(), page.subTitle()]
    for widget in page.findChildren(QLabel) + page.findChildren(QAbstractButton):
        if widget.isVisibleTo(page):
            parts.append(widget.text())
    return "\n".join(parts)


def test_join_link_shows_the_organiser_then_one_click_joins_the_network(
    qtbot: Any, tmp_path: Path, network: TrackerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    link = make_invite(network, capsys)
    app = make_app(qtbot, tmp_path)
    assert load_joined_network(DEFAULT_PROFILE) is None
    app.show_initial(join_link=link)  # what `meshnet-app --join LINK` does
    wizard = open_wizard(qtbot, app)
    page = wizard.join_page
    assert wizard.currentId() == DoctorWizard.PAGE_JOIN
    assert page.link_edit.text() == link
    # Looked up by itself: the user reads who runs the network before agreeing.
    qtbot.waitUntil(lambda: page.network_box.isVisible(), timeout=20_000)
    assert page.network_name.text() == NAME
    assert OPERATOR in page.operator.text()
    assert "evenings" in page.description.text()
    assert load_joined_network(DEFAULT_PROFILE) is None  # nothing joined before Join
    main_path = visible_text(page).lower()
    assert [word for word in ENGINEERING_WORDS if word in main_path] == []

    clicks: list[str] = []
    click(qtbot, page.join_button, clicks)
    qtbot.waitUntil(page.isComplete, timeout=20_000)
    joined = load_joined_network(DEFAULT_PROFILE)
    assert joined is not None
    assert (joined.tracker_url, joined.name, joined.operator) == (network.url, NAME, OPERATOR)
    assert joined.key_fingerprint == parse_qs(urlsplit(link).query)["key"][0]
    assert f"You joined <b>{NAME}</b>" in page.current.text()
    # One click from the opened link to checking this computer: the wizard goes on by
    # itself (tests/app/ui/test_full_walk.py counts the clicks on to serving).
    qtbot.waitUntil(lambda: wizard.currentId() == DoctorWizard.PAGE_HARDWARE, timeout=5000)
    assert [text.replace("&", "") for text in clicks] == ["Join this network"]
    # The checks that follow ask the joined network (no address typed anywhere).
    assert wizard.state.tracker_url == network.url
    wizard.reject()


def _refused(qtbot: Any, page: JoinPage, link: str, *, expect_preview: bool) -> tuple[str, bool]:
    page.link_edit.setText(link)
    if expect_preview:
        qtbot.waitUntil(lambda: page.network_box.isVisible(), timeout=20_000)
        qtbot.mouseClick(page.join_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: page._task is None and "Looking" not in page.message.text()
        and "Joining" not in page.message.text() and page.message.text() != "",
        timeout=20_000,
    )  # fmt: skip
    return page.message.text(), page.isComplete()


def make_wizard(qtbot: Any, tmp_path: Path) -> DoctorWizard:
    store = SettingsStore(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat))

    class Controller:
        running = False

        def start(self, report_path: str | None = None) -> None:
            raise AssertionError("nothing starts from the join page")

    wizard = DoctorWizard(store, Controller())
    qtbot.addWidget(wizard)
    wizard.show()
    return wizard


def test_a_used_up_invite_says_so_and_saves_nothing(
    qtbot: Any, tmp_path: Path, network: TrackerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    link = make_invite(network, capsys, uses=1)
    join_network(link, NodeIdentity.generate())  # another computer took the only use
    wizard = make_wizard(qtbot, tmp_path)
    sentence, complete = _refused(qtbot, wizard.join_page, link, expect_preview=True)
    assert sentence.startswith("This invite has already been used as many times as it allows.")
    assert "Ask the person who invited you for a new one." in sentence
    assert not complete and load_joined_network(DEFAULT_PROFILE) is None
    assert wizard.store.never_saved()


def test_a_link_to_another_network_says_so_before_sending_the_code(
    qtbot: Any, tmp_path: Path, network: TrackerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    link = make_invite(network, capsys, uses=1)
    key = parse_qs(urlsplit(link).query)["key"][0]
    wizard = make_wizard(qtbot, tmp_path)
    page = wizard.join_page
    sentence, complete = _refused(qtbot, page, link.replace(key, "0" * 32), expect_preview=False)
    assert sentence.startswith("This link does not lead to the network it was made for")
    assert not page.network_box.isVisible() and not complete
    assert load_joined_network(DEFAULT_PROFILE) is None and wizard.store.never_saved()
    # The code was never sent: its only use is still there for the real link.
    joined = join_network(link, NodeIdentity.generate())
    assert joined.tracker_url == network.url


def test_a_joined_computer_sees_its_network_and_may_join_another(
    qtbot: Any, tmp_path: Path, network: TrackerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.network_join import join_and_save

    join_and_save(make_invite(network, capsys))
    wizard = make_wizard(qtbot, tmp_path)
    page = wizard.join_page
    assert page.isComplete() and f"part of <b>{NAME}</b>" in page.current.text()
    assert not page.entry.isVisible()
    qtbot.mouseClick(page.another, Qt.MouseButton.LeftButton)
    assert page.entry.isVisible() and page.isComplete()  # Next still continues as joined


def test_an_own_tracker_joins_with_its_address_and_a_code(
    qtbot: Any, tmp_path: Path, network: TrackerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    code = parse_qs(urlsplit(make_invite(network, capsys)).query)["code"][0]
    wizard = make_wizard(qtbot, tmp_path)
    page = wizard.join_page
    page.advanced.setChecked(True)
    assert page.advanced_box.isVisibleTo(page) and not page.link_edit.isEnabled()
    page.address_edit.setText(network.url)
    page.code_edit.setText(code)
    qtbot.mouseClick(page.look_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.network_box.isVisible(), timeout=20_000)
    assert OPERATOR in page.operator.text()
    qtbot.mouseClick(page.join_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(page.isComplete, timeout=20_000)
    joined = load_joined_network(DEFAULT_PROFILE)
    assert joined is not None and joined.tracker_url == network.url


def test_a_half_pasted_link_says_what_to_do(qtbot: Any, tmp_path: Path) -> None:
    wizard = make_wizard(qtbot, tmp_path)
    page = wizard.join_page
    page.link_edit.setText("meshnet://join?tracker=https://t.example.org&code=AB")
    assert page._task is None  # not a whole link: nothing is looked up while typing
    qtbot.mouseClick(page.look_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page._task is None and "Looking" not in page.message.text())
    assert page.message.text().startswith("That is not a whole invite link.")
    assert not page.isComplete()
    page.link_edit.clear()
    qtbot.mouseClick(page.look_button, Qt.MouseButton.LeftButton)
    assert page.message.text() == "Paste the invite link you were sent."


def test_contribute_without_a_network_says_to_join_one(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(qtbot, tmp_path)
    app.store.save(AppSettings())
    shown: list[str] = []
    monkeypatch.setattr("app.ui.main.QMessageBox.information", lambda *a: shown.append(a[2]))
    app.actions.contribute.trigger()
    assert not app.controller.running and not app.contribute_wish()
    assert len(shown) == 1 and shown[0].startswith("This computer has not joined a network yet.")
    wizard = open_wizard(qtbot, app)
    assert wizard.isVisible() and wizard.currentId() == DoctorWizard.PAGE_JOIN


def test_an_own_tracker_in_the_settings_needs_no_invite(qtbot: Any, tmp_path: Path) -> None:
    store = SettingsStore(QSettings(str(tmp_path / "own.ini"), QSettings.Format.IniFormat))
    store.save(AppSettings(tracker_url="http://10.0.0.5:8765"))

    class Controller:
        running = False

        def start(self, report_path: str | None = None) -> None:
            raise AssertionError("nothing starts from the join page")

    wizard = DoctorWizard(store, Controller())
    qtbot.addWidget(wizard)
    wizard.show()
    page = wizard.join_page
    assert page.isComplete() and "your own tracker at http://10.0.0.5:8765" in page.current.text()
    wizard.next()
    assert wizard.currentId() == DoctorWizard.PAGE_WELCOME
    assert wizard.state.tracker_url == "http://10.0.0.5:8765"
    assert load_joined_network(DEFAULT_PROFILE) is None


def test_what_credit_is_for_is_said_on_the_join_page_before_join(
    qtbot: Any, tmp_path: Path, network: TrackerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    from PySide6.QtWidgets import QApplication

    from app.texts import TEXTS, text
    from app.ui.i18n import install_language

    link = make_invite(network, capsys)
    qapp = QApplication.instance()
    assert isinstance(qapp, QApplication)
    try:
        for language in ("en", "de", "es"):
            assert install_language(qapp, language) == language
            sentence = text("credit.explain")
            if language != "en":  # translated, not the English sentence shown as-is
                assert sentence and sentence != TEXTS["credit.explain"], language
            wizard = make_wizard(qtbot, tmp_path / language)
            page = wizard.join_page
            page.link_edit.setText(link)
            qtbot.waitUntil(lambda p=page: p.network_box.isVisible(), timeout=20_000)
            # Shown with the network, before the user agrees: Join not pressed yet.
            assert page.join_button.isVisible() and page.join_button.isEnabled()
            assert page.message.isVisible() and sentence in page.message.text(), language
            assert load_joined_network(DEFAULT_PROFILE) is None
            wizard.reject()
    finally:
        install_language(qapp, "en")
