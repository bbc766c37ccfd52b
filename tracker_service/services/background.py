"""One shape for the tracker's background loops: a pass every ``poll_s`` or when woken.

The reachability monitor and the certifier both run inside the app's lifespan,
hold one HTTP client for their outbound calls, and must outlive a pass that
fails (a locked database, a node that vanished mid-dial).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

import httpx

from tracker_service.security.node_tls import node_http_client
from tracker_service.store.credit_balances import release_expired
from tracker_service.store.db import Database
from tracker_service.store.pruning import Pruned, prune_dead

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


class Pruner(BackgroundLoop):
    """Prunes dead registrations, nodes and recipes (store/pruning.py) every ``poll_s``,
    and gives back expired credit holds (store/credit_balances.py: a request that crashed
    locks nothing for good; the first pass runs at startup); each pass's counts go to
    ``on_pruned`` (the /metrics counter)."""

    task_name = "meshnet-pruner"

    def __init__(
        self,
        database: Database,
        *,
        poll_s: float,
        unreachable_after_s: float,
        dead_after_s: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(poll_s)
        self._db = database
        self._unreachable_after_s = unreachable_after_s
        self._dead_after_s = dead_after_s
        self._clock = clock
        self.on_pruned: Callable[[str, int], None] | None = None

    async def start(self) -> None:  # no outbound calls: no HTTP client
        self._task = asyncio.create_task(self._run(), name=self.task_name)

    def prune_once(self) -> Pruned:
        with self._db.sessions.begin() as session:
            pruned = prune_dead(
                session,
                now=self._clock(),
                unreachable_after_s=self._unreachable_after_s,
                dead_after_s=self._dead_after_s,
            )
        with self._db.sessions.begin() as session:
            released = release_expired(session, now=self._clock())
        if released:
            log.info("released %d expired credit reservations", released)
        for what, count in pruned.items():
            if self.on_pruned is not None:
                self.on_pruned(what, count)
        if any(count for _, count in pruned.items()):
            log.info("pruned dead rows: %s", ", ".join(f"{n} {w}" for w, n in pruned.items()))
        return pruned

    async def run_pass(self) -> Pruned:
        return await asyncio.to_thread(self.prune_once)
