"""Unpack a submitter's archive without letting it touch anything outside its folder.

An input archive comes from whoever submitted the job, so it is treated as
hostile: the format is read from the bytes (zip, tar, tar.gz; never from a
name), every member is checked before a byte is written, and members are
written one by one by this code rather than by ``extractall``:

- no absolute paths, drive letters, backslashes or ``..`` segments;
- regular files and folders only; a symbolic link is recreated only after every
  file is written (so no write ever passes through a link), in the archive's
  order, and only when its target resolves inside the folder *on disk*: the
  real path through every link made before it, not the target's text (a chain
  ``d -> .``, ``e1 -> d/..`` is as far out as ``..``); once all links exist,
  every link under the folder is resolved again, so nothing there leads out;
  a hard link only to an earlier file member, and copied; devices, FIFOs and
  zip entries with special modes are refused;
- caps on the number of members, the bytes actually written (not the sizes the
  headers claim) and the ratio of written bytes to the archive's size, checked
  while writing, so a zip bomb stops at the cap instead of filling the disk.

The caller unpacks into a staging folder and renames the result into place.
"""

from __future__ import annotations

import io
import os
import posixpath
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from core.errors import ArchiveError

DEFAULT_MAX_BYTES = 1 << 30
DEFAULT_MAX_MEMBERS = 10_000
DEFAULT_MAX_RATIO = 200.0
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Limits:
    max_bytes: int = DEFAULT_MAX_BYTES
    max_members: int = DEFAULT_MAX_MEMBERS
    max_ratio: float = DEFAULT_MAX_RATIO


def detect_format(path: Path) -> str:
    """'zip', 'tar' or 'tar.gz', from the first bytes; anything else is refused."""
    with path.open("rb") as handle:
        head = handle.read(512)
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if head[:2] == b"\x1f\x8b":
        return "tar.gz"
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "tar"
    raise ArchiveError("the input is not a zip, tar or tar.gz archive (checked from its bytes)")


def safe_member_path(name: str) -> str:
    """The member's normalised relative path, or ArchiveError."""
    if not name or "\x00" in name or "\\" in name:
        raise ArchiveError(f"member {name!r} has an unusable name")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise ArchiveError(f"member {name!r} is an absolute path")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise ArchiveError(f"member {name!r} climbs out with '..'")
    if not parts:
        return ""
    return "/".join(parts)


