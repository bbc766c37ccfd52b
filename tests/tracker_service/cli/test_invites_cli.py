"""`meshnet-tracker invite create | list | revoke`: the code shown once, the link naming
the tracker and its key, and the refusals an operator can act on."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest

from tracker_service.cli.commands import main
from tracker_service.config import Settings
from tracker_service.domain.keys import TrackerKey


def _key() -> TrackerKey:
    return TrackerKey.load_or_create(Settings().key_path())


def test_create_prints_the_code_link_and_page_and_list_revoke_follow(
    capsys: pytest.CaptureFixture[str],
) -> None:
    key = _key()
    argv = ["invite", "create", "--label", "club", "--uses", "3", "--json"]
    assert main([*argv, "--tracker-url", "https://t.example.org/"]) == 0
    invite = json.loads(capsys.readouterr().out)
    code = invite["code"]
    link = urlsplit(invite["link"])
    query = {name: values[0] for name, values in parse_qs(link.query).items()}
    assert (link.scheme, link.netloc) == ("meshnet", "join")
    assert query == {"tracker": "https://t.example.org", "code": code, "key": key.fingerprint}
    assert invite["page"] == f"https://t.example.org/join/{code}"

    assert main(["invite", "list"]) == 0
    listed = capsys.readouterr().out
    assert "club" in listed and "0/3" in listed and "active" in listed and code not in listed
    assert main(["invite", "revoke", code.lower()]) == 0
    assert main(["invite", "revoke", code]) == 1
    main(["invite", "list"])
    assert "revoked" in capsys.readouterr().out


def test_create_in_words_names_the_settings_url_and_the_expiry(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _key()
    monkeypatch.setenv("MESHNET_TRACKER_PUBLIC_URL", "https://mesh.example.org")
    assert main(["invite", "create", "--expires-in", "never"]) == 0
    out = capsys.readouterr().out
    assert "never expires" in out and "shown once" in out
    assert "link: meshnet://join?tracker=https%3A%2F%2Fmesh.example.org&code=" in out
    assert "page: https://mesh.example.org/join/" in out


def test_create_refuses_without_a_tracker_key_or_with_an_undialable_url(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["invite", "create"]) == 2
    assert "[no-tracker-key]" in capsys.readouterr().err
    _key()
    monkeypatch.setenv("MESHNET_TRACKER_HOST", "0.0.0.0")
    assert main(["invite", "create"]) == 2
    err = capsys.readouterr().err
    assert "--tracker-url" in err and "[bad-tracker-url]" in err


@pytest.mark.parametrize(
    ("option", "value"), [("--uses", "0"), ("--expires-in", "7 years"), ("--expires-in", "0d")]
)
def test_create_refuses_bad_options_with_a_sentence(
    option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["invite", "create", option, value])
    assert stopped.value.code == 2
    assert option in capsys.readouterr().err


def test_revoke_takes_an_id_too_and_refuses_as_every_secret_command_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _key()
    argv = ["invite", "create", "--tracker-url", "https://t.example.org", "--json"]
    assert main(argv) == 0 and main(argv) == 0
    capsys.readouterr()
    assert main(["invite", "list"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split()
    assert header == ["ID", "LABEL", "CREATED", "EXPIRES", "USES", "STATE"]
    assert main(["invite", "revoke", "2"]) == 0
    assert "stay joined" in capsys.readouterr().out
    assert main(["invite", "revoke", "2"]) == 1
    assert "no active invite with id 2 [not-found]" in capsys.readouterr().err
    assert main(["invite", "revoke", "ABCD-EFGH-JKM0"]) == 1
    assert "no active invite ABCD-EFGH-JKM0 [not-found]" in capsys.readouterr().err
    assert main(["tokens", "revoke", "1"]) == 1
    assert "no active join token with id 1 [not-found]" in capsys.readouterr().err


def test_list_with_none_says_how_to_make_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["invite", "list"]) == 0
    assert "meshnet-tracker invite create" in capsys.readouterr().out


def test_serve_takes_the_networks_description_as_flags() -> None:
    from tracker_service.cli.commands import _settings, build_parser

    args = build_parser().parse_args(
        [
            "serve",
            "--network-name", "Llama Club",
            "--network-description", "We answer questions.",
            "--network-operator", "Ada",
            "--network-contact", "ada@example.org",
            "--network-terms-url", "https://example.org/terms",
            "--public-url", "https://mesh.example.org/",
        ]
    )  # fmt: skip
    settings = _settings(args)
    assert (settings.network_name, settings.network_operator) == ("Llama Club", "Ada")
    assert settings.network_description == "We answer questions."
    assert settings.network_contact == "ada@example.org"
    assert settings.network_terms_url == "https://example.org/terms"
    assert settings.own_url() == "https://mesh.example.org"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--network-terms-url", "javascript:alert(1)"])


def test_a_terms_address_from_the_environment_must_be_a_web_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pydantic import ValidationError

    monkeypatch.setenv("MESHNET_TRACKER_NETWORK_TERMS_URL", "javascript:alert(1)")
    with pytest.raises(ValidationError, match="http"):
        Settings()
