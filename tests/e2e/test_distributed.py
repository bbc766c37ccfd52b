"""Two real node processes and a real tracker on loopback, on the real default model."""

from __future__ import annotations

import asyncio
import base64
import subprocess
import sys
import time
from typing import Any

import pytest
import torch

from app.demo.processes import start_node
from core.errors import ProtocolError
from core.identity.keypair import NodeIdentity
from core.identity.signing import ROUTE_TICKET_DOMAIN
from core.models.tokenizer import ChatTokenizer
from tests.e2e.conftest import Cluster
from tests.support.documents import sign_document
from tests.support.hop_client import HopClient
from tests.support.route import RouteSession, hops_from_route, request_route

pytestmark = pytest.mark.slow


def _certified(cluster: Cluster) -> dict[str, Any]:
    return next(r for r in cluster.state()["recipes"] if r["status"] == "certified")


# Each node's TLS pin as its route hops publish it (docs/wire.md#tls), by endpoint.
PINS: dict[str, str] = {}


def _route(cluster: Cluster) -> dict[str, Any]:
    route = asyncio.run(request_route(cluster.url, _certified(cluster)))
    PINS.update({str(h["endpoint"]): str(h.get("tls_pin") or "") for h in route["hops"]})
    return route


def _tracker_identity(cluster: Cluster) -> NodeIdentity:
    """The tracker's own signing key, read from its data folder (to forge precisely)."""
    seed = base64.b64decode((cluster.workdir / "tracker" / "tracker_key").read_text().strip())
    return NodeIdentity.from_seed(seed)


def test_recipe_is_certified_by_two_distinct_nodes(cluster: Cluster) -> None:
    recipe = _certified(cluster)
    assert recipe["certified_node_count"] >= 2
    assert recipe["certified_route_session"]
    live = [n for n in cluster.state()["nodes"] if n["live"]]
    assert {(n["shard_start"], n["shard_end"]) for n in live} == {(0, 15), (15, 30)}
    listing = subprocess.run(
        [sys.executable, "-m", "tracker_service.cli", "recipes", "--db",
         f"sqlite:///{cluster.workdir / 'tracker.db'}"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert "certified" in listing.stdout
    assert recipe["recipe_id"] in listing.stdout


def test_greedy_generation_through_the_route_equals_transformers(cluster: Cluster) -> None:
    transformers = pytest.importorskip("transformers")
    tokenizer = ChatTokenizer.from_folder(cluster.model_dir)
    prompt = tokenizer.encode_chat([{"role": "user", "content": "Name three colours."}])
    new_tokens = 24
    route = _route(cluster)

    async def through_route() -> list[int]:
        hops = hops_from_route(route)
        produced = []
        async with RouteSession(
            hops, route["ticket"], max_length=len(prompt) + new_tokens + 1
        ) as session:
            async for token in session.generate(prompt, new_tokens):
                produced.append(token)
            receipts = await session.close()
        assert len(receipts) == 2
        return produced

    ours = asyncio.run(through_route())
    model = transformers.AutoModelForCausalLM.from_pretrained(cluster.model_dir).eval()
    with torch.inference_mode():
        out = model.generate(
            torch.tensor([prompt]),
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            do_sample=False,
        )
    assert ours == out[0, len(prompt) :].tolist()


async def _refused(
    endpoint: str,
    ticket: dict[str, Any],
    frame_tensors: Any = None,
    position: int = 0,
    max_length: int = 64,
    raw: bytes | None = None,
) -> str:
    client = HopClient(endpoint, tls_pin=PINS.get(endpoint))
    try:
        await client.open(ticket, max_length)
        if raw is not None:
            await client.step_bytes(raw)
        else:
            await client.step(frame_tensors, position)
    except ProtocolError as exc:
        return exc.reason
    finally:
        await client.abort()
    return "accepted"


def _first_hop(route: dict[str, Any]) -> str:
    return str(route["hops"][0]["endpoint"])


def _resign(cluster: Cluster, ticket: dict[str, Any], **changes: Any) -> dict[str, Any]:
    body = dict(ticket["ticket"]) | changes
    return {
        "ticket": body,
        "signature": sign_document(_tracker_identity(cluster), ROUTE_TICKET_DOMAIN, body),
    }


def test_each_bad_session_ends_with_a_reason_and_the_node_keeps_serving(cluster: Cluster) -> None:
    route = _route(cluster)
    ticket = route["ticket"]
    endpoint = _first_hop(route)
    second = str(route["hops"][1]["endpoint"])
    ids = {"input_ids": torch.tensor([[1, 2, 3]], dtype=torch.int64)}
    forged = dict(ticket) | {"signature": base64.b64encode(bytes(64)).decode()}
    expired = _resign(cluster, ticket, expires_at=time.time() - 5)
    other_node = _resign(cluster, ticket, hops=[h for h in ticket["ticket"]["hops"][1:]])
    hops = [dict(h) for h in ticket["ticket"]["hops"]]
    hops[0]["end"] = hops[0]["end"] - 1
    other_range = _resign(cluster, ticket, hops=hops)
    hidden = torch.zeros((1, 3, 999), dtype=torch.float32)

    cases = {
        "missing": asyncio.run(_refused(endpoint, None, ids)),  # type: ignore[arg-type]
        "forged": asyncio.run(_refused(endpoint, forged, ids)),
        "expired": asyncio.run(_refused(endpoint, expired, ids)),
        "other node": asyncio.run(_refused(endpoint, other_node, ids)),
        "other range": asyncio.run(_refused(endpoint, other_range, ids)),
        # A ticket opens one session per hop: each session below has a route of its own.
        "oversized": asyncio.run(_refused(endpoint, ticket, raw=b"\0" * (80 * 1024 * 1024))),
        "hidden size": asyncio.run(_refused(second, ticket, {"hidden": hidden})),
        "past max_length": asyncio.run(
            _refused(
                _first_hop(again := _route(cluster)),
                again["ticket"],
                {"input_ids": torch.ones((1, 70), dtype=torch.int64)},
            )
        ),
        "reused ticket": asyncio.run(_refused(endpoint, ticket, ids)),
    }
    assert cases["missing"] == "bad-ticket"
    assert cases["forged"] == "bad-ticket"
    assert cases["expired"] == "ticket-expired"
    assert cases["other node"] == "wrong-node"
    assert cases["other range"] == "wrong-range"
    assert cases["oversized"] == "frame-too-large"
    assert cases["hidden size"] == "bad-shape"
    assert cases["past max_length"] == "position-out-of-range"
    assert cases["reused ticket"] == "bad-ticket"
    # Both node processes are still up and still serve a good route.
    for child in cluster.children:
        assert child.exited is None
    test_greedy_generation_through_the_route_equals_transformers(cluster)


def test_node_whose_admission_fails_never_appears_in_state(cluster: Cluster) -> None:
    lines: list[object] = []
    child = start_node(
        9,
        cluster.workdir,
        cluster.url,
        cluster.model_dir,
        (25, 40),
        lambda _n, line: lines.append(line),
    )
    try:
        child.process.wait(timeout=120)
    finally:
        child.stop()
    assert child.exited == 2
    refused = [e for e in lines if isinstance(e, dict) and e.get("state") == "refused"]
    assert refused and refused[0]["reason"] == "bad-layers"
    assert refused[0]["message"].startswith("This model has 30 layers")
    assert not any(isinstance(e, str) and "Traceback" in e for e in lines)
    ranges = {(n["shard_start"], n["shard_end"]) for n in cluster.state()["nodes"]}
    assert (25, 40) not in ranges
