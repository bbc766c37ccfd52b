"""A real relay (uvicorn + the relay app) on loopback in a thread, stoppable and restartable
on the same port: what the relay tests and the benchmark run against."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import httpx
import uvicorn
from fastapi import FastAPI

from tracker_service.relay.app import create_relay_app
from tracker_service.relay.hub import RelayHub, RelaySettings


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RelayThread:
    def __init__(
        self,
        settings: RelaySettings | None = None,
        port: int | None = None,
        *,
        app: FastAPI | None = None,
        health_path: str = "/healthz",
    ) -> None:
        """``app``: serve this one instead (a whole tracker, whose relay is embedded)."""
        self.settings = settings or RelaySettings()
        self._app = app
        self._health_path = health_path
        self.port = port or free_port()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.hub: RelayHub | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/relay"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 20.0) -> RelayThread:
        app = self._app or create_relay_app(self.settings)
        self.hub = app.state.relay
        lifespan = "off" if self._app is None else "on"
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", lifespan=lifespan
        )
        server = uvicorn.Server(config)
        self._server = server
        self._thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.http_url + self._health_path, timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.05)
        raise RuntimeError(f"the relay did not start on port {self.port}")

    def stop(self) -> None:
        """Stop as a killed relay would look to its nodes: every link drops."""
        if self._server is not None:
            self._server.should_exit = True
            self._server.force_exit = True
        if self._thread is not None:
            self._thread.join(15)
        self._server = self._thread = None

    def metric(self, name: str) -> float:
        """The sum of a metric's samples, read from /metrics."""
        text = httpx.get(self.http_url + "/metrics", timeout=5).text
        total = 0.0
        for line in text.splitlines():
            if line.startswith(name) and not line.startswith("#"):
                total += float(line.rsplit(" ", 1)[1])
        return total
