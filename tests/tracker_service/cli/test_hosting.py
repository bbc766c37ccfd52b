"""`meshnet-tracker serve` hosted: HTTPS served directly with --tls-cert/--tls-key, and
X-Forwarded-For believed only from --forwarded-allow-ips (real processes on loopback)."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx
import pytest

from tests.support.tls_ca import TestCA
from tests.support.tracker_serve import serving_tracker as tracker
from tracker_service.cli.commands import main

pytestmark = pytest.mark.slow

SPOOFED = "203.0.113.7"  # TEST-NET-3: never loopback


def test_serve_with_tls_answers_https_to_a_client_trusting_its_ca(tmp_path: Path) -> None:
    ca = TestCA.create(tmp_path / "ca")
    cert, key = ca.issue("tracker")
    trusting = ssl.create_default_context(cafile=str(ca.cert_path))
    with tracker(
        tmp_path / "t", "--tls-cert", str(cert), "--tls-key", str(key), scheme="https",
        verify=trusting,
    ) as url:  # fmt: skip
        assert url.startswith("https://")
        state = httpx.get(url + "/api/v1/state", verify=trusting, timeout=10)
        assert state.status_code == 200 and "nodes" in state.json()
        # The invite URL the tracker names itself by is https, as it was reached.
        network = httpx.get(url + "/api/v1/network", verify=trusting, timeout=10).json()
        assert network["tracker_url"] == url
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            httpx.get(url + "/api/v1/state", timeout=10)  # certifi's CAs do not know ours
        with pytest.raises(httpx.HTTPError):  # plain HTTP on the TLS port gets nothing useful
            plain = httpx.get(url.replace("https://", "http://") + "/api/v1/state", timeout=5)
            plain.raise_for_status()


def test_two_workers_serve_https(tmp_path: Path) -> None:
    ca = TestCA.create(tmp_path / "ca")
    cert, key = ca.issue("tracker")
    trusting = ssl.create_default_context(cafile=str(ca.cert_path))
    args = ("--tls-cert", str(cert), "--tls-key", str(key), "--workers", "2")
    with tracker(tmp_path / "t", *args, scheme="https", verify=trusting) as url:
        # The TLS options reach every worker process, not only the parent.
        for _ in range(4):  # several connections, so both workers are likely asked
            with httpx.Client(verify=trusting, timeout=10) as client:
                assert client.get(url + "/api/v1/network").json()["tracker_url"] == url


def _gateway_status(url: str, forwarded_for: str) -> int:
    # With no API keys the gateway answers loopback only: the address it believes shows.
    headers = {"X-Forwarded-For": forwarded_for, "X-Forwarded-Proto": "https"}
    return httpx.get(url + "/v1/models", headers=headers, timeout=10).status_code


def test_a_spoofed_forwarded_for_from_a_peer_not_allowed_is_ignored(tmp_path: Path) -> None:
    with tracker(tmp_path / "t", "--forwarded-allow-ips", "192.0.2.1") as url:
        # The peer (127.0.0.1) is no allowed proxy: the tracker still sees loopback.
        assert _gateway_status(url, SPOOFED) == 200


def test_a_forwarded_for_from_an_allowed_proxy_is_the_client_address(tmp_path: Path) -> None:
    with tracker(tmp_path / "t", "--forwarded-allow-ips", "127.0.0.1") as url:
        # The same header from an allowed proxy names the client: not loopback, so 401.
        assert _gateway_status(url, SPOOFED) == 401
        assert _gateway_status(url, "127.0.0.1") == 200


def test_per_address_limits_count_the_real_client_not_the_spoofed_one(tmp_path: Path) -> None:
    with tracker(
        tmp_path / "t",
        "--forwarded-allow-ips",
        "192.0.2.1",
        MESHNET_TRACKER_ROUTE_REQUESTS_PER_MINUTE_PER_ADDRESS="2",
    ) as url:
        codes = [
            httpx.post(
                url + "/api/v1/routes",
                json={"artifact_id": "m"},
                headers={"X-Forwarded-For": f"198.51.100.{i}"},
                timeout=10,
            ).status_code
            for i in range(4)
        ]
    # Four "different" clients are one address to this tracker: past two a minute, 429.
    assert codes[2:] == [429, 429], codes
    assert 429 not in codes[:2], codes


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--tls-cert", "cert.pem"], "tls-incomplete"),
        (["--tls-cert", "missing.pem", "--tls-key", "missing.key"], "tls-unreadable"),
    ],
)
def test_a_bad_tls_pair_is_refused_before_start(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    reason: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["serve", "--db", f"sqlite:///{tmp_path / 't.db'}", *args])
    err = capsys.readouterr().err
    assert code == 2 and reason in err, err
