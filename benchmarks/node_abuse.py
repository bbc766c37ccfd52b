"""A live node under each data-plane attack of issue 13: peak memory and health latency.

Starts one data-plane node in its own process (a tiny random Llama, 4 layers,
so the figures are the data plane's, not the model's), then runs each attack
while a prober GETs ``/v1/health`` every 20 ms from another connection:

  failed-opens     opens whose sampling seed torch rejects (KV must come back)
  pipelined-flood  one client writes 600 decode steps at once, reads none
  half-sent        64 connections each declaring a 100 MiB frame before a ticket
  connection-flood 400 connections, no message
  ticket-reuse     one ticket, 200 opens
  deep-json        control messages nested 100,000 deep
  bad-methods      DELETE/PUT/garbage HTTP requests
  pipelined-http   100 connections, each 100 pipelined GETs and a garbage line in one write

For each it prints the node's peak RSS over the idle baseline and the health
check's p50/p99/max latency; the reference is the same node idle, in the same
run, and the last line is ``ratio: X`` with X = worst p99 under attack / idle p99.
Run: ``python -m benchmarks.node_abuse``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import psutil
import torch
from websockets.asyncio.client import connect
from websockets.frames import Frame, Opcode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script

from core.dataplane import frames
from tests.core.dataplane.conftest import (
    FINGERPRINT,
    NODE_A_SEED,
    TRACKER_SEED,
    Key,
    ticket_for,
)
from tests.tiny_llama import save_tiny_llama

REPO = Path(__file__).resolve().parent.parent
SERVE = """
import sys, time
from pathlib import Path
from core.dataplane.server import DataPlaneServer
from core.runtime.sessions import SessionManager
from core.runtime.shard import Shard
from tests.core.dataplane.conftest import FINGERPRINT, Key, NODE_A_SEED, TRACKER_SEED
key, tracker = Key.from_seed(NODE_A_SEED), Key.from_seed(TRACKER_SEED)
shard = Shard.load(Path(sys.argv[1]), 0, 4)
sessions = SessionManager(shard, kv_budget_bytes=64 * 1024 * 1024)
server = DataPlaneServer(sessions, key.node_id, key.public, key.sign, lambda: tracker.public,
                         FINGERPRINT, (0, 4), 1024 * 1024)
server.start()
print(server.port, flush=True)
while True:
    time.sleep(3600)
"""


class Probe:
    """Health latency every 20 ms and the node's RSS, on a thread of its own."""

    def __init__(self, port: int, pid: int) -> None:
        self.url = f"http://127.0.0.1:{port}/v1/health"
        self.process = psutil.Process(pid)
        self.latencies: list[float] = []
        self.peak_rss = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Probe:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        while len(self.latencies) < 5 and self._thread.is_alive():  # a few samples at least
            time.sleep(0.01)
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        with httpx.Client(timeout=60) as client:
            while not self._stop.is_set():
                began = time.perf_counter()
                client.get(self.url)
                self.latencies.append((time.perf_counter() - began) * 1000)
                self.peak_rss = max(self.peak_rss, self.process.memory_info().rss)
                time.sleep(0.02)


def _hop(key: Key) -> list[dict[str, object]]:
    return [{"node_id": key.node_id, "start": 0, "end": 4, "effective_start": 0}]


async def failed_opens(url: str, key: Key, tracker: Key) -> None:
    for _ in range(200):
        async with connect(url) as ws:
            opening = {
                "type": "open",
                "ticket": ticket_for(tracker, _hop(key)),
                "max_length": 64,
                "sampling": {"temperature": 1.0, "seed": 2**64},
            }
            await ws.send(json.dumps(opening))
            await ws.recv()


async def pipelined_flood(url: str, key: Key, tracker: Key) -> None:
    async with connect(url, max_size=None) as ws:
        opening = {"type": "open", "ticket": ticket_for(tracker, _hop(key)), "max_length": 700}
        await ws.send(json.dumps(opening))
        await ws.recv()
        flood = bytearray()
        for position in range(600):
            data = frames.encode_frame(
                {frames.INPUT_IDS: torch.tensor([[position % 200]], dtype=torch.int64)},
                {frames.POSITION_KEY: str(position)},
            )
            flood += Frame(Opcode.BINARY, data).serialize(mask=True)
        ws.transport.write(bytes(flood))
        for _ in range(600):
            await ws.recv()