class _Writer:
    """Writes members under `root`, enforcing the caps as bytes are written."""

    def __init__(self, root: Path, limits: Limits, archive_size: int) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self.limits = limits
        self.archive_size = max(archive_size, 1)
        self.members = 0
        self.written = 0
        self.files: dict[str, Path] = {}
        self.links: list[tuple[str, str]] = []

    def count(self, name: str) -> None:
        self.members += 1
        if self.members > self.limits.max_members:
            raise ArchiveError(
                f"the archive has more than {self.limits.max_members} members; refusing it"
            )

    def _target(self, rel: str) -> Path:
        target = self.root / rel
        parent = os.path.realpath(target.parent)
        if parent != self.real_root and not parent.startswith(self.real_root + os.sep):
            raise ArchiveError(f"member {rel!r} would be written outside the folder")
        return target

    def directory(self, rel: str) -> None:
        if rel:
            target = self._target(rel)
            target.mkdir(parents=True, exist_ok=True)

    def file(self, rel: str, source: IO[bytes]) -> None:
        if not rel:
            raise ArchiveError("a file member has an empty name")
        (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
        target = self._target(rel)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(target, flags, 0o644)
        except FileExistsError:
            raise ArchiveError(f"member {rel!r} appears twice") from None
        with os.fdopen(fd, "wb") as out:
            while chunk := source.read(_CHUNK):
                self.written += len(chunk)
                self._check_size()
                out.write(chunk)
        self.files[rel] = target

    def _check_size(self) -> None:
        if self.written > self.limits.max_bytes:
            raise ArchiveError(
                f"the archive unpacks to more than {self.limits.max_bytes} bytes; refusing it"
            )
        if self.written > 1 << 20 and self.written / self.archive_size > self.limits.max_ratio:
            raise ArchiveError(
                f"the archive expands more than {self.limits.max_ratio:.0f}x its size "
                "(a zip bomb?); refusing it"
            )

    def hardlink(self, rel: str, link_to: str) -> None:
        source_rel = safe_member_path(link_to)
        if source_rel not in self.files:
            raise ArchiveError(f"hard link {rel!r} points at {link_to!r}, outside the archive")
        with self.files[source_rel].open("rb") as source:
            self.file(rel, source)

    def symlink(self, rel: str, link_to: str) -> None:
        if link_to.startswith("/") or "\\" in link_to:
            raise ArchiveError(f"symbolic link {rel!r} points at absolute {link_to!r}")
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(rel), link_to))
        if resolved == ".." or resolved.startswith("../") or resolved.startswith("/"):
            raise ArchiveError(f"symbolic link {rel!r} leads out of the folder ({link_to!r})")
        self.links.append((rel, link_to))

    def inside(self, path: str | Path) -> bool:
        """Whether `path`, resolved through every link on disk, stays in the folder."""
        real = os.path.realpath(path)
        return real == self.real_root or real.startswith(self.real_root + os.sep)

    def finish_links(self) -> None:
        for rel, link_to in self.links:
            (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
            target = self._target(rel)
            if os.path.lexists(target):
                raise ArchiveError(f"member {rel!r} appears twice")
            os.symlink(link_to, target)
            if not self.inside(target):
                os.unlink(target)  # refused links never stay, not even in a staging folder
                raise ArchiveError(
                    f"symbolic link {rel!r} leads out of the folder through other links "
                    f"({link_to!r})"
                )
        self.check_contained()

    def check_contained(self) -> None:
        """Every link under the folder, resolved on disk now that all exist, stays inside;
        those that lead out are removed before the archive is refused."""
        out = [
            os.path.join(folder, name)
            for folder, dirs, files in os.walk(self.root)
            for name in [*dirs, *files]
            if os.path.islink(os.path.join(folder, name))
            and not self.inside(os.path.join(folder, name))
        ]
        for path in out:
            os.unlink(path)
        if out:
            rel = os.path.relpath(out[0], self.root)
            raise ArchiveError(f"symbolic link {rel!r} leads out of the folder")


def _tar_members(archive: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    while (member := archive.next()) is not None:
        yield member


def _extract_tar(path: Path, writer: _Writer, compressed: bool) -> None:
    with tarfile.open(path, mode="r|gz" if compressed else "r|") as archive:
        for member in _tar_members(archive):
            writer.count(member.name)
            rel = safe_member_path(member.name)
            if member.isdir():
                writer.directory(rel)
            elif member.isreg():
                source = archive.extractfile(member)
                writer.file(rel, source if source is not None else io.BytesIO())
            elif member.issym():
                writer.symlink(rel, member.linkname)
            elif member.islnk():
                writer.hardlink(rel, member.linkname)
            else:
                raise ArchiveError(
                    f"member {member.name!r} is a device, FIFO or other special file; refusing it"
                )


def _extract_zip(path: Path, writer: _Writer) -> None:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise ArchiveError(f"the zip archive is damaged: {exc}") from exc
    with archive:
        infos = archive.infolist()
        if len(infos) > writer.limits.max_members:
            raise ArchiveError(
                f"the archive has {len(infos)} members, more than {writer.limits.max_members}"
            )
        for info in infos:
            writer.count(info.filename)
            rel = safe_member_path(info.filename)
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if info.is_dir():
                writer.directory(rel)
            elif kind not in (0, stat.S_IFREG):
                raise ArchiveError(
                    f"member {info.filename!r} is a link or special file; zip inputs "
                    "may hold only files and folders"
                )
            else:
                with archive.open(info) as source:
                    writer.file(rel, source)


def extract_archive_safely(
    archive: Path,
    dest: Path,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_members: int = DEFAULT_MAX_MEMBERS,
    max_ratio: float = DEFAULT_MAX_RATIO,
) -> Path:
    """Unpack `archive` into the empty folder `dest`; return its content root.

    The content root is `dest`, or the single folder inside it when the archive
    wraps everything in one (GitHub's ``owner-repo-<sha>/``).
    """
    dest.mkdir(parents=True, exist_ok=False)
    limits = Limits(max_bytes=max_bytes, max_members=max_members, max_ratio=max_ratio)
    writer = _Writer(dest, limits, archive.stat().st_size)
    kind = detect_format(archive)
    try:
        if kind == "zip":
            _extract_zip(archive, writer)
        else:
            _extract_tar(archive, writer, compressed=kind == "tar.gz")
        writer.finish_links()
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
        raise ArchiveError(f"the {kind} archive cannot be read: {exc}") from exc
    entries = list(dest.iterdir())
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        return entries[0]
    return dest
