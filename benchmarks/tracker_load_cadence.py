"""Heartbeats at the nodes' real cadence, for benchmarks/tracker_load.py.

Every node sends one heartbeat per interval, node i at its own slot
(i * interval / N). The generator is open-loop, as 10,000 independent nodes
are: each request leaves at its slot whatever the answers to the earlier ones,
on any idle keep-alive connection, and a new connection opens when all are
busy (as one more node's would). A slow answer therefore adds latency, not a
missed slot; what the generator could not send on time shows as lag behind
the schedule. The requests are signed before the run (real Ed25519
signatures, unique nonces, inside the tracker's timestamp window), so signing
does not compete with the tracker for the cores during the measured interval.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

# Under the tracker's keep-alive timeout (uvicorn's default is 5 s): a connection idle
# longer may be closed by the server as it is reused, so it is dropped first, as
# HTTP clients do (httpx's keepalive_expiry is 5 s).
KEEPALIVE_EXPIRY_S = 4.0

Exchange = Callable[
    [asyncio.StreamReader, asyncio.StreamWriter, bytes], Awaitable[tuple[int, bytes]]
]


@dataclass
class CadenceResult:
    offered: int
    answered: int = 0
    refused: int = 0
    latencies: list[float] = field(default_factory=list)  # send -> answer, s
    lags: list[float] = field(default_factory=list)  # slot -> send, s
    elapsed: float = 0.0  # first slot -> last answer, s
    connections: int = 0  # keep-alive connections opened in all
    errors: int = 0  # requests that got no answer (connection closed or reset)


async def heartbeat_cadence(
    requests: list[bytes],
    port: int,
    period_s: float,
    *,
    exchange: Exchange,
    connections: int,
    max_connections: int = 1024,
) -> CadenceResult:
    """Send request i at start + i * period / N; `connections` are opened beforehand."""
    result = CadenceResult(offered=len(requests))
    # (reader, writer, when it was last answered on); the most recently used on top.
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter, float]] = []
    opened = 0
    for _ in range(connections):
        idle.append((*await asyncio.open_connection("127.0.0.1", port), time.perf_counter()))
        opened += 1
        # Apart, as nodes connect: a burst is accepted whole by whichever worker wakes
        # first (the workers share one listening socket), leaving the other idle.
        await asyncio.sleep(0.02)
    opened_now = [opened]  # connections open at this moment
    freed = asyncio.Event()
    in_flight: set[asyncio.Task[None]] = set()

    async def send(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes, due: float
    ) -> None:
        sent = time.perf_counter()
        result.lags.append(sent - due)
        try:
            status, _ = await exchange(reader, writer, request)
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            result.errors += 1
            opened_now[0] -= 1
            print(f"cadence: a heartbeat got no answer: {exc!r}", file=sys.stderr)
            writer.close()
            freed.set()
            return
        answered = time.perf_counter()
        result.latencies.append(answered - sent)
        result.answered += 1
        result.refused += status != 200
        idle.append((reader, writer, answered))
        freed.set()

    step = period_s / len(requests)
    start = time.perf_counter() + 0.1
    for index, request in enumerate(requests):
        due = start + index * step
        wait = due - time.perf_counter()
        if wait > 0.001:  # requests already due go out together, as the loop allows
            await asyncio.sleep(wait)
        connection = None
        while connection is None:
            while idle and time.perf_counter() - idle[0][2] > KEEPALIVE_EXPIRY_S:
                idle.pop(0)[1].close()  # the oldest, at the bottom, expire first
                opened_now[0] -= 1
            if idle:
                reader, writer, _ = idle.pop()
                connection = (reader, writer)
            elif opened_now[0] < max_connections:
                connection = await asyncio.open_connection("127.0.0.1", port)
                opened += 1
                opened_now[0] += 1
            else:
                freed.clear()
                await freed.wait()
        task = asyncio.create_task(send(*connection, request, due))
        in_flight.add(task)
        task.add_done_callback(in_flight.discard)
    await asyncio.gather(*in_flight)
    result.elapsed = time.perf_counter() - start
    result.connections = opened
    for _, writer, _ in idle:
        writer.close()
    return result
