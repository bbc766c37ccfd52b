"""The wizard's offer of the GPU runtime on a PC with an NVIDIA card.

The installer carries the CPU build of torch; the CUDA build is several GB, so
it is a separate download the contributor chooses (app/gpu_runtime.py does the
work in a thread: progress, Cancel, resume, checksum, unpack). The box sits on
the hardware page and is shown only when the PC has an NVIDIA driver, this
build names a published runtime (``gpu-runtime.json`` beside the programs) and
none is installed yet.

Its sentences are not in the translated catalogue (app/texts.py) yet.
"""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QPushButton, QVBoxLayout, QWidget

from app import gpu_runtime
from app.errors import DownloadCancelled, GpuRuntimeError
from app.gpu_runtime import RuntimeFile
from app.ui.widgets.labels import wrapping_label

OFFER = (
    "This computer has an NVIDIA graphics card. MeshNet can use it once its GPU "
    "runtime ({size}) is downloaded; until then it uses the processor."
)
DOWNLOADING = "Downloading the GPU runtime: {done} of {size}."
CANCELLED = "Stopped. Download again to go on where it stopped."
INSTALLED = "The GPU runtime is installed. MeshNet uses the graphics card from its next start."


def _gb(value: int) -> str:
    return f"{value / 1e9:.1f} GB"


class GpuRuntimeBox(QWidget):
    progressed = Signal(int, int)
    ended = Signal(str, bool)  # sentence, installed

    def __init__(self, offer: RuntimeFile, data_dir: Path) -> None:
        super().__init__()
        self.offer = offer
        self.data_dir = data_dir
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 8, 0, 0)
        self.status = wrapping_label(OFFER.format(size=_gb(offer.size)))
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setVisible(False)
        self.download_button = QPushButton("Download the GPU runtime")
        self.cancel_button = QPushButton("Cancel download")
        self.cancel_button.setVisible(False)
        self.download_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.download_button)
        buttons.addWidget(self.cancel_button)
        layout.addWidget(self.status)
        layout.addWidget(self.progress)
        layout.addLayout(buttons)
        self.progressed.connect(self._show_progress)
        self.ended.connect(self._show_end)

    @classmethod
    def offered(cls, bundle_dir: Path, data_dir: Path) -> GpuRuntimeBox | None:
        offer = gpu_runtime.load_offer(bundle_dir)
        if offer is None or not gpu_runtime.nvidia_present():
            return None
        if gpu_runtime.installed(data_dir) is not None:
            return None
        return cls(offer, data_dir)

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if self.busy:
            return
        self._cancel.clear()
        self.download_button.setVisible(False)
        self.cancel_button.setVisible(True)
        self.progress.setVisible(True)
        self._thread = threading.Thread(target=self._work, name="gpu-runtime", daemon=True)
        self._thread.start()

    def cancel(self) -> None:
        self._cancel.set()

    def wait(self, timeout_s: float) -> None:
        if self._thread is not None:
            self._thread.join(timeout_s)

    def _work(self) -> None:  # in the download thread: only signals cross to the GUI
        folder = gpu_runtime.runtime_root(self.data_dir) / "download"
        try:
            wheel = gpu_runtime.download(
                self.offer, folder, progress=self.progressed.emit, cancel=self._cancel
            )
            gpu_runtime.install(wheel, self.data_dir, self.offer)
        except DownloadCancelled:
            self.ended.emit(CANCELLED, False)
        except GpuRuntimeError as exc:
            self.ended.emit(str(exc), False)
        else:
            self.ended.emit(INSTALLED, True)

    def _show_progress(self, done: int, total: int) -> None:
        self.progress.setValue(int(1000 * done / max(total, 1)))
        self.status.setText(DOWNLOADING.format(done=_gb(done), size=_gb(total)))

    def _show_end(self, sentence: str, installed: bool) -> None:
        self.status.setText(sentence)
        self.cancel_button.setVisible(False)
        self.download_button.setVisible(not installed)
        self.download_button.setText("Download again")
        self.progress.setVisible(not installed and self.progress.value() > 0)
