"""The executor's session credential per tracker: keyring first, 0600 file fallback."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from core.jobs.credentials import CredentialStore
from tests.core.keyring_backend import DictKeyring


def test_without_a_keyring_the_credential_goes_to_a_0600_file(
    tmp_path: Path, no_keyring: None
) -> None:
    store = CredentialStore()
    assert not store.use_keyring
    store.save("http://t:1/", "mne_a")
    store.save("http://other:2", "mne_b")
    assert store.load("http://t:1") == "mne_a" and store.load("http://other:2/") == "mne_b"
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600


def test_with_a_keyring_the_credential_lives_there(
    tmp_path: Path, dict_keyring: DictKeyring
) -> None:
    store = CredentialStore()
    assert store.use_keyring
    store.save("http://t:1/", "mne_a")
    assert dict_keyring.entries[("meshnet-jobs", "http://t:1")] == "mne_a"
    assert store.clear("http://t:1") and store.load("http://t:1") is None


def test_a_path_override_uses_the_file_and_logout_clears_it(
    tmp_path: Path, dict_keyring: DictKeyring
) -> None:
    store = CredentialStore(tmp_path / "creds.json")
    assert not store.use_keyring
    store.save("http://t:1", "mne_a")
    assert store.clear("http://t:1") and not store.clear("http://t:1")
    assert store.load("http://t:1") is None


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"http://t:1": 5}'])
def test_a_corrupt_file_reads_as_empty(tmp_path: Path, content: str) -> None:
    path = tmp_path / "creds.json"
    path.write_text(content)
    assert CredentialStore(path).load("http://t:1") is None
