"""Key files are created 0600 and refused, with the fix in the sentence, when
other users can read them (whoever read one can already act as its owner)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from core.errors import IdentityError
from core.identity.keypair import NodeIdentity
from core.identity.keystore import FileStore
from tracker_service.domain.keys import KeyFileExposed, TrackerKey

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")


def test_a_node_identity_file_is_created_0600_and_refused_once_others_can_read_it(
    tmp_path: Path,
) -> None:
    store = FileStore(tmp_path / "node.pem")
    store.save(NodeIdentity.generate())
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert store.load() is not None
    store.path.chmod(0o644)
    with pytest.raises(IdentityError) as caught:
        store.load()
    assert caught.value.reason == "key-file-exposed" and "chmod 600" in str(caught.value)


def test_the_tracker_key_is_created_0600_and_refused_once_others_can_read_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tracker_key"
    TrackerKey.load_or_create(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.chmod(0o640)
    with pytest.raises(KeyFileExposed):
        TrackerKey.load_or_create(path)


def test_the_tracker_command_states_an_exposed_key_in_one_sentence(tmp_path: Path) -> None:
    home = tmp_path / "home"
    key = home / "tracker" / "tracker_key"
    TrackerKey.load_or_create(key)
    key.chmod(0o644)
    env = dict(os.environ, PYTHONPATH=str(REPO), MESHNET_HOME=str(home))
    done = subprocess.run(
        [sys.executable, "-m", "tracker_service.cli", "serve", "--port", "0"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "[key-file-exposed]" in done.stderr and "Traceback" not in done.stderr
