"""``serve --ollama-port PORT``: the tracker on its port and Ollama's paths on a second one.

One server process listens on both sockets (one app, one lifespan, one gateway);
``api/ollama_port.py`` keeps the second port to Ollama's paths. Clients that assume
Ollama's 11434 then need no other setting than the host.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tracker_service.errors import CliRefusal

STARTUP_FAILURE = 3  # uvicorn's exit status when the server did not start


def add_ollama_port_option(serve: argparse.ArgumentParser) -> None:
    serve.add_argument(
        "--ollama-port",
        type=int,
        help="also answer Ollama's API (/api/chat, /api/generate, /api/tags, ...) on this "
        "port, for clients that assume Ollama's 11434 (the tracker's port answers them too)",
    )


def check_ollama_port(port: int | None, tracker_port: int, workers: int) -> None:
    if not port:
        return
    if port == tracker_port:
        raise CliRefusal(
            f"--ollama-port {port} is the tracker's own port, which already answers Ollama's "
            "paths: leave --ollama-port out, or give another port",
            "ollama-port-same",
        )
    if workers > 1:
        raise CliRefusal(
            "--ollama-port runs in one process: drop --workers, or point Ollama clients at "
            "the tracker's own port (it answers Ollama's paths too)",
            "ollama-port-workers",
        )


def serve_with_ollama_port(app: Any, common: dict[str, Any], ollama_port: int) -> None:
    import uvicorn

    config = uvicorn.Config(app, **common)
    second = uvicorn.Config(app, **{**common, "port": ollama_port})
    server = uvicorn.Server(config)
    server.run(sockets=[config.bind_socket(), second.bind_socket()])
    if not server.started:
        sys.exit(STARTUP_FAILURE)
