"""Who may ask for a route, and how often; how often one address may register.

A route ticket buys work from every node on the route, so ``POST
/api/v1/routes`` is not a free-for-all: when the operator has issued API keys
(``meshnet-tracker keys add``) a route request needs one, and counts against
that key's per-minute limits like a gateway request; with no keys configured it
is limited per client address. Registrations are limited per address too.
Refusals are the tracker's usual shape: 401 ``invalid_api_key`` (or the
gateway's code) and 429 ``rate-limited``.
"""

from __future__ import annotations

import asyncio

from fastapi import Request

from tracker_service.api.routes import refuse
from tracker_service.errors import AddressLimited, GatewayError
from tracker_service.security.address_limits import AddressRateLimiter


def _host(request: Request) -> str | None:
    return request.client.host if request.client else None


def admit_address(request: Request, door: str, per_minute: int, what: str) -> None:
    """Count this request against its address at `door`; 429 past the limit."""
    limits: dict[str, AddressRateLimiter] | None = getattr(
        request.app.state, "address_limits", None
    )
    if limits is None:
        limits = request.app.state.address_limits = {}
    limiter = limits.get(door)
    if limiter is None:
        limiter = limits[door] = AddressRateLimiter(per_minute, what)
    try:
        limiter.admit(_host(request))
    except AddressLimited as exc:
        raise refuse(429, exc.reason, str(exc)) from exc


async def guard_route_request(request: Request) -> None:
    """An API key when keys are configured (its limits apply), else a per-address limit."""
    gateway = request.app.state.gateway
    if await asyncio.to_thread(gateway.keys.keys_configured):
        try:
            await gateway.authenticate(request.headers.get("Authorization"), _host(request))
        except GatewayError as exc:
            raise refuse(exc.status_code, exc.code, exc.message) from exc
        return
    settings = request.app.state.tracker.settings
    admit_address(request, "routes", settings.route_requests_per_minute_per_address, "routes")
