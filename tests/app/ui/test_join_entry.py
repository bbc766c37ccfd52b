"""The ways an invite link reaches the join page: --join, a link opened while the app
runs (forwarded over the single-instance socket), and a branded installer's network.json."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QWizard

import app.network_join as network_join
from app.ui.main import parse_args
from app.ui.screens.doctor.wizard import DoctorWizard
from app.ui.single_instance import SingleInstance
from installers.layout import NETWORK_FILE
from installers.network_file import place_network
from tests.app.ui.join_support import (
    NAME,
    make_app,
    make_invite,
    open_wizard,
)
from tests.app.ui.join_support import dict_keyring as dict_keyring  # a fixture
from tests.app.ui.join_support import network as network  # a fixture
from tests.tracker_service.server_process import TrackerProcess


def test_join_is_a_command_line_option() -> None:
    link = "meshnet://join?tracker=https://t.example.org&code=ABCD-1234&key=" + "a" * 32
    assert parse_args(["--join", link]).join == link
    assert parse_args([]).join is None


def test_a_link_opened_while_the_app_runs_shows_the_join_page_there(
    qtbot: Any, tmp_path: Path, network: TrackerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    name = f"meshnet-test-{uuid.uuid4().hex[:8]}"
    running = SingleInstance(name)
    assert running.claim()
    app = make_app(qtbot, tmp_path)
    running.join_requested.connect(app.open_join)
    raised: list[bool] = []
    running.raise_requested.connect(lambda: raised.append(True))
    try:
        first = make_invite(network, capsys)
        with qtbot.waitSignal(running.join_requested, timeout=5000) as signal:
            assert not SingleInstance(name).claim(join_link=first)  # the OS opened a link
        assert signal.args == [first] and raised == []
        wizard = open_wizard(qtbot, app)
        page = wizard.join_page
        assert wizard.isVisible() and page.link_edit.text() == first
        qtbot.waitUntil(lambda: page.network_box.isVisible(), timeout=20_000)
        page.join()
        qtbot.waitUntil(page.isComplete, timeout=20_000)
        wizard.next()
        # the quick path after Join: on to the hardware check (no welcome page), which
        # may already have finished on this fake machine
        assert wizard.currentId() in (DoctorWizard.PAGE_HARDWARE, DoctorWizard.PAGE_MEMORY)
        # A second link while the wizard is further along: back to the join page with it.
        second = make_invite(network, capsys)
        with qtbot.waitSignal(running.join_requested, timeout=5000):
            assert not SingleInstance(name).claim(join_link=second)
        qtbot.waitUntil(lambda: wizard.currentId() == DoctorWizard.PAGE_JOIN, timeout=5000)
        assert page.link_edit.text() == second and page.entry.isVisible()
        # A plain second launch still only raises the window.
        with qtbot.waitSignal(running.raise_requested, timeout=5000):
            assert not SingleInstance(name).claim()
        wizard.reject()
    finally:
        running.release()


def test_a_branded_installers_network_is_filled_in_on_the_first_run(
    qtbot: Any,
    tmp_path: Path,
    network: TrackerProcess,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert NETWORK_FILE == network_join.NETWORK_FILE  # the installer's name for the file
    link = make_invite(network, capsys)
    bundle, dist = tmp_path / "bundle", tmp_path / "dist"
    bundle.mkdir()
    assert place_network(bundle, dist, link) == [bundle / NETWORK_FILE]  # build.py --network
    monkeypatch.setattr(network_join, "app_folders", lambda: [tmp_path / "elsewhere", bundle])
    app = make_app(qtbot, tmp_path)
    assert app.store.never_saved()
    app.show_initial()
    wizard = open_wizard(qtbot, app)
    page = wizard.join_page
    assert wizard.currentId() == DoctorWizard.PAGE_JOIN and page.link_edit.text() == link
    qtbot.waitUntil(lambda: page.network_box.isVisible(), timeout=20_000)
    assert page.network_name.text() == NAME
    assert not wizard.button(QWizard.WizardButton.NextButton).isEnabled()  # Join comes first
    wizard.reject()


def test_a_damaged_network_file_is_ignored(tmp_path: Path) -> None:
    (tmp_path / NETWORK_FILE).write_text('{"link": "https://not.an.invite"}')
    assert network_join.bundled_network_link([tmp_path]) is None
    (tmp_path / NETWORK_FILE).write_text("not json")
    assert network_join.bundled_network_link([tmp_path]) is None
    assert network_join.bundled_network_link([tmp_path / "missing"]) is None


def test_a_link_the_system_opens_as_an_event_reaches_the_join_page(qtbot: Any) -> None:
    from PySide6.QtCore import QCoreApplication, QUrl
    from PySide6.QtGui import QFileOpenEvent

    from app.ui.link_events import LinkOpenFilter

    link = "meshnet://join?tracker=https://t.example.org&code=ABCD-1234&key=" + "a" * 32
    app = QCoreApplication.instance()
    assert app is not None
    links = LinkOpenFilter()
    app.installEventFilter(links)
    try:
        with qtbot.waitSignal(links.link_opened, timeout=2000) as signal:
            QCoreApplication.sendEvent(app, QFileOpenEvent(QUrl(link)))
        assert signal.args == [QUrl(link).toString()]
        opened: list[str] = []
        links.link_opened.connect(opened.append)
        QCoreApplication.sendEvent(app, QFileOpenEvent("/tmp/some-file.txt"))
        assert opened == []  # other files are not invites
    finally:
        app.removeEventFilter(links)


def test_every_sentence_on_the_way_in_is_plain() -> None:
    from app.network_join import REFUSAL_REASONS, no_network_sentence, refusal_text
    from tests.app.ui.join_support import ENGINEERING_WORDS

    for sentence in [*map(refusal_text, REFUSAL_REASONS), no_network_sentence()]:
        words = sentence.lower()
        assert [w for w in ENGINEERING_WORDS if w in words] == [], sentence


def test_an_address_and_code_typed_by_hand_are_checked_with_a_sentence() -> None:
    from app.network_join import link_from_parts
    from core.errors import InviteError

    assert link_from_parts(" https://t.example.org/ ", " ABCD-1234 ") == (
        "https://t.example.org",
        "ABCD-1234",
    )
    with pytest.raises(InviteError) as address:
        link_from_parts("tracker.example.org", "ABCD-1234")
    assert address.value.reason == "bad-network-address"
    assert str(address.value).startswith("Type the network's address")
    with pytest.raises(InviteError) as code:
        link_from_parts("https://t.example.org", "a b")
    assert code.value.reason == "bad-invite-code"
