"""A fake pynvml module and GPUs, for the GPU probe without an NVIDIA GPU."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from app.probes.gpu import NvmlGpuProbe

# --- GPU (NVML) ----------------------------------------------------------------


class NVMLError(Exception):
    def __init__(self, message: str = "", value: int = 999) -> None:
        super().__init__(message)
        self.value = value


class NVMLError_NotFound(NVMLError):
    pass


class NVMLError_NotSupported(NVMLError):
    pass


@dataclass
class Sample:
    pid: int
    timeStamp: int
    smUtil: int


@dataclass
class FakeGpu:
    temperature: float = 60.0
    samples: list[Sample] | None = None  # None: per-process utilisation not supported
    utilisation: int = 0
    processes: tuple[int, ...] = ()
    temperature_fails: bool = False
    empty_raises_success: bool = False  # what pynvml does when the driver returns 0 samples


class FakeNvml:
    """The part of pynvml the probe calls, over a list of fake GPUs."""

    NVML_TEMPERATURE_GPU = 0
    NVML_SUCCESS = 0
    NVMLError = NVMLError
    NVMLError_NotFound = NVMLError_NotFound

    def __init__(self, gpus: list[FakeGpu], init_error: Exception | None = None) -> None:
        self.gpus = gpus
        self.init_error = init_error
        self.asked_since: list[int] = []
        self.shut_down = False

    def nvmlInit(self) -> None:
        if self.init_error is not None:
            raise self.init_error

    def nvmlShutdown(self) -> None:
        self.shut_down = True

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeGpu:
        return self.gpus[index]

    def nvmlDeviceGetTemperature(self, gpu: FakeGpu, sensor: int) -> float:
        assert sensor == self.NVML_TEMPERATURE_GPU
        if gpu.temperature_fails:
            raise NVMLError_NotSupported("no sensor")
        return gpu.temperature

    def nvmlDeviceGetProcessUtilization(self, gpu: FakeGpu, since: int) -> list[Sample]:
        self.asked_since.append(since)
        if gpu.samples is None:
            raise NVMLError_NotSupported("not supported")
        fresh = [s for s in gpu.samples if s.timeStamp > since]
        if not fresh and gpu.empty_raises_success:
            raise NVMLError("Success", value=self.NVML_SUCCESS)
        if not fresh:
            raise NVMLError_NotFound("no samples")
        return fresh

    def nvmlDeviceGetComputeRunningProcesses(self, gpu: FakeGpu) -> list[Any]:
        return [SimpleNamespace(pid=pid) for pid in gpu.processes]

    def nvmlDeviceGetGraphicsRunningProcesses(self, gpu: FakeGpu) -> list[Any]:
        return []

    def nvmlDeviceGetUtilizationRates(self, gpu: FakeGpu) -> Any:
        return SimpleNamespace(gpu=gpu.utilisation, memory=0)


NODE, GAME, APP = 5000, 4000, 3000


def probe_over(nvml: FakeNvml) -> NvmlGpuProbe:
    return NvmlGpuProbe(importer=lambda: nvml, own_pid=APP)  # type: ignore[arg-type,return-value]
