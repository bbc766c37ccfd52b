"""A relay as its own process (``meshnet-tracker relay``): the relay routes and /metrics.

An operator runs relays on machines of their own and lists them in the tracker's
``MESHNET_TRACKER_RELAY_URLS``; a small deployment uses the relay the tracker
mounts on its own port instead (``embedded_relay``).
"""

from __future__ import annotations

import logging

from fastapi import FastAPI
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from tracker_service.relay.hub import RelayHub, RelaySettings
from tracker_service.relay.link_auth import LinkAuthenticator
from tracker_service.relay.metrics import RelayMetrics
from tracker_service.relay.routes import relay_router


class _DenialIsNoError(logging.Filter):
    """uvicorn's websockets-sansio protocol logs an ERROR after every handshake an app
    refuses with an HTTP answer (the relay's 401/404 with a sentence), although the answer
    went out as sent; the relay's routes are the only WebSocket routes, so drop that line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "ASGI callable returned without completing handshake."


_DENIAL_FILTER = _DenialIsNoError()


def mount_relay(
    app: FastAPI,
    settings: RelaySettings,
    registry: CollectorRegistry | None = None,
    *,
    window_s: float = 300.0,
) -> RelayHub:
    """Add the relay's routes to ``app``; its metrics go on ``registry``."""
    logging.getLogger("uvicorn.error").addFilter(_DENIAL_FILTER)
    hub = RelayHub(settings, RelayMetrics(registry))
    app.include_router(relay_router(hub, LinkAuthenticator(window_s)))
    app.state.relay = hub
    return hub


def create_relay_app(settings: RelaySettings | None = None) -> FastAPI:
    app = FastAPI(title="MeshNet relay", version="1")
    hub = mount_relay(app, settings or RelaySettings())

    @app.get("/metrics", include_in_schema=False)
    async def metrics() -> Response:
        return Response(generate_latest(hub.metrics.registry), media_type=CONTENT_TYPE_LATEST)

    @app.get("/healthz", include_in_schema=False)
    async def health() -> JSONResponse:
        return JSONResponse({"status": "ok", "nodes": len(hub.links)})

    return app
