"""`meshnet chat`: talk to a model through a tracker's OpenAI-compatible gateway.

Streams the answer as it is generated. Without a prompt it is interactive and
keeps the conversation's history; Ctrl-C stops the answer being written (the
gateway closes the route when the connection goes), a second Ctrl-C or
Ctrl-D at the prompt leaves.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

import httpx

from app.cli import arguments
from core.errors import MeshnetError

DEFAULT_TRACKER = "http://127.0.0.1:8765"


class GatewayError(MeshnetError):
    reason = "gateway-error"


@dataclass
class Reply:
    text: str = ""
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    stopped: bool = False  # the user interrupted it
    route: str = ""  # node:start-end,... as the gateway's X-Meshnet-Route header says


class GatewayClient:
    """The few calls `meshnet chat` and the demo make; plain httpx, SSE parsed here."""

    def __init__(self, tracker: str, api_key: str | None = None, timeout_s: float = 300) -> None:
        self.base = tracker.rstrip("/") + "/v1"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(headers=headers, timeout=timeout_s, trust_env=False)

    def close(self) -> None:
        self._http.close()

    def models(self) -> list[str]:
        reply = self._call("GET", "/models")
        return [str(m["id"]) for m in reply.json()["data"]]

    def _call(self, method: str, path: str, **kw: Any) -> httpx.Response:
        try:
            reply = self._http.request(method, self.base + path, **kw)
        except httpx.HTTPError as exc:
            raise GatewayError(f"cannot reach the gateway at {self.base}: {exc}") from exc
        if reply.status_code != 200:
            raise GatewayError(_error_text(reply.status_code, reply.read()))
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
                    raise GatewayError(_error_text(resp.status_code, resp.read()))
                reply.route = resp.headers.get("X-Meshnet-Route", "")
                for event in _events(resp.iter_lines()):
                    if "error" in event:
                        raise GatewayError(str(event["error"].get("message", event["error"])))
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
            raise GatewayError(f"the gateway at {self.base} failed: {exc}") from exc
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


class Chat:
    def __init__(
        self,
        client: GatewayClient,
        model: str,
        out: TextIO,
        params: dict[str, Any],
        read: Callable[[str], str] = input,
    ) -> None:
        self.client = client
        self.model = model
        self.out = out
        self.params = params
        self.read = read
        self.history: list[dict[str, str]] = []

    def ask(self, prompt: str) -> Reply:
        self.history.append({"role": "user", "content": prompt})

        def write(text: str) -> None:
            self.out.write(text)
            self.out.flush()

        reply = self.client.stream_chat(self.model, list(self.history), write, **self.params)
        self.history.append({"role": "assistant", "content": reply.text})
        self.out.write(" [stopped]\n" if reply.stopped else "\n")
        self.out.flush()
        return reply

    def interactive(self) -> int:
        self.out.write(f"Chatting with {self.model}. Ctrl-C stops an answer; Ctrl-D leaves.\n")
        while True:
            try:
                prompt = self.read("you> ").strip()
            except (EOFError, KeyboardInterrupt):
                self.out.write("\n")
                return 0
            if not prompt:
                continue
            try:
                self.ask(prompt)
            except GatewayError as exc:
                self.history.pop()  # the question got no answer
                self.out.write(f"\nmeshnet: {exc}\n")


def add_parser(subparsers: Any) -> None:
    chat = subparsers.add_parser(
        "chat", help="chat with a model through a tracker's OpenAI-compatible gateway"
    )
    chat.add_argument(
        "--tracker",
        default=os.environ.get("MESHNET_TRACKER_URL", DEFAULT_TRACKER),
        type=arguments.tracker_url,
        help=f"the tracker's URL (default: $MESHNET_TRACKER_URL or {DEFAULT_TRACKER})",
    )
    chat.add_argument("--model", help="a model id from /v1/models (default: the first one)")
    chat.add_argument("--api-key", default=os.environ.get("MESHNET_API_KEY"))
    chat.add_argument(
        "--max-tokens", type=int, help="answer length cap (default: the gateway's, within context)"
    )
    chat.add_argument("--temperature", type=float, default=0.7)
    chat.add_argument("prompt", nargs="?", help="ask once and exit (interactive without it)")
    chat.set_defaults(func=run_chat)


def run_chat(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    client = GatewayClient(args.tracker, args.api_key)
    try:
        model = args.model
        if model is None:
            models = client.models()
            if not models:
                raise GatewayError(
                    f"no model serves at {args.tracker} right now (none is certified with a "
                    "live route); try again when nodes are up"
                )
            model = models[0]
        params: dict[str, Any] = {"temperature": args.temperature}
        if args.max_tokens is not None:
            params["max_tokens"] = args.max_tokens
        chat = Chat(client, model, out, params)
        if args.prompt:
            chat.ask(args.prompt)
            return 0
        return chat.interactive()
    finally:
        client.close()
