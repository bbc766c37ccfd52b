"""What hop audits cost and how fast they catch a liar, in one run.

Real node processes on loopback (``tests/tracker_service/node_process.py``:
each a ``DataPlaneServer`` in a process of its own, torch threads 1) serving the
default model (SmolLM2-135M, split in two halves), behind a real tracker app;
``--nodes inprocess --model tiny`` runs the older in-process tiny 4-layer Llama
instead. Measured:

  (1) route steps until a node that lies on every step is quarantined, median
      over trials, at audit rates of 2 % and 10 % (a fresh liar process each
      trial, MESHNET_TEST_LIE_RATE=1, forced onto the route; two honest peers
      cover its layers): a new node is on probation, so its audits are inline;
  (2) false quarantines: honest nodes quarantined over the whole run;
  (3) greedy decode tokens/s through an honest two-hop route with audits off
      (a) and on at 10 % (b) for established nodes (audited in the background),
      interleaved rounds, best of each.

Last line: ``ratio: X`` with X = (b)/(a).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script

from tests.support.lies.rate import LIE_RATE_ENV, Lie
from tests.support.waiting import wait_until
from tests.tracker_service.audit_network import fast_settings
from tests.tracker_service.conftest import beat, register
from tests.tracker_service.helpers import FakeNode
from tests.tracker_service.node_process import layer_count_of, start_node_process
from tests.tracker_service.real_nodes import RealNode, build_tiny_model, start_real_node
from tracker_service.app import create_app
from tracker_service.domain.route_formation import PURPOSE_CERTIFY
from tracker_service.services.hop_audit import Auditor, AuditSettings
from tracker_service.services.hop_link import RouteFailure
from tracker_service.services.route_session import RouteSession
from tracker_service.services.session_plan import Sampling

PROMPT = [1, 2, 3, 4, 5]
BEAT_EVERY_S = 2.0


@dataclass
class Node:
    """One node however it runs: what the tracker needs to admit it and keep it live."""

    fake: FakeNode
    identity: dict[str, Any]
    trust: Callable[[bytes], None]
    stop: Callable[[], None]

    @property
    def node_id(self) -> str:
        return self.fake.node_id

    @property
    def fingerprint(self) -> tuple[str, str]:
        claim = self.identity["fingerprint"]
        return claim["model_artifact_digest"], claim["runtime_recipe_digest"]


def _in_process(model: Path, start: int, end: int, lie: bool, seed: int) -> Node:
    real: RealNode = start_real_node(model, start, end)
    if lie:
        real.server._ctx.lie = Lie(1.0, 0.05, random.Random(seed))  # type: ignore[attr-defined]

    def trust(key: bytes) -> None:
        real.tracker_key[0] = key

    return Node(real.as_fake_node(), real.identity, trust, real.stop)


def _process(model: Path, start: int, end: int, lie: bool, seed: int) -> Node:
    env = {LIE_RATE_ENV: "1"} if lie else {}
    child = start_node_process(model, start, end, 1, **env)
    return Node(
        child.fake,
        child.identity,
        lambda key: child.trust(base64.b64encode(key).decode()),
        child.stop,
    )


class Bench:
    def __init__(self, client: TestClient, app: Any, start: Callable[..., Node]) -> None:
        self.client, self.app, self.start = client, app, start
        self.live: list[Node] = []
        self._beaten = time.monotonic()

    def join(self, node: Node) -> None:
        response = register(self.client, node.fake, node.identity)
        assert response.status_code == 200, response.text
        node.trust(base64.b64decode(response.json()["tracker_public_key"]))
        self.live.append(node)
        wait_until(lambda: self.reachable(node), 60)

    def reachable(self, node: Node) -> bool:
        shown = self.client.get(f"/api/v1/nodes/{node.node_id}").json()
        return bool(shown.get("reachability") == "reachable")

    def keep_live(self) -> None:
        """The heartbeats a node's own loop would send (these nodes have none)."""
        if time.monotonic() - self._beaten < BEAT_EVERY_S:
            return
        for node in self.live:
            beat(self.client, node.fake)
        self._beaten = time.monotonic()

    def plan(self, fingerprint: tuple[str, str], exclude: list[str]) -> Any:
        self.keep_live()
        return self.app.state.routing.planner.plan(
            fingerprint, purpose=PURPOSE_CERTIFY, exclude=exclude
        )

    def auditor(self, rate: float, seed: int, *, established: bool = False) -> Auditor:
        """At `rate` whatever the node's standing; `established`: no probation, so audits
        run in the background of the route (a new node's are inline, route_session.py)."""
        return Auditor(
            self.app.state.tracker.database,
            self.app.state.tracker.key,
            AuditSettings(
                rate=rate,
                probation_rate=rate,
                probation_audits=0 if established else AuditSettings.probation_audits,
                allow_private_endpoints=True,
                allow_plaintext_nodes=True,  # the test nodes serve ws://
            ),
            rng=random.Random(seed),
        )


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
    bench: Bench, model: Path, tail: tuple[int, int], peers: list[Node], rate: float, seed: int
) -> int:
    liar = bench.start(model, *tail, True, seed)
    try:
        bench.join(liar)
        auditor = bench.auditor(rate, seed)
        exclude = [p.node_id for p in peers]
        steps = [0]
        while True:
            plan = bench.plan(liar.fingerprint, exclude)
            try:
                asyncio.run(_steps(plan, auditor, 16, steps))
            except RouteFailure as exc:
                if exc.reason != "quarantined":
                    raise
                return steps[0]
    finally:
        bench.live.remove(liar)
        liar.stop()


def _tokens_per_s(bench: Bench, honest: list[Node], auditor: Auditor | None) -> float:
    plan = bench.plan(honest[0].fingerprint, [])
    began = time.perf_counter()
    steps = asyncio.run(_steps(plan, auditor, 64))
    return steps / (time.perf_counter() - began)


def _model(choice: str, root: Path) -> Path:
    if choice == "tiny":
        return build_tiny_model(root / "tiny")
    from core.models.default_model import ensure_default_model

    cache = Path(__file__).resolve().parents[1] / ".meshnet" / "test-cache" / "models"
    return ensure_default_model(cache)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--nodes", choices=("processes", "inprocess"), default="processes")
    parser.add_argument("--model", choices=("default", "tiny"), default="default")
    args = parser.parse_args()
    start = _process if args.nodes == "processes" else _in_process
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model = _model(args.model, root)
        layers = layer_count_of(model)
        head, tail = (0, layers // 2), (layers // 2, layers)
        print(f"model {model.name} ({layers} layers), nodes: {args.nodes}, halves {head} {tail}")
        app = create_app(fast_settings(root, audit_rate=0.0, audit_probation_rate=0.0))
        honest = [start(model, *head, False, 0)]
        honest += [start(model, *tail, False, 0) for _ in range(2)]
        try:
            with TestClient(app) as client:
                bench = Bench(client, app, start)
                for node in honest:
                    bench.join(node)
                peers = honest[1:]
                for rate in (0.02, 0.10):
                    counts = [
                        _until_quarantined(bench, model, tail, peers, rate, seed)
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
                on = bench.auditor(0.10, 99, established=True)
                off_rates, on_rates = [], []
                for _ in range(args.rounds):
                    off_rates.append(_tokens_per_s(bench, honest, None))
                    on_rates.append(_tokens_per_s(bench, honest, on))
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
