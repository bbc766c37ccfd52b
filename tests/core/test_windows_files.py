"""Windows data folder, owner-only key files (icacls) and Credential Manager, against fakes."""

from __future__ import annotations

from pathlib import Path, PureWindowsPath

import keyring
import pytest
from keyring.backends import chainer

from core.errors import AclError, IdentityError
from core.identity import keystore
from core.identity.keypair import NodeIdentity
from core.identity.keystore import (
    FileStore,
    KeyringStore,
    _warn_if_readable_by_others,
    active_backend,
)
from core.identity.private_file import write_private_file
from core.identity.windows_acl import (
    current_user,
    others_with_access,
    owner_only_command,
    parse_icacls,
    restrict_to_owner,
)
from core.paths import platform_data_home, windows_data_home
from tests.core.keyring_backend import DictKeyring

USER_ENV = {"USERNAME": "ada", "USERDOMAIN": "GAMINGPC"}


def test_windows_data_lives_under_local_appdata() -> None:
    env = {"LOCALAPPDATA": r"C:\Users\Ada\AppData\Local"}
    assert windows_data_home(env) == PureWindowsPath(r"C:\Users\Ada\AppData\Local\MeshNet")
    assert platform_data_home("win32", env) == r"C:\Users\Ada\AppData\Local\MeshNet"
    no_local = {"USERPROFILE": r"C:\Users\Ada"}
    assert str(windows_data_home(no_local)) == r"C:\Users\Ada\AppData\Local\MeshNet"


def test_meshnet_home_overrides_every_platform() -> None:
    env = {"MESHNET_HOME": "/tmp/x", "LOCALAPPDATA": r"C:\L"}
    assert platform_data_home("win32", env) == "/tmp/x"
    assert platform_data_home("linux", {"MESHNET_HOME": "/tmp/y"}) == "/tmp/y"


def test_the_owner_only_command_drops_inherited_and_other_entries() -> None:
    assert owner_only_command(r"C:\k\node.pem", r"GAMINGPC\ada") == [
        "icacls",
        r"C:\k\node.pem",
        "/inheritance:r",
        "/grant:r",
        r"GAMINGPC\ada:(F)",
        "/q",
    ]
    assert current_user({"USERNAME": "ada"}) == "ada"
    with pytest.raises(AclError):
        current_user({})


class FakeIcacls:
    """Records each icacls run and answers with the listing it is given."""

    def __init__(self, listing: str = "", fail: bool = False) -> None:
        self.runs: list[list[str]] = []
        self.listing = listing
        self.fail = fail

    def __call__(self, argv: list[str]) -> str:
        self.runs.append(argv)
        if self.fail:
            raise AclError("icacls failed")
        return self.listing


def test_a_windows_secret_is_made_owner_only_before_its_bytes_are_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("USERNAME", "ada")
    monkeypatch.setenv("USERDOMAIN", "GAMINGPC")
    target = tmp_path / "keys" / "default.pem"
    sizes: list[int] = []

    def icacls(argv: list[str]) -> str:
        sizes.append(Path(argv[1]).stat().st_size)  # the temporary, still empty
        return FakeIcacls()(argv)

    write_private_file(target, b"secret", platform="win32", run_acl=icacls)
    assert sizes == [0]
    assert target.read_bytes() == b"secret"


def test_a_refused_acl_leaves_no_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("USERNAME", "ada")
    target = tmp_path / "node.pem"
    with pytest.raises(AclError):
        write_private_file(target, b"secret", platform="win32", run_acl=FakeIcacls(fail=True))
    assert list(tmp_path.iterdir()) == []


LISTING = (
    "C:\\keys\\node.pem GAMINGPC\\ada:(F)\n"
    "                  NT AUTHORITY\\SYSTEM:(I)(F)\n"
    "                  BUILTIN\\Users:(I)(RX)\n"
    "\n"
    "Successfully processed 1 files; Failed processing 0 files\n"
)


def test_icacls_output_is_read_entry_by_entry() -> None:
    assert parse_icacls(LISTING, r"C:\keys\node.pem") == [
        (r"GAMINGPC\ada", "(F)"),
        (r"NT AUTHORITY\SYSTEM", "(I)(F)"),
        (r"BUILTIN\Users", "(I)(RX)"),
    ]
    assert others_with_access(r"C:\keys\node.pem", USER_ENV, FakeIcacls(LISTING)) == [
        r"BUILTIN\Users"
    ]


def test_a_windows_key_file_others_can_read_is_refused_with_the_fix() -> None:
    with pytest.raises(IdentityError) as caught:
        _warn_if_readable_by_others(
            Path(r"C:\keys\node.pem"), platform="win32", environ=USER_ENV, run=FakeIcacls(LISTING)
        )
    assert caught.value.reason == "key-file-exposed"
    assert "BUILTIN\\Users" in str(caught.value) and "icacls" in str(caught.value)


def test_an_owner_only_windows_key_file_is_accepted_and_an_unreadable_list_is_logged() -> None:
    owner_only = "C:\\keys\\node.pem GAMINGPC\\ada:(F)\n\nSuccessfully processed 1 files\n"
    path = Path(r"C:\keys\node.pem")
    _warn_if_readable_by_others(
        path, platform="win32", environ=USER_ENV, run=FakeIcacls(owner_only)
    )
    _warn_if_readable_by_others(path, platform="win32", environ=USER_ENV, run=FakeIcacls(fail=True))


def test_restrict_to_owner_runs_the_owner_only_command() -> None:
    fake = FakeIcacls()
    restrict_to_owner(r"C:\k.pem", USER_ENV, fake)
    assert fake.runs == [owner_only_command(r"C:\k.pem", r"GAMINGPC\ada")]


def test_windows_asks_for_credential_manager_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    vault = DictKeyring()  # the stand-in for WinVaultKeyring on this OS
    monkeypatch.setattr(keystore, "windows_vault", lambda: vault)
    previous = keyring.get_keyring()
    keyring.set_keyring(chainer.ChainerBackend())  # keyring's own discovery, as on a fresh PC
    try:
        assert active_backend("win32") is vault
        assert active_backend("linux") is not vault
        monkeypatch.setattr(keystore.sys, "platform", "win32")
        identity = NodeIdentity.generate()
        KeyringStore("gamer").save(identity)
        assert vault.get_password("meshnet", "node:gamer") is not None
        loaded = KeyringStore("gamer").load()
        assert loaded is not None and loaded.node_id == identity.node_id
    finally:
        keyring.set_keyring(previous)


def test_an_explicitly_chosen_keyring_wins_on_windows(dict_keyring: DictKeyring) -> None:
    assert active_backend("win32") is dict_keyring


def test_windows_vault_is_unavailable_off_windows() -> None:
    assert keystore.windows_vault() is None


def test_file_store_on_windows_is_written_owner_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import core.identity.private_file as private_file

    runs: list[list[str]] = []
    monkeypatch.setattr(private_file.sys, "platform", "win32")
    monkeypatch.setattr(private_file, "run_icacls", lambda argv: runs.append(argv) or "")
    monkeypatch.setenv("USERNAME", "ada")
    monkeypatch.delenv("USERDOMAIN", raising=False)
    FileStore(tmp_path / "node.pem").save(NodeIdentity.generate())
    assert len(runs) == 1 and runs[0][-2] == "ada:(F)"
