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
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

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
    connections: int = 0  # keep-alive connections used at the peak


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
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    opened = 0
    for _ in range(connections):
        idle.append(await asyncio.open_connection("127.0.0.1", port))
        opened += 1
        # Apart, as nodes connect: a burst is accepted whole by whichever worker wakes
        # first (the workers share one listening socket), leaving the other idle.
        await asyncio.sleep(0.02)
    freed = asyncio.Event()
    in_flight: set[asyncio.Task[None]] = set()

    async def send(
        pair: tuple[asyncio.StreamReader, asyncio.StreamWriter], request: bytes, due: float
    ) -> None:
        sent = time.perf_counter()
        result.lags.append(sent - due)
        status, _ = await exchange(pair[0], pair[1], request)
        result.latencies.append(time.perf_counter() - sent)
        result.answered += 1
        result.refused += status != 200
        idle.append(pair)
        freed.set()

    step = period_s / len(requests)
    start = time.perf_counter() + 0.1
    for index, request in enumerate(requests):
        due = start + index * step
        wait = due - time.perf_counter()
        if wait > 0.001:  # requests already due go out together, as the loop allows
            await asyncio.sleep(wait)
        while not idle:
            if opened < max_connections:
                idle.append(await asyncio.open_connection("127.0.0.1", port))
                opened += 1
            else:
                freed.clear()
                await freed.wait()
        task = asyncio.create_task(send(idle.pop(), request, due))
        in_flight.add(task)
        task.add_done_callback(in_flight.discard)
    await asyncio.gather(*in_flight)
    result.elapsed = time.perf_counter() - start
    result.connections = opened
    for _, writer in idle:
        writer.close()
    return result
