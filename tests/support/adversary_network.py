"""A small real network for the wire attacks: a real tracker app, real node processes of
the default model (one of them a test-side liar, tests/support/lies) and the gateway's
own generation loop (gateway/generation.py) with every hop audited inline.

    with adversary_network(tmp_path, model, [(0, 30, None), (0, 30, "top_ids"), ...]) as net:
        answer, stats = net.generate(PROMPT, 6, sampling, force=net.liar)

``force``: while that node is not quarantined, the planner leaves out every other node
of its range, so each route runs through it (a fair test of the audits, not of luck).
Credits go through the real ledger, so a test reads what each identity earned.
Shared by the attack tests (tests/adversary) and ``benchmarks/red_team.py``, which also
pass tracker settings as an operator would set them, the auditor's settings, and a
node's claimed tokens/s (``claims``: spec index -> tokens/s, sent at registration and
in every heartbeat).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from tests.support.waiting import wait_until
from tests.tracker_service.conftest import beat, make_settings, register
from tests.tracker_service.node_process import NodeProcess, start_node_process
from tracker_service.app import create_app
from tracker_service.domain.route_formation import PURPOSE_CERTIFY
from tracker_service.gateway.generation import Generation, GenerationSettings, Picker
from tracker_service.services.credit_policy import identity_credits
from tracker_service.services.hop_audit import Auditor, AuditSettings
from tracker_service.services.session_plan import RoutePlan, Sampling
from tracker_service.store.tables import Recipe

# (start, end, liar module or None)
NodeSpec = tuple[int, int, str | None]


@dataclass
class AdversaryNetwork:
    app: Any
    client: TestClient
    nodes: list[NodeProcess]
    liars: dict[str, str]  # node id -> liar module
    auditor: Auditor
    claims: dict[str, float] = field(default_factory=dict)  # node id -> claimed tokens/s

    @property
    def liar(self) -> str:
        return next(iter(self.liars))

    @property
    def honest(self) -> list[str]:
        return [n.node_id for n in self.nodes if n.node_id not in self.liars]

    def beat(self) -> None:
        for node in self.nodes:
            claim = self.claims.get(node.node_id)
            extra = {} if claim is None else {"throughput": claim}
            beat(self.client, node.fake, **extra)

    @contextmanager
    def heartbeats(self, every_s: float = 2.0) -> Iterator[None]:
        """Beat for every node every `every_s` while the block runs, as the nodes' own
        loops would: an answer whose inline audits take minutes on a loaded machine
        must not outlive the nodes' live window (no replayer would be left)."""
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(every_s):
                self.beat()

        thread = threading.Thread(target=loop, name="adversary-heartbeats", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def state(self, node_id: str) -> str:
        return str(self.client.get(f"/api/v1/nodes/{node_id}").json()["state"])

    def withdrawn(self, node_id: str) -> bool:
        return self.auditor.withdrawn(node_id)

    def certify(self) -> None:
        """Mark the nodes' recipe certified, as the certifier would (it has its own tests),
        so serve routes (POST /api/v1/routes, the gateway's) are planned."""
        digest, recipe = self.nodes[0].fingerprint
        with self.app.state.tracker.database.sessions.begin() as session:
            row = (
                session.query(Recipe)
                .filter_by(model_artifact_digest=digest, runtime_recipe_digest=recipe)
                .one()
            )
            row.status = "certified"
            row.routing_version = (row.routing_version or 0) + 1
        self.app.state.routing.planner.cache.forget()

    def earned(self, node_id: str) -> float:
        with self.app.state.tracker.database.session() as session:
            rows = identity_credits(session, now=time.time())
        return sum(r.earned for r in rows if r.node_id == node_id)

    def _planner(self, force: str | None) -> Callable[..., RoutePlan]:
        planner = self.app.state.routing.planner
        fingerprint = self.nodes[0].fingerprint
        forced = next((n for n in self.nodes if n.node_id == force), None)

        def plan(
            key: Any, excluded: Collection[str], prefer: Collection[str], slack: float | None
        ) -> RoutePlan:
            left_out = set(excluded)
            if forced is not None and self.state(forced.node_id) != "quarantined":
                left_out |= {
                    n.node_id
                    for n in self.nodes
                    if n.start == forced.start and n.node_id != forced.node_id
                }
            return planner.plan(fingerprint, purpose=PURPOSE_CERTIFY, exclude=left_out)

        return plan

    def generate(
        self,
        prompt: Sequence[int],
        new_tokens: int,
        sampling: Sampling,
        *,
        pick: Picker | None = None,
        force: str | None = None,
        chain: bool = False,
        on_token: Callable[[int, Generation], None] | None = None,
    ) -> tuple[list[int], Generation]:
        """One answer through the gateway's generation loop (audited, credited);
        ``on_token`` sees each token as it is served (the route is stats.routes[-1])."""
        self.beat()
        settings = GenerationSettings(
            allow_private_endpoints=True,
            allow_plaintext_nodes=True,
            speculative="off",
            chain="auto" if chain else "off",
            max_failovers=6,
            step_timeout_s=120.0,  # an inline audit must finish within a step's deadline
            open_timeout_s=60.0,
        )
        generation = Generation(
            self.nodes[0].fingerprint,
            self._planner(force),
            sampling,
            settings,
            auditor=self.auditor,
            on_receipts=self.app.state.gateway.credits.sink(None),
            pick=pick,
            speculative=False,
            chain=chain,
        )

        async def run() -> list[int]:
            tokens: list[int] = []
            async for token in generation.run(prompt, new_tokens):
                tokens.append(token)
                if on_token is not None:
                    on_token(token, generation)
            return tokens

        return asyncio.run(run()), generation


def routed_nodes(generation: Generation) -> list[list[str]]:
    """The node ids of every route the generation opened, in order."""
    return [[h.node_id for h in plan.hops] for plan in generation.stats.routes]


@contextmanager
def adversary_network(
    tmp_path: Path,
    model_dir: Path,
    specs: Sequence[NodeSpec],
    threads: int = 1,
    *,
    tracker: Mapping[str, Any] | None = None,
    audit: AuditSettings | None = None,
    claims: Mapping[int, float] | None = None,
) -> Iterator[AdversaryNetwork]:
    started: list[NodeProcess] = []
    liars: dict[str, str] = {}
    claimed: dict[str, float] = {}
    # no background certification: the routes here are planned directly (PURPOSE_CERTIFY)
    overrides: dict[str, Any] = {"reachability_poll_s": 0.05, "certifier_poll_s": 3600}
    overrides["trust_lone_ranges"] = False  # strangers' nodes: the public default
    overrides.update(tracker or {})
    app = create_app(make_settings(tmp_path, **overrides))
    try:
        for index, (start, end, lie) in enumerate(specs):
            env = {"MESHNET_TEST_LIE_MODULE": lie} if lie else {}
            node = start_node_process(model_dir, start, end, threads, **env)
            started.append(node)
            if lie:
                liars[node.node_id] = lie
            if claims and index in claims:
                claimed[node.node_id] = claims[index]
        with TestClient(app) as client:
            for node in started:
                claim = claimed.get(node.node_id)
                extra: dict[str, Any] = {} if claim is None else {"tokens_per_second": claim}
                response = register(client, node.fake, node.identity, **extra)
                assert response.status_code == 200, response.text
                node.trust(response.json()["tracker_public_key"])

            def reachable() -> bool:
                state = client.get("/api/v1/state").json()
                return sum(n["reachability"] == "reachable" for n in state["nodes"]) == len(started)

            wait_until(reachable, 120, "reachable nodes")
            auditor: Auditor = app.state.routing.auditor  # the tracker's own
            auditor.settings = audit or AuditSettings(
                rate=1.0,
                probation_rate=1.0,  # every step of a newcomer, inline
                timeout_s=60.0,  # a shared test machine: no audit skipped for time
                allow_private_endpoints=True,
                allow_plaintext_nodes=True,
            )
            yield AdversaryNetwork(app, client, started, liars, auditor, claimed)
    finally:
        for node in started:
            node.stop()
        app.state.tracker.database.dispose()
