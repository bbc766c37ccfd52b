"""Issue 22's walk, with real processes: a fresh profile opens an invite
(``meshnet-app --join LINK``), and three clicks later this computer serves.

A real tracker on loopback describes its network; the app's real wizard runs the
real ``meshnet-node hardware``, ``doctor`` and then ``run`` children on the default
model. Clicks are counted from the moment the link is opened: Join this network,
Next (the memory share), Finish.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QAbstractButton, QApplication, QWizard

from app.ui.i18n import install_language
from app.ui.screens.doctor.wizard import DoctorWizard
from core.identity.keystore import DEFAULT_PROFILE
from core.network.joined_network import load_joined_network
from tests.app.ui.join_support import (
    NAME,
    OPERATOR,
    QuietProbes,
    make_invite,
    start_serving_network,
    use_file_keyring,
)
from tests.tracker_service.server_process import TrackerProcess

pytestmark = pytest.mark.slow


@pytest.fixture
def shared_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from use_file_keyring(tmp_path, monkeypatch)


@pytest.fixture
def network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TrackerProcess]:
    yield from start_serving_network(tmp_path, monkeypatch)


CLICKS = {
    "en": ["Join this network", "Next >", "Finish"],
    "de": ["Diesem Netzwerk beitreten", "Weiter >", "Fertigstellen"],
}
HEADLINE = {"en": "Contributing", "de": "Hilft mit"}


@pytest.mark.parametrize("language", ["en", "de"])
def test_an_invite_to_serving_in_three_clicks(
    language: str,
    qtbot: Any,
    tmp_path: Path,
    shared_keyring: None,
    network: TrackerProcess,
    default_model_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from app.settings_model import AppSettings
    from app.ui.main import MeshNetApp
    from app.ui.settings_store import SettingsStore
    from app.usage_history import UsageHistory

    link = make_invite(network, capsys)
    store = SettingsStore(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    store.save(AppSettings(model=str(default_model_dir)))  # the model is already here
    qapp = QApplication.instance()
    assert isinstance(qapp, QApplication)
    assert install_language(qapp, language) == language  # what --language does
    app = MeshNetApp(
        qapp,
        store=store,
        probes=QuietProbes(),
        usage=UsageHistory(tmp_path / "usage.json"),
        tray_available=False,
        state=QSettings(str(tmp_path / "state.ini"), QSettings.Format.IniFormat),
    )
    clicks: list[str] = []

    def click(button: QAbstractButton) -> None:
        assert button.isVisible() and button.isEnabled(), button.text()
        clicks.append(button.text().replace("&", ""))
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)

    try:
        app.show_initial(join_link=link)  # what `meshnet-app --join LINK` does
        qtbot.waitUntil(lambda: isinstance(app._windows.get("doctor"), DoctorWizard), timeout=5000)
        wizard = app._windows["doctor"]
        assert isinstance(wizard, DoctorWizard)
        page = wizard.join_page
        qtbot.waitUntil(lambda: page.network_box.isVisible(), timeout=30_000)
        assert page.network_name.text() == NAME and OPERATOR in page.operator.text()
        click(page.join_button)  # 1
        qtbot.waitUntil(lambda: wizard.currentId() == DoctorWizard.PAGE_MEMORY, timeout=180_000)
        assert load_joined_network(DEFAULT_PROFILE) is not None
        click(wizard.button(QWizard.WizardButton.NextButton))  # 2: the memory share
        qtbot.waitUntil(lambda: wizard.currentId() == DoctorWizard.PAGE_RESULT, timeout=600_000)
        assert wizard.result_page.passed, wizard.result_page.why.text()
        assert wizard.result_page.contribute.isChecked()
        click(wizard.button(QWizard.WizardButton.FinishButton))  # 3: contribute
        qtbot.waitUntil(lambda: app.controller.status.state == "serving", timeout=300_000)
        assert clicks == CLICKS[language]
        registration = app.controller.status.registration or {}
        assert registration.get("tracker_url", network.url).rstrip("/") == network.url
        assert app.status_window.headline_label.text() == HEADLINE[language]
    finally:
        app.controller.kill()
        app.status_window.close()
        install_language(qapp, "en")
