"""Public keys a worker has not cached yet, read together.

Each worker process caches node keys (auth.PublicKeyCache); a key it has not
seen is read from the store once. After a restart, or in a worker that did
not register the node, that is every node's first request: 10,000 nodes
heartbeating every 10 s mean 1,000 reads/s, each a worker-thread hop, a pool
checkout and a query of its own. Lookups that reach the event loop in the same
turn share one ``SELECT ... WHERE node_id IN (...)`` instead, as heartbeats
share a commit (store/group_commit.py); lookups that arrive meanwhile form the
next group. Every caller still waits for the read that holds its node.
"""

from __future__ import annotations

import asyncio
import logging

from tracker_service.store.db import Database
from tracker_service.store.nodes import public_keys_of

log = logging.getLogger(__name__)

# One IN list stays well under any driver's parameter limit.
MAX_GROUP = 500


class KeyLookups:
    """``await public_key(node_id)`` -> the registered key's bytes, or None."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self._pending: dict[str, list[asyncio.Future[bytes | None]]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._reading = False
        self._task: asyncio.Task[None] | None = None  # held so it is not collected

    async def public_key(self, node_id: str) -> bytes | None:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            # A new event loop (the app restarted in this process, as tests do).
            self._loop, self._pending, self._reading = loop, {}, False
        future: asyncio.Future[bytes | None] = loop.create_future()
        self._pending.setdefault(node_id, []).append(future)
        if not self._reading:
            self._reading = True
            # Starts on the next turn, behind the requests already runnable, so they join.
            self._task = loop.create_task(self._read_all())
        return await future

    async def _read_all(self) -> None:
        try:
            while self._pending:
                ids = list(self._pending)[:MAX_GROUP]
                group = {node_id: self._pending.pop(node_id) for node_id in ids}
                await self._read(group)
        finally:
            self._reading = False

    async def _read(self, group: dict[str, list[asyncio.Future[bytes | None]]]) -> None:
        try:
            found = await self.database.run_quick(_read_keys, self.database, list(group))
        except Exception as exc:
            log.error("reading %d node keys failed: %s", len(group), exc)
            for futures in group.values():
                for future in futures:
                    if not future.done():
                        future.set_exception(exc)
            return
        for node_id, futures in group.items():
            for future in futures:
                if not future.done():
                    future.set_result(found.get(node_id))


def _read_keys(database: Database, node_ids: list[str]) -> dict[str, bytes]:
    with database.engine.connect() as connection:
        return public_keys_of(connection, node_ids)
