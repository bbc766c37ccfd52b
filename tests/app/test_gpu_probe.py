"""The NVIDIA GPU probe behind the "GPU busy" and temperature pause rules, against a fake NVML."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

from app.probes.gpu import UNKNOWN, GpuReading, NvmlGpuProbe

# --- GPU (NVML) ----------------------------------------------------------------
from tests.app.fake_nvml import (
    APP,
    GAME,
    NODE,
    FakeGpu,
    FakeNvml,
    NVMLError,
    Sample,
    probe_over,
)


def test_a_game_using_the_gpu_makes_it_busy_and_the_node_itself_does_not() -> None:
    gpu = FakeGpu(temperature=71, samples=[Sample(NODE, 10, 95), Sample(APP, 11, 40)])
    nvml = FakeNvml([gpu])
    probe = probe_over(nvml)
    assert probe.read([NODE]) == GpuReading(busy_by_others=False, temperature_c=71.0)
    gpu.samples = [Sample(NODE, 20, 95), Sample(GAME, 21, 60), Sample(GAME, 22, 70)]
    assert probe.read([NODE]) == GpuReading(busy_by_others=True, temperature_c=71.0)
    assert nvml.asked_since == [0, 11]  # only samples newer than the last read count


def test_a_process_below_the_threshold_does_not_make_the_gpu_busy() -> None:
    gpu = FakeGpu(samples=[Sample(GAME, 1, 4), Sample(GAME, 2, 8)])
    assert probe_over(FakeNvml([gpu])).read([NODE]).busy_by_others is False


@pytest.mark.parametrize("empty_raises_success", [False, True])
def test_no_new_samples_means_not_busy(empty_raises_success: bool) -> None:
    gpu = FakeGpu(samples=[], processes=(NODE,), empty_raises_success=empty_raises_success)
    assert probe_over(FakeNvml([gpu])).read([NODE]).busy_by_others is False


def test_without_per_process_samples_the_whole_gpu_counts_while_the_node_is_off_it() -> None:
    gpu = FakeGpu(samples=None, utilisation=80, processes=(GAME,))
    probe = probe_over(FakeNvml([gpu]))
    assert probe.read([NODE]).busy_by_others is True
    gpu.utilisation = 3
    assert probe.read([NODE]).busy_by_others is False
    gpu.processes, gpu.utilisation = (GAME, NODE), 90
    assert probe.read([NODE]).busy_by_others is None  # cannot tell the node's share apart


def test_several_gpus_busy_if_any_is_and_the_hottest_temperature() -> None:
    quiet = FakeGpu(temperature=50, samples=[])
    gaming = FakeGpu(temperature=84, samples=[Sample(GAME, 5, 90)])
    assert probe_over(FakeNvml([quiet, gaming])).read([NODE]) == GpuReading(True, 84.0)


def test_a_gpu_without_a_temperature_sensor_still_reports_busy() -> None:
    gpu = FakeGpu(samples=[Sample(GAME, 5, 90)], temperature_fails=True)
    assert probe_over(FakeNvml([gpu])).read([]) == GpuReading(True, None)


@pytest.mark.parametrize(
    "importer",
    [
        lambda: (_ for _ in ()).throw(ImportError("No module named 'pynvml'")),
        lambda: FakeNvml([], init_error=NVMLError("Driver Not Loaded")),
        lambda: FakeNvml([]),  # NVML works but finds no GPU
    ],
    ids=["no-library", "no-driver", "no-gpu"],
)
def test_no_nvidia_gpu_reads_unknown_and_never_raises(importer: Callable[[], Any]) -> None:
    calls = []

    def counting() -> Any:
        calls.append(1)
        return importer()

    probe = NvmlGpuProbe(importer=counting)
    assert probe.read([NODE]) == UNKNOWN
    assert probe.read([NODE]) == UNKNOWN
    assert len(calls) == 1  # a machine without NVML is not asked again every probe


def test_close_shuts_nvml_down() -> None:
    nvml = FakeNvml([FakeGpu(samples=[])])
    probe = probe_over(nvml)
    probe.read([])
    probe.close()
    assert nvml.shut_down


def test_the_real_gpu_probe_never_raises() -> None:
    reading = NvmlGpuProbe().read([os.getpid()])
    assert reading.busy_by_others in (True, False, None)
    assert reading.temperature_c is None or 0 < reading.temperature_c < 130
