"""Secret files are written whole or not at all, 0600 from the start."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from core.identity.keypair import NodeIdentity
from core.identity.keystore import FileStore
from core.identity.private_file import write_private_file


def test_a_new_file_is_private_and_no_temporary_is_left(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "secret.json"
    write_private_file(target, b"{}")
    assert target.read_bytes() == b"{}"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in target.parent.iterdir()] == ["secret.json"]


def test_a_crash_mid_write_keeps_the_old_key_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FileStore(tmp_path / "node.key")
    old = NodeIdentity.generate()
    store.save(old)
    before = store.path.read_bytes()

    def power_cut(fd: int) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(os, "fsync", power_cut)
    with pytest.raises(OSError, match="disk gone"):
        store.save(NodeIdentity.generate())
    assert store.path.read_bytes() == before  # the old key, not an empty or half file
    loaded = store.load()
    assert loaded is not None and loaded.node_id == old.node_id
    assert [p.name for p in tmp_path.iterdir()] == ["node.key"]  # the temporary is gone
