"""Heartbeats that arrive together share one commit (SQLite and PostgreSQL).

On SQLite a commit costs more than the two statements of a heartbeat: each
one appends the changed pages to the WAL. On PostgreSQL a commit is a round
trip and a WAL flush, and a worker-thread hop per heartbeat costs as much
CPU as its statements (benchmarks/tracker_load.py measured 1.4 ms of tracker
CPU per heartbeat that way, 1.0 ms grouped). Heartbeats whose requests reach
the event loop in the same turn are written in one transaction instead, flushed
on the next turn; every answer still waits for the commit that holds its
nonce, so what a node is told is as durable as before. The flush runs in a
worker thread: another writer may hold SQLite's lock (a registration, the
certifier), and waiting for it must not stall the event loop. Heartbeats that
arrive while a flush is in flight form the next group. A refreshed node's
view (its reachability, its recipe's status) comes back from the same batch,
so the reply needs no read of its own.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from starlette.concurrency import run_in_threadpool

from tracker_service.store.db import Database
from tracker_service.store.heartbeats import HeartbeatWriter, Viewed

log = logging.getLogger(__name__)

Outcome = tuple[bool, bool]


class HeartbeatCommits:
    """``await beat_viewed(values)`` -> (fresh, refreshed, view), once committed."""

    def __init__(self, database: Database) -> None:
        self.writer = HeartbeatWriter(database)
        # Kept as a switch: a store where a commit is cheaper than a thread hop could
        # answer each heartbeat alone.
        self._grouped = True
        self._pending: list[tuple[dict[str, Any], asyncio.Future[Viewed]]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._flushing = False
        self._flush_task: asyncio.Task[None] | None = None  # held so it is not collected

    async def beat(self, values: dict[str, Any]) -> Outcome:
        """See :meth:`HeartbeatWriter.beat`; `values` are the same."""
        fresh, refreshed, _ = await self.beat_viewed(values)
        return fresh, refreshed

    async def beat_viewed(self, values: dict[str, Any]) -> Viewed:
        """See :meth:`HeartbeatWriter.beat_many_viewed`; `values` as for :meth:`beat`."""
        if not self._grouped:
            [outcome] = await run_in_threadpool(self.writer.beat_many_viewed, [values])
            return outcome
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            # A new event loop (the app restarted in this process, as tests do): what
            # was pending belonged to requests that ended with the old one, unanswered.
            self._loop, self._pending, self._flushing = loop, [], False
        future: asyncio.Future[Viewed] = loop.create_future()
        self._pending.append((values, future))
        if not self._flushing:
            self._flushing = True
            # Starts on the next turn, behind the requests already runnable, so they join.
            self._flush_task = loop.create_task(self._flush_all())
        return await future

    async def _flush_all(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                await self._flush(batch)
        finally:
            self._flushing = False

    async def _flush(self, batch: list[tuple[dict[str, Any], asyncio.Future[Viewed]]]) -> None:
        try:
            outcomes = await run_in_threadpool(
                self.writer.beat_many_viewed, [values for values, _ in batch]
            )
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
