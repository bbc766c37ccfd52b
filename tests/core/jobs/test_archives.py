"""Unpacking submitter archives: hostile ones are refused, nothing lands outside."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.errors import ArchiveError
from core.jobs.archives import detect_format, extract_archive_safely
from tests.core.jobs.hostile import (
    device_member,
    file_member,
    link_member,
    many_members,
    tar_bytes,
    write,
    zip_bomb,
    zip_bytes,
)


def _unpack(tmp_path: Path, data: bytes, **limits: int) -> Path:
    archive = write(tmp_path / "input.bin", data)
    return extract_archive_safely(archive, tmp_path / "box" / "unpacked", **limits)


def _outside(tmp_path: Path) -> list[Path]:
    """Everything written outside the extraction folder (besides the archive)."""
    return [
        p
        for p in tmp_path.rglob("*")
        if "box" not in p.relative_to(tmp_path).parts and p.name != "input.bin"
    ]


def test_a_plain_tar_gz_unpacks_and_its_single_wrapper_folder_is_stripped(tmp_path: Path) -> None:
    data = tar_bytes(
        file_member("repo-abc/train.py"),
        file_member("repo-abc/data/x.txt"),
        data={"repo-abc/train.py": b"print(1)", "repo-abc/data/x.txt": b"x"},
        gz=True,
    )
    root = _unpack(tmp_path, data)
    assert root.name == "repo-abc"
    assert (root / "train.py").read_bytes() == b"print(1)"


def test_the_format_comes_from_the_bytes_not_the_name(tmp_path: Path) -> None:
    tar = write(tmp_path / "looks.zip", tar_bytes(file_member("a"), data={"a": b"1"}))
    assert detect_format(tar) == "tar"
    junk = write(tmp_path / "data.tar.gz", b"just some text, not an archive" * 40)
    with pytest.raises(ArchiveError, match=r"not a zip, tar or tar\.gz"):
        detect_format(junk)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (zip_bytes({"../../evil.txt": b"x"}), "climbs out"),
        (tar_bytes(file_member("../evil.txt"), data={"../evil.txt": b"x"}), "climbs out"),
        (tar_bytes(file_member("/tmp/evil.txt"), data={"/tmp/evil.txt": b"x"}), "absolute"),
        (zip_bytes({"/etc/evil": b"x"}), "absolute"),
        (tar_bytes(link_member("escape", "../../..")), "leads out"),
        (tar_bytes(link_member("abs", "/etc/passwd")), "absolute"),
        (tar_bytes(link_member("hard", "/etc/passwd", hard=True)), "absolute"),
        (tar_bytes(link_member("hard", "never/seen.txt", hard=True)), "outside the archive"),
        (tar_bytes(link_member("hard", "../outside.txt", hard=True)), "climbs out"),
        (tar_bytes(device_member("null")), "device"),
    ],
    ids=[
        "zip-slip",
        "tar-slip",
        "tar-absolute",
        "zip-absolute",
        "symlink-out",
        "symlink-absolute",
        "hardlink-absolute",
        "hardlink-unknown",
        "hardlink-out",
        "device",
    ],
)
def test_hostile_members_are_refused_and_nothing_is_written_outside(
    tmp_path: Path, data: bytes, reason: str
) -> None:
    with pytest.raises(ArchiveError, match=reason):
        _unpack(tmp_path, data)
    assert _outside(tmp_path) == []


def test_a_write_through_an_earlier_symlink_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "target"
    outside.mkdir()
    data = tar_bytes(
        link_member("dir", "."),
        file_member("dir/../../target/owned.txt"),
        data={"dir/../../target/owned.txt": b"x"},
    )
    with pytest.raises(ArchiveError):
        _unpack(tmp_path, data)
    assert not (outside / "owned.txt").exists()


def test_a_symlink_that_stays_inside_is_kept(tmp_path: Path) -> None:
    data = tar_bytes(
        file_member("a/real.txt"), link_member("b", "a/real.txt"), data={"a/real.txt": b"hi"}
    )
    root = _unpack(tmp_path, data)
    assert (root / "b").is_symlink() and (root / "b").read_bytes() == b"hi"


def test_a_zip_bomb_stops_at_the_ratio_cap(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="expands more than"):
        _unpack(tmp_path, zip_bomb(64))


def test_the_byte_cap_counts_written_bytes(tmp_path: Path) -> None:
    data = zip_bytes({"big.bin": os.urandom(300_000)}, compress=False)
    with pytest.raises(ArchiveError, match="more than 100000 bytes"):
        _unpack(tmp_path, data, max_bytes=100_000)


def test_too_many_members_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="more than 50"):
        _unpack(tmp_path, many_members(60), max_members=50)


def test_a_duplicate_member_is_refused(tmp_path: Path) -> None:
    data = tar_bytes(file_member("a"), file_member("a"), data={"a": b"1"})
    with pytest.raises(ArchiveError, match="appears twice"):
        _unpack(tmp_path, data)
