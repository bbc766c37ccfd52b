"""The shipped nginx site passes the real client address to the relay.

``installers/tracker/nginx-meshnet-tracker.conf``'s ``/relay/`` block set its own
``proxy_set_header`` lines, and nginx then inherits none from the server level: the
relay got no ``X-Forwarded-For`` and saw every client as nginx (127.0.0.1), so its
per-address caps became network-wide. Here Debian's nginx runs the site as shipped
(only ports and certificate substituted, tests/e2e/hosted_stack.py) in front of the
relay as its unit runs it; a client connects from 127.0.0.2, and the relay's log must
name that address.
"""

from __future__ import annotations

import re
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.e2e.hosted_stack import (
    Ports,
    Process,
    in_ci,
    nginx_binary,
    render_nginx,
    start_nginx,
    start_relay,
)
from tests.support.tls_ca import TestCA

SITE = Path(__file__).resolve().parents[2] / "installers" / "tracker" / "nginx-meshnet-tracker.conf"
CLIENT = "127.0.0.2"  # loopback too, but not nginx's own address
POLL_S = 60.0


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[str, ssl.SSLContext, Process]]:
    nginx = nginx_binary()
    if nginx is None:
        why = "nginx is not installed (apt-get install nginx, or .ci/install-nginx.sh)"
        if in_ci():
            pytest.fail(f"CI must run the shipped nginx site: {why}")
        pytest.skip(why)
    ca = TestCA.create(tmp_path / "ca")
    cert, key = ca.issue("nginx")
    ports = Ports.free()
    url = f"https://127.0.0.1:{ports.https}"
    context = ssl.create_default_context(cafile=str(ca.cert_path))
    started: list[Process] = []
    try:
        relay = start_relay(tmp_path, ports.relay)
        started.append(relay)
        relay.wait_http(f"http://127.0.0.1:{ports.relay}/metrics")
        proxy = start_nginx(nginx, tmp_path, render_nginx(tmp_path, ports, cert, key))
        started.append(proxy)
        proxy.wait_http(url + "/relay/v1/link", verify=context)
        yield url, context, relay
    finally:
        for process in reversed(started):
            process.stop()


def test_the_relay_sees_the_clients_own_address_through_nginx(
    site: tuple[str, ssl.SSLContext, Process],
) -> None:
    url, context, relay = site
    link = url.replace("https://", "wss://") + "/relay/v1/link"
    # An unsigned link: the relay refuses it and logs where it came from.
    with (
        pytest.raises(InvalidStatus) as refused,
        connect(link, ssl=context, source_address=(CLIENT, 0), open_timeout=30),
    ):
        pass
    assert refused.value.response.status_code == 401
    deadline = time.monotonic() + POLL_S
    while "relay link refused from" not in relay.log.read_text(errors="replace"):
        assert time.monotonic() < deadline, "the relay logged no refusal"
        time.sleep(0.1)
    logged = [
        line
        for line in relay.log.read_text(errors="replace").splitlines()
        if "relay link refused from" in line
    ]
    assert logged and all(f"refused from {CLIENT}:" in line for line in logged), logged


def test_compose_trusts_forwarded_addresses_only_from_the_proxy() -> None:
    """A "*" let any client that reaches a container name itself any address."""
    yaml = pytest.importorskip("yaml")
    compose = Path(__file__).resolve().parents[2] / "installers" / "tracker" / "compose.yaml"
    services = yaml.safe_load(compose.read_text())["services"]
    trusted = [
        services["tracker-1"]["environment"]["MESHNET_TRACKER_FORWARDED_ALLOW_IPS"],
        services["tracker-2"]["environment"]["MESHNET_TRACKER_FORWARDED_ALLOW_IPS"],
        services["relay"]["environment"]["FORWARDED_ALLOW_IPS"],
    ]
    for value in trusted:
        assert "*" not in value and "MESHNET_PROXY_ADDRESS" in value, value


def test_every_location_with_headers_of_its_own_passes_the_clients_address() -> None:
    """Any block that sets a proxy_set_header inherits none: each must set the address."""
    blocks = re.findall(r"location\s+[^{]*\{([^}]*)\}", SITE.read_text())
    assert blocks
    for block in blocks:
        if "proxy_set_header" in block:
            for header in ("Host $http_host", "X-Forwarded-For $remote_addr"):
                assert f"proxy_set_header {header};" in block, block
