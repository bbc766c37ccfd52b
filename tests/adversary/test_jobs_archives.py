"""Hostile input archives: whatever their links, nothing under the task folder leads out.

A submitter's archive is unpacked on a contributor's PC; the allow-listed
``selftest`` workload hashes every file of an unpacked input (following links)
and uploads the hashes, so a link that resolves outside the folder tells the
submitter which files exist on that PC and their SHA-256.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from core.errors import ArchiveError
from core.identity.keypair import NodeIdentity
from core.jobs.archives import extract_archive_safely
from core.jobs.client import JobsClient
from core.jobs.credentials import CredentialStore
from core.jobs.loop import ExecutorLoop
from tests.core.jobs.hostile import device_member, file_member, link_member, tar_bytes, write
from tests.core.jobs.tracker_fixture import LiveTracker, live_tracker

__all__ = ["live_tracker"]

# d -> ., e1 -> d/.., e2 -> e1/.., ..., e11 -> e10/..: each target is harmless as text.
CHAIN = [
    link_member("d", "."),
    link_member("e1", "d/.."),
    *[link_member(f"e{i}", f"e{i - 1}/..") for i in range(2, 12)],
    link_member("leak", "e11/etc/hostname"),
]


def _unpack(tmp_path: Path, data: bytes) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    archive = write(tmp_path / "input.bin", data)
    return extract_archive_safely(archive, tmp_path / "box" / "unpacked")


def _leads_out(folder: Path) -> list[str]:
    """Every entry under `folder` whose real path is outside it."""
    real = os.path.realpath(folder)
    out = []
    for parent, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            path = os.path.realpath(os.path.join(parent, name))
            if path != real and not path.startswith(real + os.sep):
                out.append(os.path.relpath(os.path.join(parent, name), folder))
    return out


def _refused_and_contained(tmp_path: Path, data: bytes) -> None:
    """The archive is refused, and whatever it left in its folder leads nowhere, not even
    to the staging folder around it (the refused link itself is gone)."""
    with pytest.raises(ArchiveError, match="leads out"):
        _unpack(tmp_path, data)
    assert _leads_out(tmp_path / "box" / "unpacked") == []


def test_the_link_chain_is_refused(tmp_path: Path) -> None:
    _refused_and_contained(tmp_path, tar_bytes(*CHAIN))


def test_a_link_to_a_folder_outside_through_another_link_is_refused(tmp_path: Path) -> None:
    # b's target "a/.." reads as "." but resolves to the folder's parent.
    _refused_and_contained(tmp_path, tar_bytes(link_member("a", "."), link_member("b", "a/..")))


def test_a_link_made_before_the_link_it_goes_through_is_checked_again(tmp_path: Path) -> None:
    # "up" is made while "a" does not exist yet (so it resolves inside then); "a -> ."
    # made after it turns "up" into the folder's parent.
    data = tar_bytes(link_member("up", "a/.."), link_member("a", "."))
    _refused_and_contained(tmp_path, data)


def test_a_link_and_the_file_that_replaces_it_are_refused(tmp_path: Path) -> None:
    for members in (
        [link_member("x", "."), file_member("x")],
        [file_member("x"), link_member("x", ".")],
    ):
        data = tar_bytes(*members)
        with pytest.raises(ArchiveError, match="appears twice"):
            _unpack(tmp_path / str(len(list(tmp_path.iterdir()))), data)
    assert _leads_out(tmp_path) == []


def test_hard_links_are_copies_of_earlier_files_only(tmp_path: Path) -> None:
    data = tar_bytes(
        file_member("a.txt"), link_member("b.txt", "a.txt", hard=True), data={"a.txt": b"1"}
    )
    root = _unpack(tmp_path / "ok", data)
    assert (root / "b.txt").read_bytes() == b"1"
    assert os.stat(root / "b.txt").st_nlink == 1  # a copy, never a link to anything
    for target in ("/etc/hostname", "d", "missing.txt"):
        hostile = tar_bytes(link_member("d", "."), link_member("h", target, hard=True))
        with pytest.raises(ArchiveError):
            _unpack(tmp_path / target.replace("/", "_"), hostile)
    assert _leads_out(tmp_path) == []


def test_device_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="device"):
        _unpack(tmp_path, tar_bytes(device_member("null")))
    assert not any(p.is_char_device() for p in tmp_path.rglob("*"))


def test_the_selftest_workload_never_hashes_a_file_outside_its_folder(
    live_tracker: LiveTracker, tmp_path: Path
) -> None:
    """Through the real executor: the chain's task fails and no output names the host file."""
    submitter = live_tracker.submitter
    key = submitter.upload_input("chain.tar", tar_bytes(*CHAIN))
    job_id = submitter.submit(inputs={"src": key}, unpack_inputs=["src"], max_attempts=1).json()[
        "job_id"
    ]
    client = JobsClient(
        live_tracker.url, NodeIdentity.generate(), credentials=CredentialStore(tmp_path / "c.json")
    )
    client.register()
    loop = ExecutorLoop(client, workdir_base=tmp_path / "work", poll_seconds=0.1)
    loop.run(idle_exit_s=0)
    shown = live_tracker.wait_for_job(job_id)
    task = shown["tasks"][0]  # type: ignore[index]
    assert shown["state"] == "failed" and "leads out" in task["error"], task
    host_file = Path("/etc/hostname")
    if host_file.is_file():
        secret = hashlib.sha256(host_file.read_bytes()).hexdigest()
        for output in task["outputs"]:
            body = submitter.client.get(
                f"/api/v1/jobs/artifacts/{output['key']}", headers=submitter.auth
            ).content
            assert secret.encode() not in body
