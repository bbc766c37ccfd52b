from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tracker_service.app import load_key
from tracker_service.cli.commands import _settings, build_parser, main
from tracker_service.config import Settings
from tracker_service.domain.keys import ROUTE_TICKET_DOMAIN, TrackerKey, verify_domain_signature


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MESHNET_HOME", str(tmp_path))
    for name in ("MESHNET_TRACKER_DB", "MESHNET_TRACKER_SIGNING_KEY", "MESHNET_TRACKER_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)


def test_tokens_add_list_revoke(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tokens", "add", "--label", "alice"]) == 0
    token = capsys.readouterr().out.strip().splitlines()[-1]
    assert token.startswith("mnj_")
    assert main(["tokens", "list"]) == 0
    listing = capsys.readouterr().out
    assert "alice" in listing and "active" in listing and token not in listing
    assert main(["tokens", "revoke", "1"]) == 0
    assert main(["tokens", "revoke", "1"]) == 1
    main(["tokens", "list"])
    assert "revoked" in capsys.readouterr().out


def test_recipes_on_an_empty_ledger_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recipes"]) == 0
    assert "ledger is empty" in capsys.readouterr().out


def test_tracker_key_is_created_0600_in_the_data_folder_and_reused(tmp_path: Path) -> None:
    settings = Settings()
    first = load_key(settings)
    path = tmp_path / "tracker" / "tracker_key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_key(Settings()).public_key_b64 == first.public_key_b64


def test_tracker_key_given_by_setting_signs_verifiably(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "MESHNET_TRACKER_SIGNING_KEY", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
    )
    key = load_key(Settings())
    assert key.public_key_b64 == TrackerKey.from_seed(bytes(range(32))).public_key_b64
    payload = {"route_session_id": "rs", "epoch": 1}
    signature = key.sign(ROUTE_TICKET_DOMAIN, payload)
    assert verify_domain_signature(
        key.public_key_raw, signature, b"meshnet.route-ticket.v1\n", payload
    )
    assert not verify_domain_signature(
        key.public_key_raw, signature, ROUTE_TICKET_DOMAIN, {"epoch": 2}
    )


def test_tracker_key_sign_reproduces_the_committed_route_ticket_vectors() -> None:
    import json

    vectors_path = Path(__file__).resolve().parents[2] / "data" / "dataplane_vectors.json"
    if not vectors_path.exists():
        pytest.fail(
            f"{vectors_path} is missing; rebuild it: python -m tests.core.dataplane.build_vectors"
        )
    vectors = json.loads(vectors_path.read_text(encoding="utf-8"))["ticket_vectors"]
    assert vectors
    for vector in vectors:
        key = TrackerKey.from_seed(bytes.fromhex(vector["tracker_private_key_seed_hex"]))
        assert key.public_key_b64 == vector["tracker_public_key_b64"]
        assert key.sign(ROUTE_TICKET_DOMAIN, vector["ticket"]) == vector["signature_b64"]


def test_serve_trusts_lone_ranges_only_when_told(tmp_path: Path) -> None:
    base = ["serve", "--db", f"sqlite:///{tmp_path / 't.db'}"]
    assert not _settings(build_parser().parse_args(base)).trust_lone_ranges
    told = build_parser().parse_args([*base, "--trust-lone-ranges"])
    assert _settings(told).trust_lone_ranges
