"""The doctor wizard, driven page by page with fake ``meshnet-node`` children.

A fake child is a real process (a small Python script) that prints what a spec
tells it, so the wizard's JsonChild, progress parsing, cancel and exit-code
handling all run for real; the slow tests at the end use the real node.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QWizard

from app.errors import TrackerReadError
from app.settings_model import AppSettings
from app.tracker_api import TrackerAllocation
from app.ui.screens.doctor.join import JoinPage
from app.ui.screens.doctor.wizard import DoctorWizard
from app.ui.settings_store import SettingsStore
from core.network.joined_network import JoinedNetwork
from tests.tracker_service.conftest import register
from tests.tracker_service.helpers import FakeNode as TrackerNode
from tests.tracker_service.helpers import identity_block
from tests.tracker_service.server_process import TrackerProcess

FAKE_NODE = textwrap.dedent(
    """
    import json, sys, time
    spec_path, calls_path, command = sys.argv[1], sys.argv[2], sys.argv[3]
    spec = json.load(open(spec_path))[command]
    with open(calls_path, "a") as calls:
        calls.write(json.dumps(sys.argv[3:]) + "\\n")
    for line in spec.get("stderr", []):
        print(line if isinstance(line, str) else json.dumps(line), file=sys.stderr, flush=True)
    if spec.get("hold") == "ignore":
        while True:
            time.sleep(1)
    if spec.get("hold"):
        for line in sys.stdin:
            if line.strip() == "stop":
                break
        with open(calls_path, "a") as calls:
            calls.write(json.dumps(["stopped", command]) + "\\n")
        sys.exit(1)
    out = spec.get("stdout")
    if out is not None:
        print(out if isinstance(out, str) else json.dumps(out), flush=True)
    sys.exit(spec.get("exit", 0))
    """
)

HARDWARE: dict[str, Any] = {
    "device": {"kind": "cpu", "name": "cpu", "total_bytes": 16e9, "free_bytes": 8e9},
    "ram_total_bytes": 16_000_000_000,
    "ram_available_bytes": 8_000_000_000,
    "disk_free_bytes": 100_000_000_000,
    "cpu_count": 8,
    "model": {
        "model_id": "HuggingFaceTB/SmolLM2-135M-Instruct",
        "layer_count": 30,
        "imported": False,
    },
    "suggested_layers": [0, 30],
    "suggestion": "All 30 layers fit in free memory.",
}


def progress(stage: str, done: int, total: int) -> dict[str, Any]:
    return {
        "kind": "progress",
        "message": f"{stage} {done} of {total}",
        "state": None,
        "gate": None,
        "gate_state": None,
        "reason": None,
        "data": {"stage": stage, "done": done, "total": total},
        "at": 0.0,
    }


def report(status: str = "passed", **extra: Any) -> dict[str, Any]:
    return {
        "status": status,
        "diagnostics": [],
        "tokens_per_second": 42.5,
        "shard": {"start": 0, "end": 30},
        **extra,
    }


class FakeController:
    def __init__(self, running: bool = False) -> None:
        self.running = running
        self.started: list[str | None] = []

    def start(self, report_path: str | None = None) -> None:
        self.started.append(report_path)


class FakeNode:
    def __init__(self, tmp_path: Path) -> None:
        self.script = tmp_path / "fake_node.py"
        self.script.write_text(FAKE_NODE)
        self.spec_path = tmp_path / "spec.json"
        self.calls_path = tmp_path / "calls.jsonl"
        self.spec: dict[str, Any] = {
            "hardware": {"stdout": HARDWARE},
            "models": {
                "stderr": [
                    progress("import", 1, 4),
                    "INFO some log line",
                    progress("import", 4, 4),
                ],
                "stdout": {"path": "/tmp/model", "model_id": "x"},
            },
            "doctor": {
                "stderr": [
                    progress("load", 30, 30),
                    progress("probe", 8, 8),
                    {"kind": "report-saved", "data": {"path": "/tmp/report.json"}},
                ],
                "stdout": report(),
            },
        }

    def command(self, *args: str) -> list[str]:
        self.spec_path.write_text(json.dumps(self.spec))
        return [sys.executable, str(self.script), str(self.spec_path), str(self.calls_path), *args]

    def calls(self) -> list[list[str]]:
        if not self.calls_path.exists():
            return []
        return [json.loads(line) for line in self.calls_path.read_text().splitlines()]


@pytest.fixture
def store(tmp_path: Path) -> SettingsStore:
    return SettingsStore(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))


@pytest.fixture
def fake(tmp_path: Path) -> FakeNode:
    return FakeNode(tmp_path)


JOINED = JoinedNetwork(
    tracker_url="http://tracker.invalid", key_fingerprint="0" * 32, join_token="", name="Test"
)


def past_the_join_page(qtbot: Any, wizard: DoctorWizard) -> DoctorWizard:
    """The wizard opens on its join page (tests/app/ui/screens/test_join_page.py); this
    computer has joined already, so Next goes on to the checks."""
    qtbot.addWidget(wizard)
    wizard.show()
    assert wizard.currentId() == DoctorWizard.PAGE_JOIN and next_enabled(wizard)
    wizard.next()
    assert wizard.currentId() == DoctorWizard.PAGE_WELCOME
    return wizard


def make_wizard(qtbot: Any, store: SettingsStore, fake: FakeNode, **kw: Any) -> DoctorWizard:
    controller = FakeController(**kw)
    join_page = JoinPage(joined_now=lambda: JOINED)
    wizard = DoctorWizard(store, controller, node_command=fake.command, join_page=join_page)
    return past_the_join_page(qtbot, wizard)


def next_enabled(wizard: DoctorWizard) -> bool:
    return wizard.button(QWizard.WizardButton.NextButton).isEnabled()


def back_enabled(wizard: DoctorWizard) -> bool:
    return wizard.button(QWizard.WizardButton.BackButton).isEnabled()


def to_memory_page(qtbot: Any, wizard: DoctorWizard) -> None:
    wizard.next()
    qtbot.waitUntil(wizard.hardware.isComplete, timeout=20_000)
    wizard.next()
    assert wizard.currentId() == DoctorWizard.PAGE_MEMORY


def test_happy_path_imports_tests_and_starts_contributing_with_the_saved_report(
    qtbot: Any, store: SettingsStore, fake: FakeNode
) -> None:
    wizard = make_wizard(qtbot, store, fake)
    to_memory_page(qtbot, wizard)
    assert "NVIDIA" not in wizard.hardware.device_label.text()
    assert "8.0 GB free" in wizard.hardware.device_label.text()
    assert "fetched in the next step" in wizard.hardware.model_label.text()
    # no layers asked: half the memory (the default) holds the whole model here
    assert wizard.memory.choice() == "half" and wizard.memory.layers == (0, 30)
    assert wizard.memory.holds.text() == "With this choice this computer can hold the whole model."
    wizard.next()
    assert wizard.currentId() == DoctorWizard.PAGE_IMPORT
    qtbot.waitUntil(wizard.import_page.isComplete, timeout=20_000)
    assert wizard.import_page.progress.maximum() == 4
    assert "ready" in wizard.import_page.status.text()
    wizard.next()
    qtbot.waitUntil(lambda: wizard.currentId() == DoctorWizard.PAGE_RESULT, timeout=20_000)
    assert wizard.state.report_path == "/tmp/report.json"
    assert "Passed" in wizard.result_page.headline.text()
    assert "about 42 words per second" in wizard.result_page.details.text()
    assert wizard.result_page.contribute.isChecked()
    wizard.accept()
    assert wizard.controller.started == ["/tmp/report.json"]  # type: ignore[attr-defined]
    saved = store.load()
    half_mb = int(16e9 * 0.5) // 1024**2
    assert saved.layers == (0, 30) and saved.memory_cap_mb == half_mb
    doctor = next(c for c in fake.calls() if c[0] == "doctor")
    assert doctor[doctor.index("--layers") + 1] == "0:30"
    assert doctor[doctor.index("--memory-cap-mb") + 1] == str(half_mb)
    assert doctor[doctor.index("--control") + 1] == "stdin"  # the wizard stops it on stdin
    assert store.last_hardware() == HARDWARE


def test_an_imported_model_skips_the_import_page(
    qtbot: Any, store: SettingsStore, fake: FakeNode
) -> None:
    fake.spec["hardware"]["stdout"] = {**HARDWARE, "model": {**HARDWARE["model"], "imported": True}}
    wizard = make_wizard(qtbot, store, fake)
    to_memory_page(qtbot, wizard)
    wizard.next()
    qtbot.waitUntil(lambda: wizard.currentId() == DoctorWizard.PAGE_RESULT, timeout=20_000)
    assert [c[0] for c in fake.calls()] == ["hardware", "doctor"]


def test_the_leaderboard_name_and_team_are_optional_and_saved_on_finish(
    qtbot: Any, store: SettingsStore, fake: FakeNode
) -> None:
    fake.spec["hardware"]["stdout"] = {**HARDWARE, "model": {**HARDWARE["model"], "imported": True}}
    store.save(AppSettings(team="Analytical"))  # chosen before: offered again
    wizard = make_wizard(qtbot, store, fake)
    to_memory_page(qtbot, wizard)
    wizard.next()
    qtbot.waitUntil(lambda: wizard.currentId() == DoctorWizard.PAGE_RESULT, timeout=20_000)
    fields = wizard.result_page.leaderboard
    assert fields.isVisibleTo(wizard) and fields.values() == ("", "Analytical")
    assert "(optional)" in fields.title()
    assert wizard.button(QWizard.WizardButton.FinishButton).isEnabled()  # skipping is fine
    fields.name_edit.setText("  Ada ")
    wizard.accept()
    saved = store.load()
    assert (saved.display_name, saved.team) == ("Ada", "Analytical")
    assert saved.layers == (0, 30)


def test_a_skipped_leaderboard_saves_no_name(
    qtbot: Any, store: SettingsStore, fake: FakeNode
) -> None:
    fake.spec["hardware"]["stdout"] = {**HARDWARE, "model": {**HARDWARE["model"], "imported": True}}
    wizard = make_wizard(qtbot, store, fake)
    to_memory_page(qtbot, wizard)
    wizard.next()
    qtbot.waitUntil(lambda: wizard.currentId() == DoctorWizard.PAGE_RESULT, timeout=20_000)
    wizard.accept()
    saved = store.load()
    assert (saved.display_name, saved.team) == ("", "")
    assert saved.layers == (0, 30)


def test_next_and_back_wait_while_the_hardware_check_runs(
    qtbot: Any, store: SettingsStore, fake: FakeNode
) -> None:
    fake.spec["hardware"]["hold"] = True
    wizard = make_wizard(qtbot, store, fake)
    wizard.next()
    qtbot.waitUntil(lambda: wizard.hardware.busy, timeout=10_000)
    assert wizard.hardware.progress.maximum() == 0  # the busy indicator
    assert not next_enabled(wizard) and not back_enabled(wizard)
    wizard.hardware.cancel()
    qtbot.waitUntil(lambda: not wizard.hardware.busy, timeout=10_000)
    assert ["stopped", "hardware"] in fake.calls()  # it was asked on stdin, not killed
    assert back_enabled(wizard) and not next_enabled(wizard)
    assert wizard.hardware.retry_button.isVisible()


def test_too_little_memory_gets_a_sentence_and_no_next(
    qtbot: Any, store: SettingsStore, fake: FakeNode
) -> None:
    small = {"kind": "cuda", "name": "Small GPU", "total_bytes": 800e6, "free_bytes": 800e6}
    fake.spec["hardware"]["stdout"] = {**HARDWARE, "device": small}
    wizard = make_wizard(qtbot, store, fake)
    to_memory_page(qtbot, wizard)
    page = wizard.memory
    assert "graphics memory" in page.buttons["half"].text()
    page.choose("little")  # 200 MB: under the 256 MB the node needs at least
    assert not next_enabled(wizard)
    assert page.problem_label.text() == (
        "That is too little memory for this network's model; choose more."
    )
    page.choose("most")
    assert next_enabled(wizard) and page.problem_label.isHidden()
    assert page.cap_mb() == int(800e6 * 0.9) // 1024**2
    # 720 MB of the 800 MB the hardware check measured: 27 of the 30 layers fit
    assert page.layers == (0, 27)
    assert "part of the model" in page.holds.text()


def test_a_failed_test_lists_each_diagnostic_and_goes_back_to_the_layers(
    qtbot: Any, store: SettingsStore, fake: FakeNode
) -> None:
    sentences = ["Not enough memory for layers 0–30: choose fewer layers.", "It was slow."]
    fake.spec["doctor"] = {"stdout": report("failed", diagnostics=sentences), "exit": 1}
    wizard = make_wizard(qtbot, store, fake)
    to_memory_page(qtbot, wizard)
    wizard.next()
    qtbot.waitUntil(wizard.import_page.isComplete, timeout=20_000)
    wizard.next()
    qtbot.waitUntil(lambda: wizard.currentId() == DoctorWizard.PAGE_RESULT, timeout=20_000)
    assert wizard.result_page.headline.text() == "The test did not pass."
    # plain advice on the page; the node's own sentences one click away
    assert "choose to use more of this computer's memory" in wizard.result_page.advice.text()
    assert wizard.result_page.why.isHidden()
    wizard.result_page.show_why.click()
    assert wizard.result_page.why.text() == "\n".join(f"• {s}" for s in sentences)
    assert wizard.result_page.contribute.isHidden()
    wizard.result_page.other_layers.click()
    assert wizard.currentId() == DoctorWizard.PAGE_MEMORY
    wizard.accept()
    assert wizard.controller.started == []  # type: ignore[attr-defined]
    assert store.load().layers is None  # a failed range is not saved


def test_a_doctor_that_cannot_run_shows_its_own_sentence(
    qtbot: Any, store: SettingsStore, fake: FakeNode
) -> None:
    fake.spec["doctor"] = {
        "stderr": ["meshnet-node: the model folder /x has no manifest; re-import it [model-error]"],
        "exit": 2,
    }
    wizard = make_wizard(qtbot, store, fake)
    to_memory_page(qtbot, wizard)
    wizard.next()
    qtbot.waitUntil(wizard.import_page.isComplete, timeout=20_000)
    wizard.next()
    qtbot.waitUntil(lambda: wizard.currentId() == DoctorWizard.PAGE_RESULT, timeout=20_000)
    assert wizard.result_page.why.text() == ("• the model folder /x has no manifest; re-import it")
    fake.spec["doctor"] = {  # the child's own result event, when it prints one, wins
        "stderr": [
            {"kind": "result", "reason": "no-device", "message": "No GPU cuda:3 here.", "data": {}},
            "meshnet-node: something else [error]",
        ],
        "exit": 2,
    }
    wizard.result_page.other_layers.click()
    to_result(qtbot, wizard)
    assert wizard.result_page.why.text() == "• No GPU cuda:3 here."


def test_cancel_import_stops_a_stubborn_child_and_offers_to_try_again(
    qtbot: Any, store: SettingsStore, fake: FakeNode
) -> None:
    fake.spec["models"] = {"stderr": [progress("import", 1, 10)], "hold": "ignore"}
    wizard = make_wizard(qtbot, store, fake)
    to_memory_page(qtbot, wizard)
    wizard.next()
    qtbot.waitUntil(lambda: wizard.import_page.progress.maximum() == 10, timeout=20_000)
    assert wizard.import_page.cancel_button.isVisible()
    wizard.import_page.cancel_button.click()
    qtbot.waitUntil(lambda: not wizard.import_page.busy, timeout=20_000)
    assert "Cancelled. Nothing was saved" in wizard.import_page.status.text()
    assert wizard.import_page.retry_button.isVisible() and not next_enabled(wizard)
    fake.spec["models"] = {"stdout": {"path": "/tmp/model", "model_id": "x"}}
    wizard.import_page.retry_button.click()
    qtbot.waitUntil(wizard.import_page.isComplete, timeout=20_000)
    assert next_enabled(wizard)


def test_closing_the_wizard_mid_test_stops_the_child(
    qtbot: Any, store: SettingsStore, fake: FakeNode
) -> None:
    fake.spec["doctor"] = {"stderr": [progress("load", 1, 30)], "hold": True}
    fake.spec["hardware"]["stdout"] = {**HARDWARE, "model": {**HARDWARE["model"], "imported": True}}
    wizard = make_wizard(qtbot, store, fake)
    to_memory_page(qtbot, wizard)
    wizard.next()
    qtbot.waitUntil(lambda: wizard.test.progress.maximum() == 30, timeout=20_000)
    assert not back_enabled(wizard)
    wizard.close()
    qtbot.waitUntil(lambda: ["stopped", "doctor"] in fake.calls(), timeout=20_000)
    assert not wizard.isVisible()


def test_settings_feed_the_commands_and_contribute_is_not_offered_twice(
    qtbot: Any, store: SettingsStore, fake: FakeNode
) -> None:
    store.save(AppSettings(model="/models/mine", device="cpu", layers=(2, 9), memory_cap_mb=4096))
    wizard = make_wizard(qtbot, store, fake, running=True)
    to_memory_page(qtbot, wizard)
    # 4 GB of this computer's 16 GB is nearest "a little"; the part follows the share
    assert wizard.memory.choice() == "little"
    assert wizard.memory.layers == (0, 15)  # 4 GB of the 8 GB measured: 15 of 30
    wizard.next()  # a chosen model folder is used as it is: no import
    qtbot.waitUntil(lambda: wizard.currentId() == DoctorWizard.PAGE_RESULT, timeout=20_000)
    hardware, doctor = fake.calls()
    assert hardware[hardware.index("--model") + 1] == "/models/mine"
    assert doctor[doctor.index("--device") + 1] == "cpu"
    assert wizard.result_page.contribute.isHidden()
    assert "already on" in wizard.result_page.advice.text()
    wizard.accept()
    assert wizard.controller.started == []  # type: ignore[attr-defined]
    saved = store.load()  # the tested part and share, for the next start
    assert saved.layers == (0, 15) and saved.memory_cap_mb == int(16e9 * 0.25) // 1024**2


@pytest.mark.parametrize("name", DoctorWizard.SAMPLE_NAMES)
def test_every_sample_page_renders_without_a_child(
    qtbot: Any, store: SettingsStore, fake: FakeNode, name: str
) -> None:
    wizard = make_wizard(qtbot, store, fake)
    wizard.show_sample(name)
    assert wizard.currentPage() is not None and wizard.currentPage().title()
    assert not wizard.grab().isNull()
    assert fake.calls() == []
    wizard.reject()
    assert store.load() == AppSettings()


# -- the real node children on the real default model ------------------------------------


def real_wizard(qtbot: Any, store: SettingsStore) -> DoctorWizard:
    join_page = JoinPage(joined_now=lambda: JOINED)
    return past_the_join_page(qtbot, DoctorWizard(store, FakeController(), join_page=join_page))


def to_result(qtbot: Any, wizard: DoctorWizard) -> None:
    wizard.next()
    qtbot.waitUntil(lambda: wizard.currentId() == DoctorWizard.PAGE_RESULT, timeout=300_000)


@pytest.mark.slow
def test_real_doctor_passes_and_finish_starts_contributing_with_its_saved_report(
    qtbot: Any, store: SettingsStore, default_model_dir: Path
) -> None:
    store.save(AppSettings(model=str(default_model_dir)))
    wizard = real_wizard(qtbot, store)
    wizard.next()
    qtbot.waitUntil(wizard.hardware.isComplete, timeout=120_000)
    assert "already on this computer" in wizard.hardware.model_label.text()
    wizard.next()
    chosen = wizard.memory.layers
    assert chosen is not None and chosen[0] < chosen[1]
    to_result(qtbot, wizard)
    assert wizard.test.progress_events > 0
    assert wizard.result_page.passed, wizard.result_page.why.text()
    assert "words per second" in wizard.result_page.details.text()
    report_path = wizard.state.report_path
    assert report_path is not None and Path(report_path).is_file()
    wizard.accept()
    assert wizard.controller.started == [report_path]  # type: ignore[attr-defined]
    assert store.load().layers == chosen


@pytest.mark.slow
def test_real_layers_past_the_models_end_are_refused_by_the_page_and_by_the_doctor(
    qtbot: Any, store: SettingsStore, default_model_dir: Path
) -> None:
    store.save(AppSettings(model=str(default_model_dir)))
    wizard = real_wizard(qtbot, store)
    wizard.next()
    qtbot.waitUntil(wizard.hardware.isComplete, timeout=120_000)
    wizard.next()
    # The page asks no layers; a stale setting past the model's end is refused by the
    # real doctor, and its sentence is what the result page's details show.
    wizard.state.layers = (0, 40)
    wizard.setStartId(DoctorWizard.PAGE_TEST)
    wizard.restart()
    qtbot.waitUntil(lambda: wizard.currentId() == DoctorWizard.PAGE_RESULT, timeout=300_000)
    assert wizard.result_page.headline.text() == "The test did not pass."
    assert "layers 0–40 do not exist" in wizard.result_page.why.text()


@pytest.mark.slow
def test_real_memory_cap_too_small_says_not_enough_memory_and_starts_nothing(
    qtbot: Any, store: SettingsStore, default_model_dir: Path
) -> None:
    store.save(AppSettings(model=str(default_model_dir)))
    wizard = real_wizard(qtbot, store)
    wizard.next()
    qtbot.waitUntil(wizard.hardware.isComplete, timeout=120_000)
    wizard.next()
    # the page offers no cap this small; a stale setting could still hold one
    wizard.state.layers = (0, 30)
    wizard.state.memory_cap_mb = 300
    wizard.setStartId(DoctorWizard.PAGE_TEST)
    wizard.restart()
    qtbot.waitUntil(lambda: wizard.currentId() == DoctorWizard.PAGE_RESULT, timeout=300_000)
    doctor = wizard.test.argv()
    assert doctor[doctor.index("--memory-cap-mb") + 1] == "300"
    assert not wizard.result_page.passed
    assert "Not enough memory" in wizard.result_page.why.text()
    assert wizard.result_page.contribute.isHidden()
    wizard.accept()
    assert wizard.controller.started == []  # type: ignore[attr-defined]
    assert store.load().layers is None


@pytest.mark.slow
def test_real_cancel_mid_import_leaves_no_model_and_no_staging(
    qtbot: Any, store: SettingsStore, isolated_meshnet_home: Path
) -> None:
    wizard = real_wizard(qtbot, store)  # MESHNET_HOME is empty: the import really runs
    wizard.next()
    qtbot.waitUntil(wizard.hardware.isComplete, timeout=120_000)
    assert "fetched in the next step" in wizard.hardware.model_label.text()
    wizard.next()
    wizard.next()
    assert wizard.currentId() == DoctorWizard.PAGE_IMPORT
    qtbot.waitUntil(lambda: wizard.import_page.progress_events > 0, timeout=60_000)
    wizard.import_page.cancel_button.click()
    qtbot.waitUntil(lambda: not wizard.import_page.busy, timeout=60_000)
    assert "Cancelled. Nothing was saved" in wizard.import_page.status.text()
    assert wizard.import_page.retry_button.isVisible() and not next_enabled(wizard)
    models = isolated_meshnet_home / "models"
    leftovers = sorted(p.name for p in models.iterdir()) if models.exists() else []
    assert leftovers == []


def test_the_memory_page_takes_the_trackers_part_read_in_the_background(
    qtbot: Any, store: SettingsStore, fake: FakeNode, tmp_path: Path
) -> None:
    # Never dialled during the test: a fake node found unreachable would not count as
    # covering its layers, and when the dial happens is a race.
    tracker = TrackerProcess(
        tmp_path,
        f"sqlite:///{tmp_path / 'tracker.db'}",
        MESHNET_TRACKER_REACHABILITY_POLL_S="3600",
    ).start()
    try:
        with httpx.Client(base_url=tracker.url, timeout=10.0) as client:
            assert register(client, TrackerNode(), identity_block(0, 12)).status_code == 200
        store.save(AppSettings(tracker_url=tracker.url))
        fake.spec["hardware"]["stdout"] = {
            **HARDWARE,
            "model": {**HARDWARE["model"], "model_id": "HuggingFaceTB/SmolLM2-135M-Instruct"},
            "room_layers": 12,
            "recipe_id": "smollm2-135m-fp32",
        }
        wizard = make_wizard(qtbot, store, fake)
        to_memory_page(qtbot, wizard)
        page = wizard.memory
        # The page is usable at once: a local part that fits, while the tracker is asked.
        assert page.layers == (0, 12) and page.isComplete()
        qtbot.waitUntil(
            lambda: page.network_note.text() == "The network chose the part it needs most.",
            timeout=20_000,
        )
        assert page.layers == (12, 24)
        assert "Layers 12–24" in page.network_note.toolTip()  # the engineer's words on hover
    finally:
        tracker.stop()


def test_the_network_chooses_the_part_and_a_silent_one_leaves_a_local_part(
    qtbot: Any, store: SettingsStore, fake: FakeNode
) -> None:
    wizard = make_wizard(qtbot, store, fake)
    to_memory_page(qtbot, wizard)
    page = wizard.memory
    page.apply_tracker_suggestion(TrackerAllocation(True, 12, 24, "Layers 12–24 are needed."))
    assert page.layers == (12, 24)
    page.choose("little")  # another share: a local part at once, the network asked again
    assert page.layers == (0, 15)
    page.apply_tracker_failure(TrackerReadError("Nothing answers.", reason="connection-refused"))
    assert page.layers == (0, 15)
    assert page.network_note.text().startswith("The network did not answer, so MeshNet chose")
    assert page.network_note.toolTip() == "Nothing answers."
    assert page.validatePage() and wizard.state.layers == (0, 15)
