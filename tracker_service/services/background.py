"""One shape for the tracker's background loops: a pass every ``poll_s`` or when woken.

The reachability monitor and the certifier both run inside the app's lifespan,
hold one HTTP client for their outbound calls, and must outlive a pass that
fails (a locked database, a node that vanished mid-dial).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import httpx

from tracker_service.security.node_tls import node_http_client

log = logging.getLogger(__name__)


class BackgroundLoop:
    task_name = "meshnet-background"

    def __init__(self, poll_s: float) -> None:
        self._poll_s = poll_s
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._client: httpx.AsyncClient | None = None

    def wake(self, *_: object) -> None:
        """Run a pass now instead of at the next poll."""
        self._wake.set()

    async def run_pass(self) -> object:
        raise NotImplementedError

    async def start(self) -> None:
        self._client = node_http_client()
        self._task = asyncio.create_task(self._run(), name=self.task_name)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _run(self) -> None:
        while True:
            try:
                await self.run_pass()
            except Exception:  # one bad pass must not end the loop for good
                log.exception("%s pass failed", self.task_name)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self._poll_s)
            self._wake.clear()
