"""What an ``https://`` tracker's certificate is checked against: one helper, so the
node, the jobs executor, ``meshnet chat`` and the app trust the same authorities.

By default the operating system's CA store (``truststore``: Windows' and macOS' own
stores, the distribution's bundle on Linux) rather than httpx's bundled certifi list,
so a certificate the computer trusts is trusted here too. A tracker whose certificate
comes from a private CA is trusted with ``--ca-file`` (or ``MESHNET_CA_FILE`` for
every command at once, e.g. the app's node children): then only that CA, as
``curl --cacert`` does. Plain ``http://`` trackers ignore all of this.
"""

from __future__ import annotations

import os
import ssl
from pathlib import Path

from core.errors import ConfigError

CA_FILE_ENV = "MESHNET_CA_FILE"
CA_FILE_UNREADABLE = "ca-file-unreadable"


def tracker_verify(ca_file: str | Path | None = None) -> ssl.SSLContext:
    """The ``verify=`` of an httpx client talking to a tracker."""
    chosen = str(ca_file) if ca_file else os.environ.get(CA_FILE_ENV, "").strip()
    if chosen:
        try:
            return ssl.create_default_context(cafile=chosen)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(
                f"cannot read the CA file {chosen} ({exc}); give the PEM certificate of the "
                "authority that signed the tracker's certificate",
                reason=CA_FILE_UNREADABLE,
            ) from exc
    return _system_store()


def _system_store() -> ssl.SSLContext:
    try:
        import truststore
    except ImportError:  # the standard library's defaults: the OS store where it has one
        return ssl.create_default_context()
    return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
