"""``serve --ollama-port``: a second port that answers only Ollama's paths.

Clients that assume Ollama (``http://host:11434``) get ``/api/chat``, ``/api/generate``,
``/api/tags``, ``/api/show``, ``/api/version`` and Ollama's ``GET /`` there; everything
else of the tracker stays on its own port, so the second port shows no more of it.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Receive, Scope, Send

from tracker_service.gateway.faces import ollama

RUNNING = b"Ollama is running"  # what Ollama answers at / (clients probe it)


class OllamaPortOnly:
    def __init__(self, app: ASGIApp, *, port: int) -> None:
        self.app = app
        self.port = port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        server = scope.get("server") if scope["type"] == "http" else None
        if server is None or server[1] != self.port or ollama.owns_path(scope["path"]):
            await self.app(scope, receive, send)
            return
        if scope["path"] == "/" and scope["method"] in ("GET", "HEAD"):
            await _send(send, 200, "text/plain; charset=utf-8", RUNNING)
            return
        body = json.dumps(
            {"error": f"this port serves only Ollama's API; {scope['path']} is not one of it"}
        ).encode()
        await _send(send, 404, "application/json", body)


async def _send(send: Send, status: int, content_type: str, body: bytes) -> None:
    headers = [
        (b"content-type", content_type.encode()),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
