"""Join tokens of private trackers: kept in the OS keyring per tracker URL."""

from __future__ import annotations

import pytest

from app.cli.node import main
from core.errors import IdentityError
from core.network.join_tokens import JOIN_TOKEN_SERVICE, load_join_token, save_join_token
from tests.core.keyring_backend import DictKeyring


def test_token_is_kept_per_tracker_url(dict_keyring: DictKeyring) -> None:
    save_join_token("https://a.example/", "token-a")
    save_join_token("https://b.example", "token-b")
    assert load_join_token("https://a.example") == "token-a"  # trailing slash is the same tracker
    assert load_join_token("https://b.example/") == "token-b"
    assert load_join_token("https://c.example") is None


def test_login_command_stores_the_token(dict_keyring: DictKeyring) -> None:
    assert main(["login", "--tracker", "https://t.example", "--token", " secret "]) == 0
    assert dict_keyring.get_password(JOIN_TOKEN_SERVICE, "https://t.example") == "secret"


def test_without_a_keyring_saving_is_refused_with_a_reason(no_keyring: None) -> None:
    with pytest.raises(IdentityError) as caught:
        save_join_token("https://t.example", "secret")
    assert caught.value.reason == "no-keyring"
    assert load_join_token("https://t.example") is None
