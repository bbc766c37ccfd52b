"""Node identity: key pair in the OS keyring (per profile), file fallback, node id."""

from __future__ import annotations

import hashlib
import logging
import stat
from pathlib import Path

import keyring
import pytest
from keyring.backends import chainer

from app.cli.node import main as node_main
from core.errors import IdentityError, MeshnetError
from core.identity.keypair import NodeIdentity, node_id_for, verify
from core.identity.keystore import (
    KEYRING_SERVICE,
    keyring_problem,
    load_or_create_identity,
    rotate_identity,
)
from tests.core.keyring_backend import DictKeyring


def test_node_id_is_first_32_hex_of_sha256_of_raw_public_key() -> None:
    identity = NodeIdentity.from_seed(bytes(range(32)))
    expected = hashlib.sha256(identity.public_key_raw).hexdigest()[:32]
    assert identity.node_id == expected
    assert len(identity.public_key_raw) == 32


def test_node_id_for_rejects_a_key_of_the_wrong_length() -> None:
    with pytest.raises(IdentityError) as info:
        node_id_for(b"\x01" * 31)
    assert "31" in str(info.value)


def test_seed_round_trips_to_the_same_identity() -> None:
    identity = NodeIdentity.generate()
    again = NodeIdentity.from_seed(identity.seed)
    assert again.node_id == identity.node_id


def test_signature_verifies_and_fails_on_changed_message_or_key() -> None:
    identity = NodeIdentity.from_seed(b"\x07" * 32)
    other = NodeIdentity.from_seed(b"\x08" * 32)
    signature = identity.sign_b64(b"hello")
    assert verify(identity.public_key_b64, b"hello", signature)
    assert verify(identity.public_key_raw, b"hello", identity.sign(b"hello"))
    assert not verify(identity.public_key_b64, b"hello!", signature)
    assert not verify(other.public_key_b64, b"hello", signature)


def test_verify_returns_false_on_malformed_key_or_signature() -> None:
    identity = NodeIdentity.from_seed(b"\x07" * 32)
    signature = identity.sign_b64(b"x")
    assert not verify("not base64!!", b"x", signature)
    assert not verify(identity.public_key_b64, b"x", "AAAA")
    assert not verify(identity.public_key_b64, b"x", "%%%")
    assert not verify("AAAA", b"x", signature)


def test_first_run_creates_a_key_in_the_keyring_and_later_runs_reuse_it(
    dict_keyring: DictKeyring,
) -> None:
    first = load_or_create_identity()
    assert (KEYRING_SERVICE, "node:default") in dict_keyring.entries
    second = load_or_create_identity()
    assert second.node_id == first.node_id


def test_profiles_have_separate_keyring_entries_and_node_ids(dict_keyring: DictKeyring) -> None:
    a = load_or_create_identity("default")
    b = load_or_create_identity("second-node")
    assert a.node_id != b.node_id
    assert {user for _, user in dict_keyring.entries} == {"node:default", "node:second-node"}


def test_rotate_replaces_the_key_and_changes_the_node_id(dict_keyring: DictKeyring) -> None:
    before = load_or_create_identity()
    old, new = rotate_identity()
    assert old is not None and old.node_id == before.node_id
    assert new.node_id != before.node_id
    assert load_or_create_identity().node_id == new.node_id


def test_bad_profile_name_is_refused(dict_keyring: DictKeyring) -> None:
    with pytest.raises(IdentityError) as info:
        load_or_create_identity("../evil")
    assert info.value.reason == "bad-profile"


def test_garbage_keyring_entry_is_reported_not_replaced(dict_keyring: DictKeyring) -> None:
    keyring.set_password(KEYRING_SERVICE, "node:default", "not a key")
    with pytest.raises(IdentityError) as info:
        load_or_create_identity()
    assert info.value.reason == "bad-private-key"
    assert "rotate" in str(info.value)
    assert keyring.get_password(KEYRING_SERVICE, "node:default") == "not a key"


@pytest.mark.usefixtures("no_keyring")
def test_without_a_usable_keyring_identity_is_refused_with_the_file_option() -> None:
    with pytest.raises(IdentityError) as info:
        load_or_create_identity()
    assert info.value.reason == "no-keyring"
    assert "--identity-file" in str(info.value)
    assert isinstance(info.value, MeshnetError)


def test_an_empty_keyring_chain_counts_as_no_keyring() -> None:
    class EmptyChain(chainer.ChainerBackend):
        backends = ()  # what the real chain discovers on a box with no keyring daemon

    assert keyring_problem(EmptyChain()) is not None
    assert keyring_problem(DictKeyring()) is None


@pytest.mark.usefixtures("no_keyring")
def test_identity_file_is_written_0600_with_a_warning_and_reused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "keys" / "node.pem"
    with caplog.at_level(logging.WARNING, logger="core.identity.keystore"):
        first = load_or_create_identity(identity_file=path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert any("plain file" in r.getMessage() for r in caplog.records)
    assert load_or_create_identity(identity_file=path).node_id == first.node_id


def test_identity_file_that_is_not_a_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "node.pem"
    path.write_text("hello")
    path.chmod(0o600)  # owner-only, so the content is what gets judged
    with pytest.raises(IdentityError) as info:
        load_or_create_identity(identity_file=path)
    assert info.value.reason == "bad-private-key"


# -- the CLI ----------------------------------------------------------------------------


def test_identity_show_prints_the_same_node_id_on_every_run(
    dict_keyring: DictKeyring, capsys: pytest.CaptureFixture[str]
) -> None:
    assert node_main(["identity", "show"]) == 0
    first = capsys.readouterr().out
    assert node_main(["identity", "show"]) == 0
    assert capsys.readouterr().out == first
    node_id = load_or_create_identity().node_id
    assert f"node id:    {node_id}" in first


def test_identity_rotate_prints_old_and_new_ids_for_the_profile(
    dict_keyring: DictKeyring, capsys: pytest.CaptureFixture[str]
) -> None:
    before = load_or_create_identity("lab").node_id
    assert node_main(["identity", "rotate", "--profile", "lab"]) == 0
    out = capsys.readouterr().out
    after = load_or_create_identity("lab").node_id
    assert f"old node id: {before}" in out and f"node id:     {after}" in out
    assert before != after


@pytest.mark.usefixtures("no_keyring")
def test_identity_show_without_keyring_exits_2_and_names_the_file_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert node_main(["identity", "show"]) == 2
    assert "--identity-file" in capsys.readouterr().err


@pytest.mark.usefixtures("no_keyring")
def test_identity_show_with_a_file_warns_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "node.pem"
    assert node_main(["identity", "show", "--identity-file", str(path)]) == 0
    captured = capsys.readouterr()
    assert "warning:" in captured.err and str(path) in captured.out
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
