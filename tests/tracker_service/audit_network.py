"""What the certification and hop-audit tests share: real nodes joined to a real tracker
app, an auditor that audits every step, a liar's perturbed replies, and a chat through
one route session. The fixtures that start the nodes are in tests/tracker_service/conftest.py.
"""

from __future__ import annotations

import asyncio
import base64
import random
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from tests.support.lies.rate import Lie
from tests.tracker_service.conftest import make_settings, register
from tests.tracker_service.node_process import NodeProcess
from tests.tracker_service.real_nodes import RealNode
from tracker_service.domain.tickets import HopReceipt
from tracker_service.services.hop_audit import Auditor, AuditSettings
from tracker_service.services.route_session import RoutePlan, RouteSession
from tracker_service.services.session_plan import Sampling

PROMPT = [1, 2, 3, 4, 5]


def fast_settings(tmp_path: Path, **overrides: Any) -> Any:
    """A tracker that dials and certifies at once, and does not retry a failure soon."""
    return make_settings(
        tmp_path,
        reachability_poll_s=0.05,
        certifier_poll_s=0.2,
        certifier_backoff_s=60.0,
        **overrides,
    )


def join(client: TestClient, node: RealNode) -> None:
    """Register with a signed request, then trust the tracker key it answers with."""
    response = register(client, node.as_fake_node(), node.identity)
    assert response.status_code == 200, response.text
    node.tracker_key[0] = base64.b64decode(response.json()["tracker_public_key"])


def join_processes(client: TestClient, routing: Any, *nodes: NodeProcess) -> None:
    """Register node processes, trust the tracker's key in each, and dial them once."""
    for node in nodes:
        response = register(client, node.fake, node.identity)
        assert response.status_code == 200, response.text
        node.trust(response.json()["tracker_public_key"])
    asyncio.run(routing.monitor.check_due())


def join_and_certify(client: TestClient, app: Any, nodes: list[RealNode]) -> None:
    """Join every node, dial them once, and certify their recipe in one pass."""
    routing = app.state.routing
    for node in nodes:
        join(client, node)
    asyncio.run(routing.monitor.check_due())
    assert reachable(client, len(nodes))
    [attempt] = asyncio.run(routing.certifier.run_pass())
    assert attempt.certified, attempt.message


def recipe_of(client: TestClient, node: RealNode) -> dict[str, Any]:
    state = client.get("/api/v1/state").json()
    return dict(
        next(r for r in state["recipes"] if r["runtime_recipe_digest"] == node.fingerprint[1])
    )


def node_view(client: TestClient, node: RealNode | NodeProcess) -> dict[str, Any]:
    return dict(client.get(f"/api/v1/nodes/{node.node_id}").json())


def reachable(client: TestClient, count: int) -> bool:
    """At least ``count`` nodes have been dialled and answered."""
    state = client.get("/api/v1/state").json()
    return sum(1 for n in state["nodes"] if n["reachability"] == "reachable") >= count


def make_liar(node: RealNode, rate: float = 1.0) -> None:
    """The node perturbs its replies on ``rate`` of its steps (tests/support/lies/rate.py)."""
    node.server._ctx.lie = Lie(rate, 0.05, random.Random(7))  # type: ignore[attr-defined]


def every_step_auditor(app: Any, seed: int, *, disputes: bool = False, **settings: Any) -> Auditor:
    """An auditor of every step of every node, new or established, for the loopback nodes
    (private addresses, plain ws://); ``disputes`` hands its disagreements to the board."""
    return Auditor(
        app.state.tracker.database,
        app.state.tracker.key,
        AuditSettings(
            rate=1.0,
            probation_rate=1.0,
            allow_private_endpoints=True,
            allow_plaintext_nodes=True,  # the real test nodes serve ws://
            **settings,
        ),
        rng=random.Random(seed),
        disputes=app.state.routing.disputes if disputes else None,
    )


async def generate(
    plan: Any,
    auditor: Auditor,
    new_tokens: int = 6,
    *,
    chain: bool = False,
    credited: list[HopReceipt] | None = None,
) -> list[int]:
    """A greedy chat of ``new_tokens`` after PROMPT through one route session; the receipts
    it would credit are appended to ``credited``."""
    on_receipts: Callable[[RoutePlan, Sequence[HopReceipt]], Awaitable[None]] | None = None
    if credited is not None:
        into = credited

        async def on_receipts(_: RoutePlan, receipts: Sequence[HopReceipt]) -> None:
            into.extend(receipts)

    async with RouteSession(plan, auditor=auditor, chain=chain, on_receipts=on_receipts) as session:
        await session.open(len(PROMPT) + new_tokens, Sampling(temperature=0.0))
        assert session.chained == chain
        tokens = [t.token_id async for t in session.generate(PROMPT, new_tokens)]
        await session.close()
    return tokens
