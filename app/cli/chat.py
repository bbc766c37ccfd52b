"""`meshnet chat`: talk to a model through a tracker's OpenAI-compatible gateway.

Streams the answer as it is generated. Without a prompt it is interactive and
keeps the conversation's history; Ctrl-C stops the answer being written (the
gateway closes the route when the connection goes), a second Ctrl-C or
Ctrl-D at the prompt leaves.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any, TextIO

from app.cli import arguments
from app.errors import GatewayCallFailed

# The gateway's client is shared with the demo; it is re-exported here for the chat's tests.
from app.gateway_client import GatewayClient, Reply

DEFAULT_TRACKER = "http://127.0.0.1:8765"


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
            except GatewayCallFailed as exc:
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
    arguments.add_ca_file_argument(chat)
    chat.add_argument(
        "--max-tokens", type=int, help="answer length cap (default: the gateway's, within context)"
    )
    chat.add_argument("--temperature", type=float, default=0.7)
    chat.add_argument("prompt", nargs="?", help="ask once and exit (interactive without it)")
    chat.set_defaults(func=run_chat)


def run_chat(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    client = GatewayClient(args.tracker, args.api_key, ca_file=args.ca_file)
    try:
        model = args.model
        if model is None:
            models = client.models()
            if not models:
                raise GatewayCallFailed(
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
