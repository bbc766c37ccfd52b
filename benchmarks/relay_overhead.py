"""What a relay adds to one hop, against the same hop dialled directly, in one run.

One shard server (the tiny 4-layer Llama's layers [0, 2), so compute is small
and the transport shows) on loopback, reached two ways by the same client:

  (a) directly, ``ws://127.0.0.1:<port>/v1/session``;
  (b) through a relay process (``python -m tracker_service.cli relay``) that the
      server holds an outbound link to (core/dataplane/relay_link.py).

Sessions of (a) and (b) alternate, each a prefill then ``--steps`` timed
one-token decode steps; the figure of each is the median step round trip.
Prints both, the difference (the relay's per-hop overhead; the target is at
most 1 ms on loopback) and, last, ``ratio: X`` with X = (b)/(a).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script

from core.dataplane import frames
from core.dataplane.relay_link import CONNECTED, RelayLink
from core.runtime.shard import Shard
from tests.core.dataplane.conftest import (
    NODE_A_SEED,
    TRACKER_SEED,
    Key,
    Node,
    build_tiny_llama,
    start_node,
    ticket_for,
)
from tests.support.hop_client import HopClient
from tests.tracker_service.relay_server import free_port

REPO = Path(__file__).resolve().parents[1]
PROMPT = [5, 17, 99, 3, 250, 41]


def start_relay_process(port: int) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "tracker_service.cli", "relay", "--port", str(port)]
    argv += ["--log-level", "warning"]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    process = subprocess.Popen(argv, cwd=REPO, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("the relay process did not start")


async def session_steps(url: str, node: Node, tracker: Key, steps: int) -> list[float]:
    """One session: prefill, then `steps` timed decode steps (seconds each)."""
    hops = [
        {"node_id": node.key.node_id, "start": 0, "end": 2, "effective_start": 0},
        {"node_id": "f" * 32, "start": 2, "end": 4, "effective_start": 2},
    ]
    ticket = ticket_for(tracker, hops, route_session_id=secrets.token_hex(8))
    timings: list[float] = []
    async with HopClient(url) as hop:
        await hop.open(ticket, len(PROMPT) + steps + 1)
        await hop.step({"input_ids": torch.tensor([PROMPT])}, 0)
        token = torch.tensor([[7]])
        for position in range(len(PROMPT), len(PROMPT) + steps):
            began = time.perf_counter()
            await hop.step_raw(
                frames.encode_frame({"input_ids": token}, {frames.POSITION_KEY: str(position)})
            )
            timings.append(time.perf_counter() - began)
        await hop.close()
    return timings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6, help="sessions of each kind")
    parser.add_argument("--steps", type=int, default=100, help="decode steps per session")
    args = parser.parse_args()
    torch.set_num_threads(1)

    tracker = Key.from_seed(TRACKER_SEED)
    model = build_tiny_llama(Path(tempfile.mkdtemp(prefix="relay-bench-")))
    node = start_node(Key.from_seed(NODE_A_SEED), Shard.load(model, 0, 2), tracker)
    port = free_port()
    relay = start_relay_process(port)
    link = RelayLink(
        f"ws://127.0.0.1:{port}/relay",
        node_id=node.key.node_id,
        public_key=node.key.public,
        sign=node.key.sign,
        serve=node.server.serve_relayed,
        answer_get=node.server.answer_relayed_get,
        max_message_bytes=1 << 20,
    )
    loop = node.server.loop
    assert loop is not None
    task = asyncio.run_coroutine_threadsafe(link.run_forever(), loop)
    try:
        deadline = time.monotonic() + 30
        while link.state != CONNECTED:
            if time.monotonic() > deadline:
                raise SystemExit("the node did not link to the relay")
            time.sleep(0.05)
        direct: list[float] = []
        relayed: list[float] = []
        for index in range(args.rounds):
            order = [(node.url, direct), (link.endpoint, relayed)]
            for url, into in order if index % 2 == 0 else reversed(order):
                into += asyncio.run(session_steps(url, node, tracker, args.steps))
    finally:
        task.cancel()
        relay.terminate()
        relay.wait(10)
        node.server.stop()

    a = statistics.median(direct) * 1000.0
    b = statistics.median(relayed) * 1000.0
    print(f"steps timed: {len(direct)} direct, {len(relayed)} relayed (tiny Llama layers 0-2)")
    print(f"(a) direct hop:  median {a:.3f} ms per decode step round trip")
    print(f"(b) relayed hop: median {b:.3f} ms per decode step round trip")
    print(f"relay overhead per hop: {b - a:+.3f} ms (target: at most +1 ms on loopback)")
    print(f"ratio: {b / a:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
