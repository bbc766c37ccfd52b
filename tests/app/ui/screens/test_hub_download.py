"""Settings › Download from Hugging Face…: the real dialog runs a real ``models pull`` child.

The Hub is ``tests/support/fake_hub.py`` on loopback (HF_ENDPOINT), serving a
tiny random Llama as one ``model.safetensors``; the child is ``meshnet-node``
itself, writing into this test's MESHNET_HOME. Nothing of the child is mocked.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings

from app.node_command import hub_pull_argv
from app.texts import text
from app.ui.screens.settings.hub_download import EXAMPLE_REPO, HubDownloadDialog, repo_id_from
from app.ui.screens.settings.settings_dialog import SettingsDialog
from app.ui.settings_store import SettingsStore
from tests.app.ui.screens.test_settings_dialog import FakeAutostart, FakeCheck
from tests.core.runtime.conftest import build_tiny
from tests.support.fake_hub import FakeHub

REPO = "tiny-org/Tiny-Llama"
MODEL_ID = "tiny-org--tiny-llama"
CHILD_S = 180_000  # a child's whole run, on a busy machine: generous, never asserted


@pytest.fixture(scope="module")
def repo_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = build_tiny(tmp_path_factory.mktemp("hub-repo"), seed=3, tie_word_embeddings=False)
    (folder / "tokenizer.json").write_text("{}")
    (folder / "tokenizer_config.json").write_text("{}")
    return folder


@pytest.fixture
def hub(repo_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """The Hub the children reach: they inherit this environment."""
    with FakeHub() as server:
        server.add_commit(REPO, repo_folder)
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        yield server


@pytest.fixture
def settings(qtbot: Any, tmp_path: Path) -> SettingsDialog:
    store = SettingsStore(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    dialog = SettingsDialog(store, check=FakeCheck(), autostart=FakeAutostart())
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def _download(qtbot: Any, settings: SettingsDialog, name: str) -> tuple[HubDownloadDialog, list]:
    """Open the dialog from the settings' button, type ``name``, click Download."""
    settings.download_button.click()
    dialog = settings.hub_download
    assert dialog is not None and dialog.isVisible()
    dialog.name_edit.setText(name)
    dialog.download_button.click()
    assert dialog.busy and not dialog.name_edit.isEnabled()
    shown: list[str] = []  # each sentence the dialog showed for a child's event
    assert dialog.child is not None
    dialog.child.event.connect(lambda _event: shown.append(dialog.status.text()))
    return dialog, shown


@pytest.mark.slow
def test_a_download_shows_its_progress_and_puts_the_pulled_folder_in_the_model_field(
    qtbot: Any, settings: SettingsDialog, hub: FakeHub, isolated_meshnet_home: Path
) -> None:
    dialog, shown = _download(qtbot, settings, REPO)
    bar: list[int] = []
    dialog.progress.valueChanged.connect(bar.append)

    qtbot.waitUntil(lambda: not dialog.busy, timeout=CHILD_S)

    folder = isolated_meshnet_home / "models" / MODEL_ID
    assert dialog.folder == str(folder), dialog.status.text()
    assert settings.model_edit.text() == str(folder)
    assert not dialog.isVisible()
    assert (folder / "config.json").is_file() and (folder / "model.safetensors").is_file()
    # progress in plain words, and a bar that went all the way
    assert dialog.progress_events > 0
    assert shown[0] == f"Looking up {REPO} on Hugging Face…"
    assert any(s.startswith("Downloading model.safetensors… ") and s.endswith(" %") for s in shown)
    assert bar and bar[-1] == 100
    # the settings take it as it is: Save is there to press
    assert settings.validate() == {} and settings.save_button.isEnabled()


