"""The GPU runtime download against a stand-in HTTP server on loopback: progress,
Cancel, resume with Range, the checksum, and the node finding what was installed."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import gpu_runtime
from app.errors import DownloadCancelled, GpuRuntimeError
from app.gpu_runtime import RuntimeFile
from tests.support.range_server import Served, serving

WHEEL = "torch-0.0.0+cu128-cp312-cp312-win_amd64.whl"


@pytest.fixture
def wheel_bytes(tmp_path: Path) -> bytes:
    """A wheel-shaped zip: a package the node would import, and incompressible ballast."""
    path = tmp_path / "built.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("meshnet_cuda_probe/__init__.py", "BUILD = 'cu128'\n")
        archive.writestr("meshnet_cuda_probe/lib/ballast.bin", os.urandom(5 << 20))
    return path.read_bytes()


@pytest.fixture
def server(wheel_bytes: bytes) -> Iterator[tuple[Served, str]]:
    with serving(wheel_bytes, WHEEL) as running:
        yield running


def _file(url: str, body: bytes, sha256: str | None = None) -> RuntimeFile:
    return RuntimeFile(url, len(body), sha256 or hashlib.sha256(body).hexdigest(), WHEEL)


def test_cancel_keeps_the_part_and_the_next_start_resumes_with_range(
    server: tuple[Served, str], tmp_path: Path
) -> None:
    served, url = server
    file = _file(url, served.body)
    cancel = threading.Event()
    seen: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        if done >= 2 << 20:
            cancel.set()  # the user pressed Cancel two megabytes in

    with pytest.raises(DownloadCancelled):
        gpu_runtime.download(file, tmp_path, progress=progress, cancel=cancel)
    part = tmp_path / (WHEEL + ".part")
    kept = part.stat().st_size
    assert 2 << 20 <= kept < len(served.body)
    assert not (tmp_path / WHEEL).exists()

    seen.clear()
    done = gpu_runtime.download(file, tmp_path, progress=progress)
    assert done.read_bytes() == served.body and not part.exists()
    assert served.ranges == [None, f"bytes={kept}-"]
    assert seen[0][0] > kept and seen[-1] == (len(served.body), len(served.body))


def test_a_server_without_range_support_starts_the_file_over(
    server: tuple[Served, str], tmp_path: Path
) -> None:
    served, url = server
    served.honour_range = False
    (tmp_path / (WHEEL + ".part")).write_bytes(served.body[:1000])
    done = gpu_runtime.download(_file(url, served.body), tmp_path)
    assert done.read_bytes() == served.body


def test_a_file_that_is_not_the_published_one_is_deleted_and_refused(
    server: tuple[Served, str], tmp_path: Path
) -> None:
    served, url = server
    folder = tmp_path / "downloads"
    with pytest.raises(GpuRuntimeError) as caught:
        gpu_runtime.download(_file(url, served.body, sha256="0" * 64), folder)
    assert caught.value.reason == "gpu-runtime-checksum"
    assert list(folder.iterdir()) == []


def test_the_installed_runtime_comes_first_for_the_node(
    server: tuple[Served, str], tmp_path: Path
) -> None:
    served, url = server
    data = tmp_path / "MeshNet"
    file = _file(url, served.body)
    assert gpu_runtime.installed(data) is None
    wheel = gpu_runtime.download(file, data / "downloads")
    site = gpu_runtime.install(wheel, data, file)
    assert gpu_runtime.installed(data) == {"name": WHEEL, "sha256": file.sha256, "size": file.size}
    assert not wheel.exists()  # the download is not kept twice

    path = ["/bundle/_internal"]
    assert gpu_runtime.prepend_to_path(data, path) is True
    assert path == [str(site), "/bundle/_internal"]
    env = gpu_runtime.child_pythonpath({"PYTHONPATH": "/repo"}, data)
    found = subprocess.run(
        [sys.executable, "-c", "import meshnet_cuda_probe as m; print(m.BUILD, m.__file__)"],
        env={**os.environ, **env}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert found.stdout.startswith("cu128 " + str(site))

    (data / "gpu-runtime" / "runtime.json").unlink()  # half-installed: never used
    assert gpu_runtime.prepend_to_path(data, ["/x"]) is False
    assert gpu_runtime.child_pythonpath({"PYTHONPATH": "/repo"}, data) == {"PYTHONPATH": "/repo"}
