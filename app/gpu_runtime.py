"""The GPU runtime: the CUDA build of torch, downloaded apart from the installer.

The installer carries the CPU torch (a few hundred MB); the CUDA build is several
GB and only useful on a PC with an NVIDIA card, so the wizard offers it there as
a separate download (app/ui/screens/doctor/gpu_box.py). This module is the plain
Python behind that offer, no Qt:

- :func:`download` fetches one file into ``<name>.part`` with progress, stops at
  once when ``cancel`` is set (the part stays), resumes a part with an HTTP
  ``Range`` request (a server that answers 200 instead starts it over), and
  accepts the file only if its size and SHA-256 are the published ones;
- :func:`install` unpacks the wheel (a zip) into ``<data>/gpu-runtime/site``
  beside a ``runtime.json`` that names it; a half-unpacked runtime is never
  used (the folder is renamed into place whole);
- :func:`prepend_to_path` (the node's frozen entry, installers/entry_node.py)
  and :func:`child_pythonpath` (a node child run from source,
  app/node_command.py) put that folder first, so ``import torch`` in the node
  finds the CUDA build. Deleting the ``gpu-runtime`` folder goes back to the CPU.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sys
import threading
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from app.errors import DownloadCancelled, GpuRuntimeError

log = logging.getLogger(__name__)

FOLDER = "gpu-runtime"
MARKER = "runtime.json"
CHUNK = 1 << 20

Progress = Callable[[int, int], None]  # bytes done, bytes in all


@dataclass(frozen=True)
class RuntimeFile:
    """One published runtime file: where it is, how big, its SHA-256."""

    url: str
    size: int
    sha256: str
    name: str  # the wheel's file name, e.g. torch-2.13.0+cu128-cp312-cp312-win_amd64.whl


OFFER = "gpu-runtime.json"  # beside the bundle's executables: the published file


def load_offer(folder: Path) -> RuntimeFile | None:
    """The runtime this build offers (``gpu-runtime.json``: url, size, sha256, name),
    or None when the build carries no offer."""
    try:
        value = json.loads((folder / OFFER).read_text(encoding="utf-8"))
        return RuntimeFile(
            str(value["url"]), int(value["size"]), str(value["sha256"]), str(value["name"])
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def runtime_root(data_dir: Path) -> Path:
    return data_dir / FOLDER


def site_dir(data_dir: Path) -> Path:
    return runtime_root(data_dir) / "site"


def installed(data_dir: Path) -> dict[str, object] | None:
    """The installed runtime's ``runtime.json``, or None when there is none (or half)."""
    marker = runtime_root(data_dir) / MARKER
    if not marker.is_file() or not site_dir(data_dir).is_dir():
        return None
    try:
        value = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def nvidia_present(environ: Mapping[str, str] | None = None) -> bool:
    """An NVIDIA driver is installed: its NVML library is where the driver puts it."""
    env = os.environ if environ is None else environ
    if sys.platform == "win32":
        system = Path(env.get("SystemRoot", r"C:\Windows")) / "System32" / "nvml.dll"
        return system.is_file()
    return shutil.which("nvidia-smi") is not None


def _sha256_of(path: Path) -> hashlib._Hash:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest


def download(
    file: RuntimeFile,
    folder: Path,
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    client: httpx.Client | None = None,
) -> Path:
    """``folder/<name>``, checked; resumes ``folder/<name>.part`` when one is there."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / file.name
    part = folder / (file.name + ".part")
    have = part.stat().st_size if part.is_file() else 0
    if have > file.size:  # not a prefix of this file
        part.unlink()
        have = 0
    own = client is None
    http = client or httpx.Client(timeout=httpx.Timeout(30.0, read=60.0), follow_redirects=True)
    try:
        if have < file.size:
            headers = {"Range": f"bytes={have}-"} if have else {}
            with http.stream("GET", file.url, headers=headers) as reply:
                if reply.status_code == 206 and have:
                    mode = "ab"
                elif reply.status_code == 200:
                    mode, have = "wb", 0  # no Range support: start over
                else:
                    raise GpuRuntimeError(
                        f"the GPU runtime download answered HTTP {reply.status_code}; "
                        "try again later",
                        reason="gpu-runtime-http",
                    )
                with part.open(mode) as out:
                    for block in reply.iter_bytes(CHUNK):
                        if cancel is not None and cancel.is_set():
                            raise DownloadCancelled(
                                "the GPU runtime download was cancelled; "
                                "start it again to go on where it stopped"
                            )
                        out.write(block)
                        have += len(block)
                        if progress is not None:
                            progress(have, file.size)
    except httpx.HTTPError as exc:
        raise GpuRuntimeError(
            f"the GPU runtime download stopped ({exc}); start it again to go on where it stopped",
            reason="gpu-runtime-network",
        ) from exc
    finally:
        if own:
            http.close()
    size = part.stat().st_size
    digest = _sha256_of(part).hexdigest()
    if size != file.size or digest != file.sha256:
        part.unlink()
        raise GpuRuntimeError(
            f"the downloaded GPU runtime is not the published file (SHA-256 {digest[:16]}…, "
            f"{size} bytes); it was deleted: download it again",
            reason="gpu-runtime-checksum",
        )
    part.replace(target)
    return target


def install(wheel: Path, data_dir: Path, file: RuntimeFile) -> Path:
    """Unpack ``wheel`` as the runtime; returns the folder the node puts on sys.path."""
    root = runtime_root(data_dir)
    staging = root / "site.new"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(staging)
    except (zipfile.BadZipFile, OSError) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise GpuRuntimeError(
            f"the GPU runtime could not be unpacked ({exc}); download it again",
            reason="gpu-runtime-unpack",
        ) from exc
    (root / MARKER).unlink(missing_ok=True)  # no marker while the folder is swapped
    shutil.rmtree(site_dir(data_dir), ignore_errors=True)
    staging.replace(site_dir(data_dir))
    marker = {"name": file.name, "sha256": file.sha256, "size": file.size}
    (root / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
    wheel.unlink(missing_ok=True)
    log.info("GPU runtime %s installed in %s", file.name, site_dir(data_dir))
    return site_dir(data_dir)


def prepend_to_path(data_dir: Path, path: list[str] | None = None) -> bool:
    """Put an installed runtime first on ``sys.path`` (before torch is imported)."""
    if installed(data_dir) is None:
        return False
    entries = sys.path if path is None else path
    folder = str(site_dir(data_dir))
    if folder not in entries:
        entries.insert(0, folder)
    return True


def child_pythonpath(env: dict[str, str], data_dir: Path) -> dict[str, str]:
    """``env`` with an installed runtime first on ``PYTHONPATH`` (a node child from source)."""
    if installed(data_dir) is None:
        return env
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    folder = str(site_dir(data_dir))
    env["PYTHONPATH"] = os.pathsep.join([folder, *(p for p in parts if p != folder)])
    return env
