"""No OS keyring at all (keyring's "fail" backend, as on a desktop without GNOME
Keyring or KWallet): the app still joins with one click. It keeps the node's key in
an owner-only file in its own data folder, hands the node child that same file (no
flag for the user to type), and says so in one plain sentence in Details; the batch
jobs' sign-in is kept the same way.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from keyring.backends import fail
from PySide6.QtCore import Qt

from app.node_command import child_environment, node_base_argv, node_run_argv
from app.settings_model import AppSettings
from app.ui.screens.doctor.wizard import DoctorWizard
from core.identity.keystore import DEFAULT_PROFILE, KEYS_FOLDER, keyring_problem
from core.network.joined_network import load_joined_network
from core.paths import data_home
from tests.app.ui.join_support import NAME, make_app, make_invite, open_wizard
from tests.app.ui.join_support import network as network  # a fixture
from tests.tracker_service.server_process import TrackerProcess

NO_KEYRING = "keyring.backends.fail.Keyring"


@pytest.fixture(autouse=True)
def no_keyring(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", NO_KEYRING)  # the children's too
    try:
        assert keyring_problem() is not None
        yield
    finally:
        keyring.set_keyring(previous)


def owner_only(path: Path) -> bool:
    return os.name != "posix" or stat.S_IMODE(path.stat().st_mode) & 0o077 == 0


def node_id_the_child_sees(argv_tail: list[str]) -> str:
    """Run the real ``meshnet-node identity show`` with the app's identity flags."""
    result = subprocess.run(
        [*node_base_argv(frozen=False), "identity", "show", *argv_tail],
        env=child_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stdout.splitlines() if x.startswith("node id:"))
    return line.split(":", 1)[1].strip()


def test_without_a_keyring_the_app_joins_and_keeps_the_key_in_its_own_file(
    qtbot: Any, tmp_path: Path, network: TrackerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    link = make_invite(network, capsys)
    app = make_app(qtbot, tmp_path)
    app.show_initial(join_link=link)
    wizard = open_wizard(qtbot, app)
    page = wizard.join_page
    qtbot.waitUntil(lambda: page.network_box.isVisible(), timeout=20_000)
    qtbot.mouseClick(page.join_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(page.isComplete, timeout=20_000)
    assert "keyring" not in page.message.text().lower()
    assert "--" not in page.message.text()  # no command-line flag handed to the user
    joined = load_joined_network(DEFAULT_PROFILE)
    assert joined is not None and joined.name == NAME
    qtbot.waitUntil(lambda: wizard.currentId() == DoctorWizard.PAGE_HARDWARE, timeout=5000)
    wizard.reject()

    key_file = data_home() / KEYS_FOLDER / f"{DEFAULT_PROFILE}.pem"
    assert key_file.is_file()
    assert owner_only(key_file) and owner_only(key_file.parent)
    # The node child is given the same key: it serves as the computer that joined.
    argv = node_run_argv(AppSettings(), frozen=False)
    flag = argv.index("--identity-file")
    assert Path(argv[flag + 1]) == key_file
    from app.network_join import app_identity

    assert node_id_the_child_sees(argv[flag : flag + 2]) == app_identity().node_id

    window = app.status_window
    window.show_details()
    sentence = window.details.key_file_label.text()
    assert window.details.key_file_label.isVisible()
    assert "no keyring" in sentence and "only you can read" in sentence
    assert str(data_home()) in sentence and "--" not in sentence


def test_without_a_keyring_the_batch_jobs_sign_in_is_an_owner_only_file() -> None:
    from core.jobs.credentials import CredentialStore

    store = CredentialStore()
    assert not store.use_keyring
    store.save("http://127.0.0.1:9", "secret-session")
    assert CredentialStore().load("http://127.0.0.1:9") == "secret-session"
    assert store.path.is_relative_to(data_home()) and owner_only(store.path)


def test_with_a_keyring_the_key_stays_there_and_details_say_nothing(
    qtbot: Any, tmp_path: Path
) -> None:
    from tests.core.keyring_backend import DictKeyring

    keyring.set_keyring(DictKeyring())
    argv = node_run_argv(AppSettings(), frozen=False)
    assert "--identity-file" not in argv
    app = make_app(qtbot, tmp_path)
    app.status_window.show_details()
    assert not app.status_window.details.key_file_label.isVisible()
