"""What an invite looks like when shared: the ``meshnet://join`` link and the web page.

docs/wire.md#invites is the contract: ``meshnet://join?tracker=<url>&code=<code>&key=<fp>``
where ``key`` is the tracker key fingerprint (``keys.key_fingerprint``). The node's
side parses it in ``core/network/invites.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

LINK_SCHEME = "meshnet"
_DURATION = re.compile(r"^\s*(\d+)\s*([smhdw]?)\s*$")
_UNIT_S = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


@dataclass(frozen=True)
class InviteLinks:
    code: str
    link: str
    page: str

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "link": self.link, "page": self.page}


def invite_links(tracker_url: str, code: str, fingerprint: str) -> InviteLinks:
    base = tracker_url.rstrip("/")
    query = urlencode({"tracker": base, "code": code, "key": fingerprint})
    return InviteLinks(code, f"{LINK_SCHEME}://join?{query}", f"{base}/join/{code}")


def tracker_url_problem(url: str) -> str | None:
    """Why `url` cannot go into an invite, or None."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        return f"{url!r} is not a URL"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{url!r} is not an http(s) URL with a host"
    if parts.hostname in ("0.0.0.0", "::"):
        return f"{url!r} names every address of this machine, which no one can dial"
    if parts.query or parts.fragment:
        return f"{url!r} carries a query or fragment; give the tracker's base URL"
    return None


def parse_duration(text: str) -> float | None:
    """Seconds of ``90s``, ``30m``, ``12h``, ``7d``, ``2w`` (a bare number is seconds);
    None for ``never``. Raises ValueError with a sentence for anything else."""
    if text.strip().lower() == "never":
        return None
    match = _DURATION.match(text.lower())
    if match is None or int(match.group(1)) == 0:
        raise ValueError(
            f"{text!r} is not a duration; give a number with s, m, h, d or w (e.g. 7d), or 'never'"
        )
    return float(int(match.group(1)) * _UNIT_S[match.group(2)])
