"""A tracker worth looking at: a real tracker process on loopback with signed simulated
nodes, one model healthy on a certified recipe and one broken on a dark recipe.

Each simulated node answers the tracker's reachability challenge on its own port
(signed by its key, as a real node does), so the tracker lists it reachable; it has
no data plane beyond that. The certified recipe is promoted the way
test_server_process.py does it: evidence written through the tracker's own ledger.
Used by the status page's browser test and by status_screenshots.py.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from tests.tracker_service.conftest import beat, register
from tests.tracker_service.helpers import FakeNode, identity_block
from tests.tracker_service.server_process import TrackerProcess
from tracker_service.domain.recipe_identity import DistributedForwardEvidence, parse_identity
from tracker_service.services.reachability import CHALLENGE_PATH, challenge_message
from tracker_service.store.db import Database
from tracker_service.store.ledger import PersistentLedger

CERTIFIED_RECIPE = "smollm2-135m-fp32"
DARK_RECIPE = "smollm2-135m-fp16"
DARK_AXES = {"compute_dtype": "float16", "recipe_id": DARK_RECIPE}


def _challenge_handler(node: FakeNode) -> type[BaseHTTPRequestHandler]:
    class Challenge(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # the tracker's dial: prove the key on this port
            parts = urlsplit(self.path)
            nonce = parse_qs(parts.query).get("nonce", [""])[0]
            if parts.path != CHALLENGE_PATH or not nonce:
                self.send_error(404)
                return
            signature = node.key.sign(challenge_message(nonce, node.node_id))
            answer = {
                "node_id": node.node_id,
                "public_key": node.public_b64,
                "nonce": nonce,
                "signature": base64.b64encode(signature).decode(),
            }
            body = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the tracker dials every few seconds; the test log stays readable

    return Challenge


@dataclass
class SimNode:
    """A signed simulated node that answers the reachability challenge."""

    start: int
    end: int
    recipe: dict[str, Any] = field(default_factory=dict)
    artifact: dict[str, Any] = field(default_factory=dict)  # overrides of identity["artifact"]
    fake: FakeNode = field(init=False)
    server: ThreadingHTTPServer = field(init=False)

    def __post_init__(self) -> None:
        self.fake = FakeNode()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _challenge_handler(self.fake))
        self.fake.endpoint = f"ws://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def node_id(self) -> str:
        return self.fake.node_id

    @property
    def identity(self) -> dict[str, Any]:
        identity = identity_block(self.start, self.end, **self.recipe)
        identity["artifact"].update(self.artifact)
        return identity

    def join(self, client: httpx.Client, tokens_per_second: float = 42.5) -> None:
        answer = register(client, self.fake, self.identity, tokens_per_second=tokens_per_second)
        assert answer.status_code == 200, answer.text
        answer = beat(client, self.fake, load=0.2, open_sessions=1, tokens_served=128)
        assert answer.status_code == 200, answer.text

    def leave(self, client: httpx.Client) -> None:
        path = f"/api/v1/nodes/{self.node_id}/deregister"
        answer = client.post(path, content=b"", headers=self.fake.headers("POST", path, b""))
        assert answer.status_code == 200, answer.text

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def certify(db_url: str, first: SimNode, second: SimNode) -> None:
    """Promote the two nodes' recipe with evidence naming them, through the ledger."""
    head, tail = parse_identity(first.identity), parse_identity(second.identity)
    evidence = DistributedForwardEvidence(
        route_session_id="rs-status-page",
        route_epoch=1,
        node_ids=(first.node_id, second.node_id),
        shard_ranges=((first.start, first.end), (second.start, second.end)),
        tokens_generated=16,
        layer_count=head.layer_count,
        fingerprint=head.key,
        participants=(head, tail),
    )
    database = Database(db_url)
    try:
        PersistentLedger(database).certify(head, evidence)
    finally:
        database.dispose()


def wait_for(check: Callable[[], bool], what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


@dataclass
class Scene:
    tracker: TrackerProcess
    client: httpx.Client
    certified: tuple[SimNode, SimNode]
    dark: SimNode
    extra: list[SimNode] = field(default_factory=list)

    def state(self) -> Any:
        return self.client.get("/api/v1/state").json()

    def add_node(
        self, start: int, end: int, recipe: dict[str, Any], artifact: dict[str, Any] | None = None
    ) -> SimNode:
        node = SimNode(start, end, recipe, artifact or {})
        self.extra.append(node)
        node.join(self.client)
        return node

    def add_relayed_node(self, start: int, end: int, why: str) -> SimNode:
        """A node registered through the tracker's own relay, saying why; it holds no link,
        so the tracker finds it unreachable through the relay, as after a lost link."""
        node = SimNode(start, end)
        node.fake.endpoint = f"ws{self.tracker.url.removeprefix('http')}/relay/{node.node_id}"
        node.fake.relay_reason = why
        self.extra.append(node)
        node.join(self.client)
        return node

    def wait_reachable(self) -> None:
        def all_reachable() -> bool:
            return all(n["reachability"] == "reachable" for n in self.state()["nodes"] if n["live"])

        wait_for(all_reachable, "the tracker to dial every live node")


@contextmanager
def status_scene(home: Path, *, refresh_s: float = 1.0) -> Iterator[Scene]:
    """Two nodes serve the certified recipe (healthy); one half-serves the dark one (broken).

    ``refresh_s``: how often the page polls /api/v1/state (the tracker's default is 5).
    """
    db_url = f"sqlite:///{home / 'tracker.db'}"
    tracker = TrackerProcess(
        home,
        db_url,
        extra_args=("--trust-first-model-source",),  # the scene's own network
        MESHNET_TRACKER_STATUS_REFRESH_S=str(refresh_s),
    )
    nodes = [SimNode(0, 15), SimNode(15, 30), SimNode(0, 15, DARK_AXES)]
    tracker.start()
    try:
        with httpx.Client(base_url=tracker.url, timeout=10.0) as client:
            head, tail, dark = nodes
            head.join(client, tokens_per_second=38.2)
            tail.join(client, tokens_per_second=51.7)
            certify(db_url, head, tail)
            dark.join(client, tokens_per_second=12.4)
            scene = Scene(tracker, client, (head, tail), dark)
            try:
                yield scene
            finally:
                nodes += scene.extra
    finally:
        tracker.stop()
        for node in nodes:
            node.close()
