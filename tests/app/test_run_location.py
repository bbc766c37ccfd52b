"""The app refuses to run where its node cannot write or is missing, with a sentence."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.run_location import (
    REASON_DATA_NOT_WRITABLE,
    REASON_NODE_MISSING,
    can_write,
    run_location_problem,
)


def test_a_writable_data_folder_and_a_present_node_run(tmp_path: Path) -> None:
    node = tmp_path / "meshnet-node.exe"
    node.write_bytes(b"MZ")
    assert run_location_problem(data_dir=tmp_path / "data", frozen=True, node_program=node) is None
    assert (tmp_path / "data").is_dir() and list((tmp_path / "data").iterdir()) == []


def test_a_data_folder_that_takes_no_file_is_refused_with_what_to_do(tmp_path: Path) -> None:
    problem = run_location_problem(data_dir=tmp_path, frozen=False, writable=lambda _: False)
    assert problem is not None and problem.reason == REASON_DATA_NOT_WRITABLE
    assert str(tmp_path) in problem.sentence and "MESHNET_HOME" in problem.sentence


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes anywhere")
def test_a_read_only_folder_cannot_be_written(tmp_path: Path) -> None:
    tmp_path.chmod(0o500)
    try:
        assert not can_write(tmp_path)
    finally:
        tmp_path.chmod(0o700)


def test_a_folder_under_a_file_cannot_be_written(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    assert not can_write(blocker / "data")
    assert can_write(tmp_path / "fresh")


def test_a_frozen_app_without_its_node_beside_it_says_to_extract_the_folder(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "Temp1_MeshNet.zip" / "meshnet-node.exe"
    problem = run_location_problem(data_dir=tmp_path, frozen=True, node_program=missing)
    assert problem is not None and problem.reason == REASON_NODE_MISSING
    assert ".zip" in problem.sentence and "extract" in problem.sentence
    # from source there is no separate node program to look for
    assert run_location_problem(data_dir=tmp_path, frozen=False, node_program=missing) is None
