"""Which node endpoints the tracker will dial, and the one address it dials.

A node chooses its endpoint and the tracker dials it (reachability, tokenizer
and metadata fetches, certification and gateway sessions). Without a policy any
stranger could aim the tracker at ``127.0.0.1:5432``, a LAN printer or a cloud
metadata service (server-side request forgery). So on a public tracker an
endpoint must be ``ws``/``wss`` and every address its name resolves to must be
public; loopback, private, link-local, shared, reserved, multicast and the
metadata addresses are refused at registration with a reason. Operators of a
demo, a test or a LAN pass ``--allow-private-endpoints``.

DNS rebinding: a name that resolved to a public address at registration could
resolve to ``127.0.0.1`` a second later. :func:`resolve_endpoint` therefore
resolves once, checks every address, and returns the address to dial; callers
connect to that literal address (sending the original host name in ``Host``
and, for TLS, as SNI) rather than letting the HTTP client resolve again.

Paths: a dial keeps the endpoint's path only for a relayed endpoint
(``/relay/<node_id>``, under which the relay forwards the node's own paths);
a direct node serves its files and challenge at its root whatever path it
registered. :func:`dial_path` is that rule, :meth:`ResolvedEndpoint.http_url`
applies it.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from tracker_service.errors import EndpointRefused
from tracker_service.relay.directory import relay_of

ENDPOINT_REFUSED = "endpoint-refused"
SCHEMES = {"ws": "http", "wss": "https"}
# Cloud metadata services; link-local already covers 169.254.169.254 and fe80::/10,
# these are named so the refusal can say what the address is.
METADATA_ADDRESSES = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),
        ipaddress.ip_address("169.254.170.2"),
        ipaddress.ip_address("fd00:ec2::254"),
        ipaddress.ip_address("100.100.100.200"),
    }
)

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class ResolvedEndpoint:
    """An endpoint checked against the policy, pinned to the address to dial."""

    endpoint: str
    scheme: str  # ws or wss
    host: str  # as registered (goes in Host and SNI)
    port: int
    address: str  # the literal IP to connect to

    @property
    def http_base(self) -> str:
        """``http(s)://<address>:port``: the URL that connects to the pinned address."""
        literal = f"[{self.address}]" if ":" in self.address else self.address
        return f"{SCHEMES[self.scheme]}://{literal}:{self.port}"

    def http_url(self, path: str) -> str:
        """The URL of ``path`` on the node at the pinned address (under its relay path
        when it is relayed); ``path`` starts with ``/``."""
        return f"{self.http_base}{dial_path(self.endpoint)}{path}"

    @property
    def ws_base(self) -> str:
        literal = f"[{self.address}]" if ":" in self.address else self.address
        return f"{self.scheme}://{literal}:{self.port}"

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def why_not_public(address: Address) -> str | None:
    """None for a public unicast address, else what the address is."""
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped or address.sixtofour
        if mapped is not None:
            inner = why_not_public(mapped)
            return None if inner is None else f"{inner} (inside an IPv6 address)"
        if address.teredo is not None:
            return "a Teredo tunnel address"
    if address in METADATA_ADDRESSES:
        return "a cloud metadata service address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_unspecified:
        return "the unspecified address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_private:
        return "a private-network address"
    if address.is_reserved or not address.is_global:
        return "a reserved or non-global address"
    return None


def dial_path(endpoint: str) -> str:
    """The endpoint path a dial keeps: a relayed endpoint's ``/relay/<node_id>``, else ``""``."""
    if relay_of(endpoint) is None:
        return ""
    return urlsplit(endpoint).path.rstrip("/")


def split_endpoint(endpoint: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a ``ws``/``wss`` endpoint, or EndpointRefused."""
    try:
        parts = urlsplit(endpoint)
        port = parts.port
    except ValueError as exc:
        raise EndpointRefused(f"the endpoint {endpoint!r} is not a URL: {exc}") from exc
    if parts.scheme not in SCHEMES or not parts.hostname or port is None:
        raise EndpointRefused(
            f"the endpoint {endpoint!r} must be ws://host:port or wss://host:port; "
            "register the node's data-plane URL"
        )
    return parts.scheme, parts.hostname, port


def resolve_endpoint(endpoint: str, *, allow_private: bool) -> ResolvedEndpoint:
    """Resolve the endpoint's host once and check every address (blocking: DNS).

    Every address must pass, not just the first: a name that also resolves to
    ``127.0.0.1`` would otherwise win whenever the resolver reorders them.
    """
    scheme, host, port = split_endpoint(endpoint)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise EndpointRefused(
            f"the endpoint's host {host!r} does not resolve ({exc}); register a name or "
            "address the tracker can reach"
        ) from exc
    addresses: list[Address] = []
    for info in infos:
        text = str(info[4][0]).split("%", 1)[0]  # drop an IPv6 zone id
        try:
            addresses.append(ipaddress.ip_address(text))
        except ValueError:
            continue
    if not addresses:
        raise EndpointRefused(f"the endpoint's host {host!r} resolves to no IP address")
    if not allow_private:
        for address in addresses:
            problem = why_not_public(address)
            if problem is not None:
                raise EndpointRefused(
                    f"the endpoint {endpoint!r} resolves to {address}, {problem}; this "
                    "tracker dials only public addresses (an operator running a demo or a "
                    "LAN network starts the tracker with --allow-private-endpoints)"
                )
    return ResolvedEndpoint(endpoint, scheme, host, port, str(addresses[0]))
