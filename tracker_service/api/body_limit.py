"""Refuse request bodies over the limit with 413 before reading them whole.

A declared Content-Length over the limit is refused without reading a byte. A
body without one (chunked) is read up to the limit and refused as soon as it
passes it; at most `limit` bytes are ever buffered. Under ``/v1`` (the
OpenAI-compatible gateway) the refusal is in OpenAI's error shape, so its
clients show the sentence; elsewhere it is the tracker's ``reason``/``detail``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tracker_service.errors import BODY_TOO_LARGE, BodyTooLarge
from tracker_service.gateway import faces

OPENAI_PREFIX = "/v1/"


class BodyLimitMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        max_bytes: int,
        path_limits: Sequence[tuple[str, int]] = (),
    ) -> None:
        self.app = app
        self.default_max_bytes = max_bytes
        # (path prefix, limit): artifact uploads are bigger than any JSON body.
        self.path_limits = tuple(path_limits)

    def limit_for(self, path: str) -> int:
        for prefix, limit in self.path_limits:
            if path.startswith(prefix):
                return limit
        return self.default_max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        limit = self.limit_for(path)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None:
            if not declared.isdigit() or int(declared) > limit:
                await self._refuse(send, path, declared.decode("latin-1"), limit)
                return
            await self.app(scope, receive, send)
            return
        if dict(scope["headers"]).get(b"transfer-encoding") is None:
            await self.app(scope, receive, send)
            return
        # Chunked: buffer up to the limit, then replay to the app.
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await self._refuse(send, path, f"more than {size}", limit)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        replay: list[Message] = [{"type": "http.request", "body": b"".join(chunks)}]

        async def replayed() -> Message:
            return replay.pop() if replay else await receive()

        await self.app(scope, replayed, send)

    async def _refuse(self, send: Send, path: str, size: str, limit: int) -> None:
        sentence = f"the request body is {size} bytes; this tracker accepts at most {limit} bytes"
        face = faces.error_shape(path)  # an API face's paths: that API's shape
        if face is not None:
            refusal = face(413, "body_too_large", sentence, None)
        elif path.startswith(OPENAI_PREFIX):
            refusal = BodyTooLarge(sentence).body()
        else:
            refusal = {"reason": BODY_TOO_LARGE, "detail": sentence}
        body = json.dumps(refusal).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
