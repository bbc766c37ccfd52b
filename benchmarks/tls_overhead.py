"""What TLS (pinned to the node's identity) adds to a hop, against plaintext, in one run.

Two routes of the same two real shard servers' layers (the tiny 4-layer Llama:
node A [0, 2), node B [1, 4), so compute is small and the transport shows), run by
the tracker's own route client (tracker_service/services/route_session.py):

  (a) plaintext: both nodes serve ``ws://`` (--insecure-plaintext-dataplane);
  (b) TLS: both nodes serve ``wss://`` and every hop checks the certificate's pin.

Sessions of (a) and (b) alternate, each a prefill then ``--steps`` timed one-token
decode steps (each a round trip through both hops); the figure of each is the
median step. Prints both, the difference per hop (target: at most +0.3 ms per hop
on loopback) and, last, ``ratio: X`` with X = (b)/(a).

    python benchmarks/tls_overhead.py [--sessions 6] [--steps 40]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script

from tests.tracker_service.real_nodes import (
    NUM_LAYERS,
    RealNode,
    build_tiny_model,
    start_real_node,
)
from tracker_service.domain.keys import TrackerKey
from tracker_service.domain.route_formation import Candidate, form_route
from tracker_service.services.route_planner import plan_for
from tracker_service.services.route_session import RouteSession

PROMPT = [1, 2, 3, 4, 5, 6]
TRACKER = TrackerKey.from_seed(b"\x0b" * 32)
HOPS = 2


def candidate(node: RealNode) -> Candidate:
    pin = "" if node.server.tls is None else node.server.tls.pin
    start, end = node.shard.start, node.shard.end
    return Candidate(node.node_id, node.endpoint, node.public_key, start, end, 10.0, tls_pin=pin)


async def one_session(a: RealNode, b: RealNode, steps: int) -> list[float]:
    route = form_route([candidate(a), candidate(b)], NUM_LAYERS, min_nodes=2)
    plan = plan_for(route, a.fingerprint, TRACKER, ttl_s=120.0)
    timings: list[float] = []
    async with RouteSession(
        plan, open_timeout_s=30, step_timeout_s=60, allow_plaintext_nodes=a.server.tls is None
    ) as session:
        await session.open(len(PROMPT) + steps + 1)
        token = (await session.step(PROMPT)).token_id
        for _ in range(steps):
            began = time.perf_counter()
            token = (await session.step([token])).token_id
            timings.append((time.perf_counter() - began) * 1000.0)
        await session.close()
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=6, help="sessions of each kind")
    parser.add_argument("--steps", type=int, default=40, help="timed decode steps per session")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="meshnet-tls-bench-") as folder:
        model = build_tiny_model(Path(folder))
        key = TRACKER.public_key_raw
        plain = [start_real_node(model, s, e, tracker_public_key=key) for s, e in ((0, 2), (1, 4))]
        tls = [
            start_real_node(model, s, e, tracker_public_key=key, tls=True)
            for s, e in ((0, 2), (1, 4))
        ]
        try:
            runs: dict[str, list[float]] = {"plaintext": [], "tls": []}
            asyncio.run(one_session(*plain, 5))  # warm both paths before timing
            asyncio.run(one_session(*tls, 5))
            for i in range(args.sessions):
                # Alternate which goes first, so neither kind always follows the other.
                order = (("plaintext", plain), ("tls", tls))
                for name, pair in order if i % 2 == 0 else order[::-1]:
                    runs[name] += asyncio.run(one_session(*pair, args.steps))
        finally:
            for node in (*plain, *tls):
                node.stop()
    plain_ms = statistics.median(runs["plaintext"])
    tls_ms = statistics.median(runs["tls"])
    n = len(runs["tls"])
    print(f"decode round trip through {HOPS} hops, median of {n} steps each")
    # The fastest step of each is the least disturbed by other load on the machine.
    print(f"plaintext ws://: {plain_ms:.3f} ms (fastest {min(runs['plaintext']):.3f} ms)")
    print(f"pinned wss://:   {tls_ms:.3f} ms (fastest {min(runs['tls']):.3f} ms)")
    per_hop = (tls_ms - plain_ms) / HOPS
    print(f"TLS per hop: {per_hop:+.3f} ms (target: at most +0.300 ms on loopback)")
    print(f"ratio: {tls_ms / plain_ms:.3f}")


if __name__ == "__main__":
    main()
