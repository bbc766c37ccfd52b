"""The wizard's GPU runtime offer: shown only where it applies; Download shows
progress, Cancel stops and keeps the part, Download again resumes and installs."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import zipfile
from pathlib import Path
from typing import Any

import pytest

from app import gpu_runtime
from app.gpu_runtime import RuntimeFile
from app.ui.screens.doctor.gpu_box import CANCELLED, INSTALLED, GpuRuntimeBox
from tests.support.range_server import serving

WHEEL = "torch-0.0.0+cu128-cp312-cp312-win_amd64.whl"


def _wheel(tmp_path: Path) -> bytes:
    path = tmp_path / "built.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("meshnet_cuda_probe/__init__.py", "BUILD = 'cu128'\n")
        archive.writestr("meshnet_cuda_probe/ballast.bin", os.urandom(6 << 20))
    return path.read_bytes()


def _offer(folder: Path, url: str, body: bytes) -> RuntimeFile:
    value = {"url": url, "size": len(body), "sha256": hashlib.sha256(body).hexdigest()}
    (folder / gpu_runtime.OFFER).write_text(json.dumps({**value, "name": WHEEL}))
    offer = gpu_runtime.load_offer(folder)
    assert offer is not None
    return offer


def test_the_offer_needs_an_nvidia_driver_a_published_file_and_no_runtime_yet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle, data = tmp_path / "bundle", tmp_path / "data"
    bundle.mkdir()
    monkeypatch.setattr(gpu_runtime, "nvidia_present", lambda environ=None: True)
    assert GpuRuntimeBox.offered(bundle, data) is None  # this build names no runtime
    _offer(bundle, "http://127.0.0.1:9/x.whl", b"x")
    assert GpuRuntimeBox.offered(bundle, data) is not None
    monkeypatch.setattr(gpu_runtime, "nvidia_present", lambda environ=None: False)
    assert GpuRuntimeBox.offered(bundle, data) is None  # no NVIDIA card


def test_download_cancel_and_resume_in_the_wizard(qtbot: Any, tmp_path: Path) -> None:
    body = _wheel(tmp_path)
    data = tmp_path / "data"
    with serving(body, WHEEL) as (served, url):
        box = GpuRuntimeBox(_offer(tmp_path, url, body), data)
        qtbot.addWidget(box)
        first_block = threading.Event()
        box.progressed.connect(lambda done, total: first_block.set())

        real_download = gpu_runtime.download

        def slow_first_run(*args: Any, **kwargs: Any) -> Path:
            def progress(done: int, total: int) -> None:
                kwargs_progress(done, total)
                if done >= 2 << 20:
                    box.cancel()  # as the Cancel button does, two megabytes in

            kwargs_progress = kwargs["progress"]
            kwargs["progress"] = progress
            return real_download(*args, **kwargs)

        gpu_runtime.download = slow_first_run
        try:
            box.start()
            qtbot.waitUntil(lambda: box.status.text() == CANCELLED, timeout=30_000)
        finally:
            gpu_runtime.download = real_download
        assert 0 < box.progress.value() < 1000
        assert box.download_button.isVisibleTo(box) and not box.cancel_button.isVisibleTo(box)
        assert gpu_runtime.installed(data) is None

        box.download_button.click()
        qtbot.waitUntil(lambda: box.status.text() == INSTALLED, timeout=30_000)
        box.wait(5)
    assert served.ranges[0] is None and (served.ranges[1] or "").startswith("bytes=")
    assert gpu_runtime.installed(data) is not None
    assert (gpu_runtime.site_dir(data) / "meshnet_cuda_probe" / "__init__.py").is_file()
    assert not box.download_button.isVisibleTo(box)