async def half_sent(url: str, key: Key, tracker: Key) -> None:
    held = []
    for _ in range(64):
        ws = await connect(url)
        header = Frame(Opcode.BINARY, b"\0" * 16).serialize(mask=True)
        # Rewrite the length to 100 MiB: the node sees a frame it must not buffer.
        fake = bytes([header[0], 0x80 | 127]) + (100 * 2**20).to_bytes(8, "big") + b"\0" * 4
        ws.transport.write(fake + b"\0" * 4096)
        held.append(ws)
    await asyncio.sleep(1.0)
    for ws in held:
        await ws.close()


async def connection_flood(url: str, key: Key, tracker: Key) -> None:
    held = []
    for _ in range(400):
        with contextlib.suppress(Exception):  # refused over the caps: that is the point
            held.append(await connect(url))
    await asyncio.sleep(1.0)
    for ws in held:
        await ws.close()


async def ticket_reuse(url: str, key: Key, tracker: Key) -> None:
    ticket = ticket_for(tracker, _hop(key))
    for _ in range(200):
        async with connect(url) as ws:
            await ws.send(json.dumps({"type": "open", "ticket": ticket, "max_length": 64}))
            await ws.recv()


async def deep_json(url: str, key: Key, tracker: Key) -> None:
    for _ in range(50):
        async with connect(url) as ws:
            await ws.send("[" * 30_000 + "]" * 30_000)
            with contextlib.suppress(Exception):
                await ws.recv()


async def bad_methods(url: str, key: Key, tracker: Key) -> None:
    port = int(url.split(":")[2].split("/")[0])
    for method in ["DELETE", "PUT", "BREW"] * 100:
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(f"{method} /v1/health HTTP/1.1\r\nHost: n\r\n\r\n".encode())
            while sock.recv(65536):
                pass


async def pipelined_http(url: str, key: Key, tracker: Key) -> None:
    port = int(url.split(":")[2].split("/")[0])
    burst = b"GET /v1/health HTTP/1.1\r\nHost: n\r\n\r\n" * 100 + b"\x00garbage\r\n\r\n"
    for _ in range(100):
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(burst)
            while sock.recv(65536):
                pass


ATTACKS: list[tuple[str, Callable[[str, Key, Key], Awaitable[None]]]] = [
    ("failed-opens", failed_opens),
    ("pipelined-flood", pipelined_flood),
    ("half-sent", half_sent),
    ("connection-flood", connection_flood),
    ("ticket-reuse", ticket_reuse),
    ("deep-json", deep_json),
    ("bad-methods", bad_methods),
    ("pipelined-http", pipelined_http),
]


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    key, tracker = Key.from_seed(NODE_A_SEED), Key.from_seed(TRACKER_SEED)
    assert FINGERPRINT
    with tempfile.TemporaryDirectory(prefix="meshnet-abuse-") as tmp:
        model = Path(tmp)
        save_tiny_llama(model, layers=4, vocab=256, hidden=64, max_positions=1024, tie=True)
        # MESHNET_ABUSE_NODE_PATH: run the node from another checkout (e.g. before the fixes).
        node_path = os.environ.get("MESHNET_ABUSE_NODE_PATH", str(REPO))
        env = dict(os.environ, PYTHONPATH=node_path)
        node = subprocess.Popen(
            [sys.executable, "-c", SERVE, str(model)],
            cwd=node_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert node.stdout is not None
            port = int(node.stdout.readline())
            url = f"ws://127.0.0.1:{port}/v1/session"
            httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=30)  # warm up
            with Probe(port, node.pid) as idle:
                time.sleep(3.0)
            base_rss = idle.peak_rss
            idle_p99 = _p(idle.latencies, 0.99)
            print(
                f"idle             rss {base_rss / 2**20:7.1f} MiB  health p50 "
                f"{statistics.median(idle.latencies):6.2f} ms  p99 {idle_p99:6.2f} ms"
            )
            worst = 0.0
            for name, attack in ATTACKS:
                with Probe(port, node.pid) as probe:
                    asyncio.run(attack(url, key, tracker))
                p99 = _p(probe.latencies, 0.99)
                worst = max(worst, p99)
                alive = node.poll() is None
                print(
                    f"{name:16} rss +{(probe.peak_rss - base_rss) / 2**20:6.1f} MiB  health p50 "
                    f"{statistics.median(probe.latencies):6.2f} ms  p99 {p99:6.2f} ms  max "
                    f"{max(probe.latencies):7.2f} ms  node {'alive' if alive else 'DEAD'}"
                )
            print(
                f"idle health p99 {idle_p99:.2f} ms (reference), worst under attack {worst:.2f} ms"
            )
            print(f"ratio: {worst / idle_p99:.2f}")
        finally:
            node.kill()
            node.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
