"""Sign route tickets as the tracker does, for tests, conformance vectors and benchmarks.

The tracker signs with its own (``tracker_service``); the node only verifies
(``core.dataplane.tickets``), so the signing half lives here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from core.dataplane import wire
from core.dataplane.tickets import ticket_message


def sign_ticket(ticket: Mapping[str, Any], sign: Callable[[bytes], bytes]) -> dict[str, Any]:
    """Build ``{"ticket", "signature"}`` over the exact bytes the tracker signs."""
    return {"ticket": dict(ticket), "signature": wire.b64encode(sign(ticket_message(ticket)))}
