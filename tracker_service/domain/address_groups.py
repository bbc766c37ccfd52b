"""Address groups: what every per-address limit counts.

One IPv4 address, or one IPv6 /64: a home or a VPS is handed a whole /64, so a
limit on exact IPv6 addresses let one machine pose as 2^64 clients. Used by the
tracker's per-address rate limits (security/address_limits.py), the failed-auth
throttle (api/auth_throttle.py) and the relay's per-address caps (relay/hub.py).
"""

from __future__ import annotations

import ipaddress

IPV6_GROUP_PREFIX = 64


def address_group(address: str | None) -> str:
    """What a per-address limit counts: an IPv4 address, the /64 of an IPv6 one (an
    IPv4-mapped IPv6 address counts as its IPv4), anything else (a host name) as is."""
    if not address:
        return "unknown"
    try:
        parsed = ipaddress.ip_address(address.strip("[]").split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, IPV6_GROUP_PREFIX), strict=False))
    return str(parsed)
