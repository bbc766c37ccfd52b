"""Clients of an https:// tracker (core/network/tls_trust.py): the node's tracker client and the
jobs executor trust a private CA given by --ca-file or MESHNET_CA_FILE, and refuse a
certificate nothing they trust signed; a CA file that cannot be read is one sentence."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli.meshnet import main as meshnet_main
from core.errors import ConfigError, TrackerUnreachable
from core.identity.keypair import NodeIdentity
from core.jobs.client import JobsClient
from core.network.tls_trust import CA_FILE_ENV, tracker_verify
from core.network.tracker_client import TrackerClient
from tests.support.tls_ca import TestCA
from tests.support.tracker_serve import serving_tracker


@pytest.fixture(scope="module")
def https_tracker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("https-tracker")
    ca = TestCA.create(folder / "ca")
    cert, key = ca.issue("tracker")
    trusting = ssl.create_default_context(cafile=str(ca.cert_path))
    args = ("--tls-cert", str(cert), "--tls-key", str(key))
    with serving_tracker(folder / "t", *args, scheme="https", verify=trusting) as url:
        yield url, ca.cert_path


def test_the_default_checks_certificates_and_host_names() -> None:
    context = tracker_verify()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def test_the_node_client_trusts_the_private_ca_it_is_given(
    https_tracker: tuple[str, Path],
) -> None:
    url, ca_file = https_tracker
    with TrackerClient(url, NodeIdentity.generate(), ca_file=ca_file) as client:
        assert client.network("00" * 16)["tracker_url"] == url
    stranger = TrackerClient(url, NodeIdentity.generate())  # only the OS's CAs
    with stranger, pytest.raises(TrackerUnreachable, match="CERTIFICATE_VERIFY_FAILED"):
        stranger.network("22" * 16)


def test_the_ca_file_variable_serves_every_client_at_once(
    https_tracker: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, ca_file = https_tracker
    monkeypatch.setenv(CA_FILE_ENV, str(ca_file))
    with TrackerClient(url, NodeIdentity.generate()) as client:
        assert client.state()["nodes"] == []


def test_the_jobs_executor_registers_over_https_with_the_ca_file(
    https_tracker: tuple[str, Path],
) -> None:
    url, ca_file = https_tracker
    trusting = JobsClient(url, NodeIdentity.generate(), ca_file=ca_file)
    assert trusting.register()
    trusting.close()
    stranger = JobsClient(url, NodeIdentity.generate())
    with pytest.raises(TrackerUnreachable, match="CERTIFICATE_VERIFY_FAILED"):
        stranger.register()
    stranger.close()


def test_an_unreadable_ca_file_is_a_config_error(tmp_path: Path) -> None:
    not_pem = tmp_path / "ca.pem"
    not_pem.write_text("not a certificate")
    for path in (tmp_path / "missing.pem", not_pem):
        with pytest.raises(ConfigError) as caught:
            tracker_verify(path)
        assert caught.value.reason == "ca-file-unreadable" and str(path) in str(caught.value)


def test_meshnet_chat_refuses_an_unreadable_ca_file_before_dialling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        meshnet_main(["chat", "--ca-file", str(tmp_path / "nope.pem"), "hello"])
    assert exited.value.code == 2
    assert "ca-file-unreadable" in capsys.readouterr().err
