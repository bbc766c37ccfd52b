"""Hostile archives, built byte for byte (tests only)."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path


def tar_bytes(
    *members: tarfile.TarInfo, data: dict[str, bytes] | None = None, gz: bool = False
) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if gz else "w") as archive:
        for member in members:
            payload = (data or {}).get(member.name)
            if payload is not None:
                member.size = len(payload)
                archive.addfile(member, io.BytesIO(payload))
            else:
                archive.addfile(member)
    return buffer.getvalue()


def file_member(name: str) -> tarfile.TarInfo:
    return tarfile.TarInfo(name)


def link_member(name: str, target: str, *, hard: bool = False) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.LNKTYPE if hard else tarfile.SYMTYPE
    info.linkname = target
    return info


def device_member(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.CHRTYPE
    info.devmajor, info.devminor = 1, 3
    return info


def zip_bytes(files: dict[str, bytes], *, compress: bool = True) -> bytes:
    buffer = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, payload in files.items():
            archive.writestr(name, payload)
    return buffer.getvalue()


def zip_bomb(megabytes: int = 64) -> bytes:
    return zip_bytes({"bomb.bin": b"\0" * (megabytes << 20)})


def many_members(n: int) -> bytes:
    return zip_bytes({f"f{i}.txt": b"x" for i in range(n)})


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
