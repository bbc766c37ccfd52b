"""A userspace TCP proxy that makes a loopback hop cost a WAN link's one-way delay.

The kernel here has no ``netem``, so the WAN benchmarks put one of these in
front of every node's data plane and the gateway: it accepts a connection,
dials the target, and forwards bytes both ways, holding each chunk it reads
for ``delay_s`` (plus a uniform ``jitter_s``) before writing it on. Every leg
through it therefore pays the one-way delay, in each direction.

Why it looks like a link, not a sleep:
- Each chunk is stamped when it arrives and released at ``arrival + delay``;
  chunks in flight overlap, as bytes on a wire do, so a delay costs latency,
  not bandwidth.
- Jitter never reorders a direction: one writer per direction takes chunks in
  arrival order, so a chunk is released no earlier than the one before it
  (TCP delivers in order whatever the path does).
- The end of a direction (FIN) travels the same delay and arrives as a
  half-close, so a peer that shuts down its sending side can still read.
- A new connection pays the TCP handshake: the client's first byte cannot
  leave before one round trip (``2 * delay``) has passed since the accept.

Used by the tests and the benchmarks only (``benchmarks/link_delay_proxy.py``
runs it as a process), so it lives here, not in core/.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import threading
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

CHUNK_BYTES = 64 * 1024
QUEUE_CHUNKS = 256  # in flight per direction before reading stops: a window, not a sponge
_EOF = b""


@dataclass(frozen=True)
class LinkDelay:
    """One direction's one-way delay and jitter, in seconds."""

    delay_s: float
    jitter_s: float = 0.0

    def __post_init__(self) -> None:
        if self.delay_s < 0 or self.jitter_s < 0:
            raise ValueError(
                f"delay and jitter must be ≥ 0 s (got {self.delay_s}, {self.jitter_s}); "
                "pass a link's one-way delay, e.g. 0.025 for 25 ms"
            )

    def sample(self, rng: random.Random) -> float:
        return self.delay_s + (rng.uniform(0.0, self.jitter_s) if self.jitter_s else 0.0)


@dataclass
class DelayProxy:
    """Listens on ``listen_host:listen_port`` and forwards to ``target`` through a delayed link."""

    target_host: str
    target_port: int
    link: LinkDelay
    listen_host: str = "127.0.0.1"
    listen_port: int = 0
    seed: int | None = None
    connections: int = 0  # accepted so far, for the benchmark's own check
    bytes_forwarded: int = 0  # both directions, written on after the delay
    _server: asyncio.Server | None = field(default=None, repr=False)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._accepted, self.listen_host, self.listen_port
        )
        self.listen_port = int(self._server.sockets[0].getsockname()[1])
        log.info(
            "link %s:%d -> %s:%d, one-way %.1f ms (+ up to %.1f ms jitter)",
            self.listen_host, self.listen_port, self.target_host, self.target_port,
            self.link.delay_s * 1000, self.link.jitter_s * 1000,
        )  # fmt: skip

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def __aenter__(self) -> DelayProxy:
        await self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        loop = asyncio.get_running_loop()
        handshake_done = loop.time() + 2 * self.link.delay_s  # SYN out, SYN-ACK back
        try:
            up_reader, up_writer = await asyncio.open_connection(self.target_host, self.target_port)
        except OSError as exc:
            log.warning("link to %s:%d refused: %s", self.target_host, self.target_port, exc)
            writer.close()
            self._tasks.discard(task)
            return
        try:
            async with asyncio.TaskGroup() as both:
                both.create_task(self._direction(reader, up_writer, handshake_done))
                both.create_task(self._direction(up_reader, writer, 0.0))
        except* OSError as group:
            # A reset on either side ends the whole connection, as it would end to end.
            log.debug("link connection reset: %s", group.exceptions[0])
            for side in (writer, up_writer):
                side.transport.abort()
        finally:
            for side in (writer, up_writer):
                side.close()
            for side in (writer, up_writer):
                with contextlib.suppress(OSError):
                    await side.wait_closed()
            self._tasks.discard(task)

    async def _direction(
        self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, not_before: float
    ) -> None:
        """Forward one direction: read, stamp, hold, write, in order; FIN last."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue(QUEUE_CHUNKS)

        async def read() -> None:
            while True:
                chunk = await source.read(CHUNK_BYTES)
                sent = max(loop.time(), not_before)
                await queue.put((sent + self.link.sample(self._rng), chunk))
                if chunk == _EOF:
                    return

        async def write() -> None:
            # One writer taking chunks in arrival order: a chunk whose jitter came out
            # shorter waits for the one before it, so a direction is never reordered.
            while True:
                release, chunk = await queue.get()
                wait = release - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if chunk == _EOF:
                    if sink.can_write_eof() and not sink.is_closing():
                        sink.write_eof()  # half-close: the peer may still answer
                    return
                sink.write(chunk)
                self.bytes_forwarded += len(chunk)
                await sink.drain()

        # One group: a reset on the read side must not leave the writer waiting forever.
        async with asyncio.TaskGroup() as both:
            both.create_task(read())
            both.create_task(write())


class Links:
    """Delay proxies on their own event loop thread: proxy_host:P -> 127.0.0.1:P (all of
    127/8 is loopback on Linux, so a node listening on 127.0.0.1 advertises proxy_host)."""

    def __init__(self, ports: list[int], one_way_s: float, proxy_host: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.proxies = [
            DelayProxy("127.0.0.1", port, LinkDelay(one_way_s), proxy_host, port, seed=port)
            for port in ports
        ]
        for proxy in self.proxies:
            asyncio.run_coroutine_threadsafe(proxy.start(), self.loop).result(10)

    def close(self) -> None:
        for proxy in self.proxies:
            asyncio.run_coroutine_threadsafe(proxy.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