@pytest.mark.slow
def test_an_unknown_model_gets_a_sentence_and_leaves_the_model_field_alone(
    qtbot: Any, settings: SettingsDialog, hub: FakeHub
) -> None:
    settings.model_edit.setText("/models/mine")
    dialog, _ = _download(qtbot, settings, "tiny-org/No-Such-Model")

    qtbot.waitUntil(lambda: not dialog.busy, timeout=CHILD_S)

    assert dialog.status.text() == text("hub.error.repo-not-found", repo="tiny-org/No-Such-Model")
    assert "is not a model repository" in dialog.status.toolTip()  # the node's own words
    assert settings.model_edit.text() == "/models/mine"
    # still open and usable: the name can be fixed and downloaded again
    assert dialog.isVisible() and dialog.download_button.isEnabled()
    assert dialog.name_edit.isEnabled() and dialog.progress.isHidden()


@pytest.mark.parametrize(
    "typed", ["", "Tiny-Llama", "tiny-org/", "tiny-org/Tiny Llama", "a/b/c", "-org/x", "o--rg/x"]
)
def test_a_name_not_shaped_org_slash_name_is_refused_before_any_child_starts(
    qtbot: Any, settings: SettingsDialog, hub: FakeHub, typed: str
) -> None:
    settings.download_button.click()
    dialog = settings.hub_download
    assert dialog is not None
    dialog.name_edit.setText(typed)
    dialog.download_button.click()

    assert dialog.child is None and not dialog.busy
    assert dialog.status.text() == text("hub.bad-name", example=EXAMPLE_REPO)
    assert hub.requests == []


def test_a_models_address_is_taken_as_its_name() -> None:
    assert repo_id_from(f" https://huggingface.co/{EXAMPLE_REPO}/ ") == EXAMPLE_REPO
    assert repo_id_from(f"huggingface.co/{REPO}") == REPO
    assert repo_id_from("https://example.org/tiny-org/Tiny-Llama") is None


def test_the_pull_command_reads_as_the_node_parses_it() -> None:
    from app.cli.node import build_parser

    argv = hub_pull_argv(REPO, "-odd-branch", frozen=False)
    args = build_parser().parse_args(argv[3:])  # after python -m app.cli.node
    assert (args.repo_id, args.revision, args.json, args.control) == (
        REPO,
        "-odd-branch",
        True,
        "stdin",
    )


@pytest.mark.slow
def test_cancel_stops_the_child_through_stdin_and_keeps_the_field(
    qtbot: Any,
    settings: SettingsDialog,
    hub: FakeHub,
    isolated_meshnet_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Hub holds the weights back for the child's whole life, so it cannot finish:
    Cancel always comes first. A stalled download notices the stop only when
    huggingface_hub gives up (its read timeout, 1 s here, times its retries)."""
    monkeypatch.setenv("HF_HUB_DOWNLOAD_TIMEOUT", "1")
    gate = threading.Event()
    handler = hub._server.RequestHandlerClass  # the fake's own, answering after the gate

    class HeldBack(handler):  # type: ignore[misc,valid-type]
        def do_GET(self) -> None:
            if self.path.endswith(".safetensors"):
                gate.wait(CHILD_S / 1000)
            super().do_GET()

    hub._server.RequestHandlerClass = HeldBack
    try:
        settings.download_button.click()
        assert settings.hub_download is not None
        # no SIGTERM or kill while the child waits out its timeouts: it must leave by itself
        settings.hub_download.terminate_after_s = settings.hub_download.kill_after_s = (
            CHILD_S / 1000
        )
        dialog, _ = _download(qtbot, settings, REPO)
        ended: list[int] = []
        assert dialog.child is not None
        dialog.child.finished.connect(lambda code, _out: ended.append(code))
        qtbot.waitUntil(
            lambda: dialog.status.text().startswith("Downloading model.safetensors"),
            timeout=CHILD_S,
        )
        dialog.close_button.click()  # "Cancel download"
        assert dialog.status.text() == text("hub.stopping") and dialog.isVisible()

        qtbot.waitUntil(lambda: not dialog.busy, timeout=CHILD_S)
    finally:
        gate.set()

    assert ended == [2]  # it stopped by itself (never terminated or killed)
    assert dialog.status.text() == text("hub.cancelled")
    assert dialog.isVisible() and dialog.download_button.isEnabled()
    assert settings.model_edit.text() == ""
    assert not (isolated_meshnet_home / "models" / MODEL_ID).exists()
