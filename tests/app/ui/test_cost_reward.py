"""Issue 37: the status window's main view says what contributing costs this PC right now,
what it earns and what credit buys, and the last 7 days in words."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QProgressBar

from app.credit_summary import NO_CREDIT_YET, CreditSummary, earned_sentence
from app.machine_use import MachineUse, MachineUseReader, use_sentence
from app.ui.actions import AppActions
from app.ui.controller import NodeController
from app.ui.i18n import install_language
from app.ui.screens.status.window import StatusWindow
from app.ui.screenshots import SampleUsage, serving_events
from app.week_summary import last_week, midnight
from tests.app.fake_nvml import FakeGpu, FakeNvml

GB = 1_000_000_000
CARD = MachineUse(gpu_used_bytes=6_200_000_000, gpu_total_bytes=12 * GB, gpu_busy_percent=40.0)


@pytest.fixture
def german(qapp: Any) -> Iterator[None]:
    assert install_language(qapp, "de") == "de"
    try:
        yield
    finally:
        install_language(qapp, "en")


def test_the_cost_is_said_for_a_graphics_card_a_processor_and_an_idle_node() -> None:
    assert use_sentence(CARD, active=True) == (
        "Using 6.2 of 12 GB of graphics memory; the graphics card is 40% busy."
    )
    on_cpu = MachineUse(cpu_percent=12.4, ram_used_bytes=3_100_000_000)
    assert use_sentence(on_cpu, active=True) == "Using 3.1 GB of memory and 12% of the processor."
    assert "uses nothing" in use_sentence(CARD, active=False)
    assert "cannot measure" in use_sentence(None, active=True)


def test_german_says_the_cost_with_its_own_decimal_mark_and_percent_sign(german: None) -> None:
    sentence = use_sentence(CARD, active=True)
    assert "6,2" in sentence and "40 %" in sentence, sentence


def test_credit_says_what_was_earned_and_what_it_buys() -> None:
    sentence = earned_sentence(CreditSummary(today=18.42, week=96.7, total=412.05, rank=37))
    assert sentence.startswith("This computer earned 18.42 credit today and 96.70 this week.")
    assert "first in line" in sentence and "about 1,842 words" in sentence
    assert "No credit yet" in earned_sentence(NO_CREDIT_YET)
    assert "No credit yet" in earned_sentence(None)


def test_the_week_in_words_counts_words_and_hours_per_local_day() -> None:
    today = midnight(time.time())
    hours = [(today + 60, 100), (today + 3 * 3600 + 5, 50), (today - 2 * 3600, 7), (0.0, 999)]
    days = last_week(hours, today + 3 * 3600 + 10)
    assert len(days) == 7 and days[-1].start == today
    assert (days[-1].words, days[-1].hours) == (150, 2)
    assert (days[-2].words, days[-2].hours) == (7, 1)
    assert sum(day.words for day in days) == 157  # the hour from 1970 is no part of the week


@dataclass
class MemoryGpu(FakeGpu):
    """A fake card that also says its memory and each process's share of it."""

    total: int = 12 * GB
    used: dict[int, int] = field(default_factory=dict)


class MemoryNvml(FakeNvml):
    def nvmlDeviceGetComputeRunningProcesses(self, gpu: FakeGpu) -> list[Any]:
        assert isinstance(gpu, MemoryGpu)
        return [SimpleNamespace(pid=pid, usedGpuMemory=size) for pid, size in gpu.used.items()]

    def nvmlDeviceGetMemoryInfo(self, gpu: FakeGpu) -> Any:
        assert isinstance(gpu, MemoryGpu)
        return SimpleNamespace(total=gpu.total, used=sum(gpu.used.values()), free=0)


def test_the_reader_measures_the_node_process_and_its_card() -> None:
    node = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        game = node.pid + 100_000  # a pid that is not the node's
        card = MemoryGpu(utilisation=40, used={node.pid: 6_200_000_000, game: 3 * GB})
        other = MemoryGpu(used={game: 8 * GB})
        reader = MachineUseReader(importer=lambda: MemoryNvml([other, card]))
        use = reader.read(node.pid)
        assert use is not None
        assert (use.gpu_used_bytes, use.gpu_total_bytes, use.gpu_busy_percent) == (
            6_200_000_000,
            12 * GB,
            40.0,
        )
        assert use.ram_used_bytes and use.ram_used_bytes > 1_000_000  # a real process's memory
        assert reader.read(None) is None
        # no NVIDIA card: the processor's use, from the same real process
        cpu_only = MachineUseReader(importer=lambda: MemoryNvml([], init_error=OSError("none")))
        use = cpu_only.read(node.pid)
        assert use is not None and not use.on_graphics_card and use.cpu_percent is not None
    finally:
        node.kill()
        node.wait()


def test_the_main_view_shows_cost_reward_and_the_week(qtbot: Any) -> None:
    controller = NodeController(argv_factory=lambda _r: ["true"])
    for event in serving_events(time.time()):
        controller.handle_event(event)
    asked: list[int | None] = []

    def read_use(pid: int | None) -> MachineUse:
        asked.append(pid)
        return CARD

    window = StatusWindow(
        controller, AppActions(controller), usage=SampleUsage(), read_use=read_use
    )
    qtbot.addWidget(window)
    window.show()
    section = window.cost_reward
    qtbot.waitUntil(lambda: "6.2 of 12 GB" in section.use_label.text(), timeout=10_000)
    assert section.isVisibleTo(window) and not window.showing_details
    window.credit_card.set_summary(CreditSummary(today=2.5, week=9.0, total=20.0, rank=3))
    assert "2.50 credit today" in section.earn_label.text()
    names = [name.text() for name, _bar, _words in section.day_rows]
    assert names[-1] == "Today" and len(set(names)) == 7
    bars = section.findChildren(QProgressBar)
    assert len(bars) == 7 and all(bar.accessibleName() for bar in bars)
    assert max(bar.value() for bar in bars) == 100
    assert all(" words in " in words.text() for _n, _b, words in section.day_rows[:-1])
    # stopping: the cost says nothing is used, without a new measurement
    controller.handle_event({"kind": "state", "state": "stopped", "message": "", "at": 0})
    QApplication.processEvents()
    assert "uses nothing" in section.use_label.text()
