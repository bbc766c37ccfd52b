"""The few calls `meshnet chat` and the demo make of a tracker's OpenAI-compatible gateway.

Plain httpx, with the server-sent events parsed here. Kept apart from the CLI
(``app.cli.chat``) so the demo (``app.demo``) uses it without importing the
command line, and the two packages stay out of an import circle.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from app.errors import GatewayCallFailed
from core.network.tls_trust import tracker_verify


@dataclass
class Reply:
    text: str = ""
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    stopped: bool = False  # the user interrupted it
    route: str = ""  # node:start-end,... as the gateway's X-Meshnet-Route header says


class GatewayClient:
    """The few calls `meshnet chat` and the demo make; plain httpx, SSE parsed here."""

    def __init__(
        self,
        tracker: str,
        api_key: str | None = None,
        timeout_s: float = 300,
        ca_file: str | Path | None = None,
    ) -> None:
        self.base = tracker.rstrip("/") + "/v1"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(
            headers=headers, timeout=timeout_s, trust_env=False, verify=tracker_verify(ca_file)
        )

    def close(self) -> None:
        self._http.close()

    def models(self) -> list[str]:
        reply = self._call("GET", "/models")
        return [str(m["id"]) for m in reply.json()["data"]]

    def _call(self, method: str, path: str, **kw: Any) -> httpx.Response:
        try:
            reply = self._http.request(method, self.base + path, **kw)
        except httpx.HTTPError as exc:
            raise GatewayCallFailed(f"cannot reach the gateway at {self.base}: {exc}") from exc
        if reply.status_code != 200:
            raise GatewayCallFailed(_error_text(reply.status_code, reply.read()))
        return reply

    def stream_chat(
        self,
        model: str,
        messages: list[dict[str, str]],
        on_text: Callable[[str], None],
        **params: Any,
    ) -> Reply:
        """Stream one answer; Ctrl-C (KeyboardInterrupt) in the middle ends it cleanly."""
        body = {
            "model": model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            **params,
        }
        reply = Reply()
        try:
            with self._http.stream("POST", self.base + "/chat/completions", json=body) as resp:
                if resp.status_code != 200:
                    raise GatewayCallFailed(_error_text(resp.status_code, resp.read()))
                reply.route = resp.headers.get("X-Meshnet-Route", "")
                for event in _events(resp.iter_lines()):
                    if "error" in event:
                        raise GatewayCallFailed(str(event["error"].get("message", event["error"])))
                    if event.get("usage"):
                        reply.usage = dict(event["usage"])
                    for choice in event.get("choices", []):
                        text = (choice.get("delta") or {}).get("content") or ""
                        if text:
                            reply.text += text
                            on_text(text)
                        reply.finish_reason = choice.get("finish_reason") or reply.finish_reason
        except KeyboardInterrupt:
            reply.stopped = True  # leaving the block closed the connection
        except httpx.HTTPError as exc:
            raise GatewayCallFailed(f"the gateway at {self.base} failed: {exc}") from exc
        return reply


def _events(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            return
        parsed = json.loads(data)
        if isinstance(parsed, dict):
            yield parsed


def _error_text(status: int, body: bytes) -> str:
    try:
        error = json.loads(body)["error"]
        return f"{error['message']} ({status} {error.get('code') or error.get('type')})"
    except (ValueError, KeyError, TypeError):
        return f"the gateway answered {status}: {body[:200].decode('utf-8', 'replace')}"
