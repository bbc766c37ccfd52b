"""What hop audits cost and how fast they catch a liar, in one run.

Real data-plane nodes on loopback (in-process ``DataPlaneServer``s over the
tiny 4-layer Llama the tests build; this shared machine has 2 cores) behind a
real tracker app. Measured:

  (1) route steps until a node that lies on every step is quarantined, median
      over trials, at audit rates of 2 % and 10 % (a fresh liar each trial,
      forced onto the route; two honest peers cover its layers);
  (2) false quarantines: honest nodes quarantined over the whole run;
  (3) greedy decode tokens/s through an honest two-hop route with audits off
      (a) and on at 10 % (b), interleaved rounds, best of each.

Last line: ``ratio: X`` with X = (b)/(a).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from core.dataplane.lie import Lie
from tests.tracker_service.real_nodes import RealNode, build_tiny_model, start_real_node
from tests.tracker_service.test_certifier import fast_settings, join, wait_for
from tracker_service.app import create_app
from tracker_service.audit import Auditor, AuditSettings
from tracker_service.route_client import RouteFailure, RouteSession, Sampling
from tracker_service.routing import PURPOSE_CERTIFY

PROMPT = [1, 2, 3, 4, 5]


async def _steps(
    plan: Any, auditor: Auditor | None, new_tokens: int, counter: list[int] | None = None
) -> int:
    """Run one greedy session; the route steps it took, also added to ``counter`` as they
    run (so a session cut short by a quarantine still counts the step that caught it)."""
    steps = 0
    async with RouteSession(plan, auditor=auditor) as session:
        await session.open(len(PROMPT) + new_tokens, Sampling(temperature=0.0))
        feed = list(PROMPT)
        for _ in range(new_tokens):
            if counter is not None:
                counter[0] += 1
            token = await session.step(feed)
            steps += 1
            feed = [token.token_id]
        await session.close()
    return steps


def _until_quarantined(
    client: TestClient, app: Any, model: Path, peers: list[RealNode], rate: float, seed: int
) -> int:
    liar = start_real_node(model, 2, 4)
    liar.server._ctx.lie = Lie(1.0, 0.05, random.Random(seed))  # type: ignore[attr-defined]
    try:
        join(client, liar)
        wait_for(lambda: _reachable(client, liar))
        auditor = Auditor(
            app.state.tracker.database,
            app.state.tracker.key,
            AuditSettings(rate=rate, probation_rate=rate),
            rng=random.Random(seed),
        )
        exclude = [p.node_id for p in peers]
        steps = [0]
        while True:
            plan = app.state.routing.planner.plan(
                liar.fingerprint, purpose=PURPOSE_CERTIFY, exclude=exclude
            )
            try:
                asyncio.run(_steps(plan, auditor, 16, steps))
            except RouteFailure as exc:
                if exc.reason != "quarantined":
                    raise
                return steps[0]
    finally:
        liar.stop()


def _reachable(client: TestClient, node: RealNode) -> bool:
    shown = client.get(f"/api/v1/nodes/{node.node_id}").json()
    return bool(shown.get("reachability") == "reachable")


def _tokens_per_s(app: Any, honest: list[RealNode], auditor: Auditor | None) -> float:
    exclude: list[str] = []
    plan = app.state.routing.planner.plan(
        honest[0].fingerprint, purpose=PURPOSE_CERTIFY, exclude=exclude
    )
    began = time.perf_counter()
    steps = asyncio.run(_steps(plan, auditor, 64))
    return steps / (time.perf_counter() - began)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model = build_tiny_model(root / "tiny")
        app = create_app(fast_settings(root, audit_rate=0.0, audit_probation_rate=0.0))
        head = start_real_node(model, 0, 2)
        peers = [start_real_node(model, 2, 4) for _ in range(2)]
        honest = [head, *peers]
        try:
            with TestClient(app) as client:
                for node in honest:
                    join(client, node)
                wait_for(lambda: all(_reachable(client, n) for n in honest))
                for rate in (0.02, 0.10):
                    counts = [
                        _until_quarantined(client, app, model, peers, rate, seed)
                        for seed in range(args.trials)
                    ]
                    print(
                        f"audit rate {rate:.0%}: steps until quarantined median "
                        f"{statistics.median(counts):.0f} (trials {sorted(counts)})"
                    )
                state = client.get("/api/v1/state").json()["nodes"]
                honest_ids = {n.node_id for n in honest}
                false = sum(
                    1 for n in state if n["node_id"] in honest_ids and n["state"] == "quarantined"
                )
                print(f"false quarantines: {false} of {len(honest)} honest nodes")
                on = Auditor(
                    app.state.tracker.database,
                    app.state.tracker.key,
                    AuditSettings(rate=0.10, probation_rate=0.10),
                    rng=random.Random(99),
                )
                off_rates, on_rates = [], []
                for _ in range(args.rounds):
                    off_rates.append(_tokens_per_s(app, honest, None))
                    on_rates.append(_tokens_per_s(app, honest, on))
                off, with_audits = max(off_rates), max(on_rates)
                print(f"decode tokens/s, audits off (a): {off:.1f}")
                print(f"decode tokens/s, audits on at 10% (b): {with_audits:.1f}")
                print(f"ratio: {with_audits / off:.2f}")
        finally:
            for node in honest:
                node.stop()
            app.state.tracker.database.dispose()


if __name__ == "__main__":
    main()
