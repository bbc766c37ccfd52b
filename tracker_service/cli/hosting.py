"""``serve`` options for a hosted tracker: HTTPS served directly, and which reverse
proxies may name the client's address.

uvicorn rewrites a request's client address and scheme from ``X-Forwarded-For`` and
``X-Forwarded-Proto`` only when the connection comes from ``--forwarded-allow-ips``;
from anyone else the headers are ignored, so a client cannot dodge the per-address
limits (security/address_limits.py, api/auth_throttle.py) by naming another address.
Each option is also a setting (``MESHNET_TRACKER_TLS_CERT`` and so on, config.py).
"""

from __future__ import annotations

import argparse
import ssl
from typing import Any

from tracker_service.config import Settings
from tracker_service.errors import CliRefusal

HOSTING_SETTINGS = ("tls_cert", "tls_key", "forwarded_allow_ips")


def add_hosting_options(serve: argparse.ArgumentParser) -> None:
    serve.add_argument(
        "--tls-cert",
        metavar="FILE",
        help="serve HTTPS with this PEM certificate (chain) file; needs --tls-key",
    )
    serve.add_argument("--tls-key", metavar="FILE", help="the PEM private key of --tls-cert")
    serve.add_argument(
        "--forwarded-allow-ips",
        metavar="ADDRESSES",
        help="comma-separated addresses or networks of reverse proxies whose "
        "X-Forwarded-For/-Proto headers are believed (default 127.0.0.1; '*' trusts "
        "everyone, only when nothing but the proxy can reach the port)",
    )


def check_tls_files(settings: Settings) -> None:
    """Refuse a half or unreadable TLS pair before start-up, in the command's words
    (uvicorn would fail later with a bare OpenSSL error)."""
    if bool(settings.tls_cert) != bool(settings.tls_key):
        raise CliRefusal(
            "give both --tls-cert and --tls-key (a certificate without its key, or a key "
            "without its certificate, cannot serve HTTPS)",
            "tls-incomplete",
        )
    if not settings.tls_cert:
        return
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(
            settings.tls_cert, settings.tls_key
        )
    except (OSError, ssl.SSLError) as exc:
        raise CliRefusal(
            f"cannot load the TLS certificate {settings.tls_cert} with key "
            f"{settings.tls_key} ({exc}); give a readable PEM certificate and its own key",
            "tls-unreadable",
        ) from exc


def uvicorn_hosting_options(settings: Settings) -> dict[str, Any]:
    """The uvicorn keywords for TLS and for believing a proxy's forwarded headers."""
    options: dict[str, Any] = {
        "proxy_headers": True,
        "forwarded_allow_ips": settings.forwarded_allow_ips,
    }
    if settings.tls_cert:
        options["ssl_certfile"] = settings.tls_cert
        options["ssl_keyfile"] = settings.tls_key
    return options
