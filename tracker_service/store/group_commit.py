"""Heartbeats that arrive together share one commit (SQLite).

On SQLite a commit costs more than the two statements of a heartbeat: each
one appends the changed pages to the WAL. Heartbeats whose requests reach
the event loop in the same turn are written in one transaction instead, flushed
on the next turn; every answer still waits for the commit that holds its
nonce, so what a node is told is as durable as before. The flush runs on the
event loop: SQLite answers it from the page cache faster than a thread hop.

PostgreSQL waits on the network instead, so there each heartbeat keeps its own
transaction in a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from starlette.concurrency import run_in_threadpool

from tracker_service.store.db import Database
from tracker_service.store.heartbeats import HeartbeatWriter

log = logging.getLogger(__name__)

Outcome = tuple[bool, bool]


class HeartbeatCommits:
    """``await beat(values)`` -> (nonce was fresh, node was refreshed), once committed."""

    def __init__(self, database: Database) -> None:
        self.writer = HeartbeatWriter(database)
        self._grouped = database.dialect == "sqlite"
        self._pending: list[tuple[dict[str, Any], asyncio.Future[Outcome]]] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    async def beat(self, values: dict[str, Any]) -> Outcome:
        """See :meth:`HeartbeatWriter.beat`; `values` are the same."""
        if not self._grouped:
            return await run_in_threadpool(self.writer.beat, values)
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            # A new event loop (the app restarted in this process, as tests do): what
            # was pending belonged to requests that ended with the old one, unanswered.
            self._loop, self._pending = loop, []
        future: asyncio.Future[Outcome] = loop.create_future()
        self._pending.append((values, future))
        if len(self._pending) == 1:
            # Scheduled behind the requests already runnable this turn, so they join.
            loop.call_soon(self._flush)
        return await future

    def _flush(self) -> None:
        batch, self._pending = self._pending, []
        try:
            outcomes = self.writer.beat_many([values for values, _ in batch])
        except Exception as exc:
            # Values are validated before they get here (finite, in range), so what
            # fails a commit is the store itself (locked past the busy timeout, disk
            # full): it would fail each heartbeat alone too, so all share the error
            # instead of each waiting out the timeout again.
            log.error("a heartbeat commit of %d failed: %s", len(batch), exc)
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), outcome in zip(batch, outcomes, strict=True):
            if not future.done():
                future.set_result(outcome)
