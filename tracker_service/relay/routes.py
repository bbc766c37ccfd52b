"""The relay's routes, mounted in the tracker (the default) or in a relay process alone.

WS   /relay/v1/link                  a node's link (signed request)
WS   /relay/<node_id>/<path>         a client's connection, carried to the node
GET  /relay/<node_id>/<path>         a plain GET (challenge, health, tokenizer)
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any

from fastapi import APIRouter, Request, WebSocket
from fastapi.responses import JSONResponse, Response

from tracker_service.domain.wire import is_node_id
from tracker_service.errors import LinkGone, MuxError, RelayLinkRefused
from tracker_service.relay.hub import RelayHub, client_address
from tracker_service.relay.link_auth import HEADER_MAX_MESSAGE, LinkAuthenticator

log = logging.getLogger(__name__)

RELAY_PREFIX = "/relay"
LINK_PATH = RELAY_PREFIX + "/v1/link"
DEFAULT_MAX_MESSAGE = 64 * 1024 * 1024
MIN_MAX_MESSAGE, MAX_MAX_MESSAGE = 64 * 1024, 1024 * 1024 * 1024
# Headers of a node's plain answer worth passing on (the rest are hop-by-hop).
_PASSED_HEADERS = ("content-type", "x-meshnet-sha256", "allow")


def _refusal(status: int, reason: str, message: str) -> JSONResponse:
    return JSONResponse({"detail": {"reason": reason, "detail": message}}, status_code=status)


async def _deny(ws: WebSocket, status: int, reason: str, message: str) -> None:
    """Refuse a WebSocket handshake with an HTTP answer that says why (403 where the
    server cannot send one)."""
    if "websocket.http.response" in ws.scope.get("extensions", {}):
        await ws.send_denial_response(_refusal(status, reason, message))
    else:
        await ws.close(1008, message[:120])


def relay_router(hub: RelayHub, auth: LinkAuthenticator) -> APIRouter:
    router = APIRouter(prefix=RELAY_PREFIX, tags=["relay"])

    @router.websocket("/v1/link")
    async def link(ws: WebSocket) -> None:
        try:
            node_id = auth.verify("GET", ws.scope["path"], ws.headers)
        except RelayLinkRefused as exc:
            hub.metrics.links.labels("refused").inc()
            log.info("relay link refused from %s: %s", client_address(ws.scope), exc)
            await _deny(ws, 401, "link-refused", str(exc))
            return
        address = client_address(ws.scope)
        refusal = hub.reserve_link(node_id, address)
        if refusal is not None:
            hub.metrics.links.labels("refused").inc()
            log.info("relay link of %s refused: %s", node_id, refusal)
            await _deny(ws, 429, "too-many-links", refusal)
            return
        try:
            await ws.accept()
        except BaseException:
            hub.release_link(address)
            raise
        max_message = _max_message(ws.headers.get(HEADER_MAX_MESSAGE))
        await hub.serve_link(node_id, ws, max_message, address)

    @router.websocket("/{node_id}/{path:path}")
    async def stream(ws: WebSocket, node_id: str, path: str) -> None:
        link = hub.link_of(node_id) if is_node_id(node_id) else None
        if link is None:
            hub.metrics.streams.labels("session", "no-link").inc()
            await _deny(ws, 404, "not-relayed", f"node {node_id[:32]} holds no link to this relay")
            return
        await ws.accept()
        await hub.serve_stream(link, ws, _node_path(path, ws.scope), client_address(ws.scope))

    @router.get("/{node_id}/{path:path}", include_in_schema=False)
    async def http(node_id: str, path: str, request: Request) -> Response:
        link = hub.link_of(node_id) if is_node_id(node_id) else None
        if link is None:
            hub.metrics.streams.labels("http", "no-link").inc()
            return _refusal(404, "not-relayed", f"node {node_id[:32]} holds no link to this relay")
        try:
            status, headers, body = await link.http(_node_path(path, request.scope))
        except TimeoutError:
            hub.metrics.streams.labels("http", "timeout").inc()
            return _refusal(504, "node-timeout", "the node did not answer through the relay")
        except (LinkGone, MuxError) as exc:
            hub.metrics.streams.labels("http", "failed").inc()
            return _refusal(502, "node-gone", str(exc))
        hub.metrics.streams.labels("http", "ok").inc()
        passed = {k: v for k, v in headers.items() if k.lower() in _PASSED_HEADERS}
        return Response(body, status_code=status, headers=passed)

    return router


def _max_message(header: str | None) -> int:
    """The node's cap on a client message, within sane bounds (the default when absent)."""
    try:
        value = int(header or DEFAULT_MAX_MESSAGE)
    except ValueError:
        value = DEFAULT_MAX_MESSAGE
    return min(max(value, MIN_MAX_MESSAGE), MAX_MAX_MESSAGE)


def _node_path(path: str, scope: MutableMapping[str, Any]) -> str:
    """The path as the node's own data plane names it, query included."""
    query = scope.get("query_string") or b""
    assert isinstance(query, bytes)
    node_path = "/" + path
    return f"{node_path}?{query.decode('latin-1')}" if query else node_path
