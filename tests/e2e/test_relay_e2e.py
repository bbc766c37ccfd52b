"""The relay's proof on real processes, with a real home router.

A "home" node runs in a network namespace of its own whose nftables firewall
drops inbound connections (outbound allowed), joined to the root namespace by a
veth pair on the test's own 10.77.x.x addresses. The tracker, a relay process
(``meshnet-tracker relay``) and the other nodes run in the root namespace.

- the tracker finds the home node unreachable; the node opens its link to the
  relay the tracker offers and registers the relayed endpoint; the tracker
  dials it through the relay and the recipe certifies through it;
- a greedy answer through the mesh (the home node's hop relayed) equals
  transformers' greedy answer on the same weights, which is what the mesh
  answers with no firewall at all (tests/e2e/test_gateway_e2e.py);
- the relay is killed mid-stream: the gateway's failover finishes the answer on
  a direct node, unchanged; a relay back on the same address is reconnected to
  by the home node, which the tracker then reaches through it again.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.demo.processes import Child, child_env, free_port
from tests.e2e.home_router import HomeNetwork, unavailable
from tests.e2e.test_gateway_e2e import NEW_TOKENS, QUESTION, greedy_answer
from tests.support.node_lines import registered_node_id

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Mesh:
    home_net: HomeNetwork
    workdir: Path
    model_dir: Path
    url: str
    relay_port: int
    api_key: str = ""
    children: dict[str, Child] = field(default_factory=dict)
    node_ids: dict[str, str] = field(default_factory=dict)  # child name -> node id
    events: list[tuple[str, Any]] = field(default_factory=list)

    @property
    def relay_url(self) -> str:
        return f"ws://{self.home_net.root_address}:{self.relay_port}/relay"

    def state(self) -> dict[str, Any]:
        return dict(httpx.get(self.url + "/api/v1/state", timeout=10, trust_env=False).json())

    def node(self, name: str) -> dict[str, Any]:
        node_id = self.node_ids[name]
        return next(n for n in self.state()["nodes"] if n["node_id"] == node_id)

    def wait_for(self, predicate: Any, what: str, timeout_s: float = 300.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for name, child in self.children.items():
                if name != "relay":
                    assert child.exited is None, f"{name} exited with {child.exited}"
            if predicate():
                return
            time.sleep(0.5)
        raise AssertionError(f"timed out waiting for {what}; state: {self.state()}")

    def start_relay(self) -> None:
        argv = [sys.executable, "-m", "tracker_service.cli", "relay"]
        argv += ["--host", self.home_net.root_address, "--port", str(self.relay_port)]
        self.children["relay"] = Child(
            "relay", argv, child_env(PYTHONPATH=str(REPO)), self.workdir / "relay.log", self.line
        )
        deadline = time.monotonic() + 60
        health = f"http://{self.home_net.root_address}:{self.relay_port}/healthz"
        while time.monotonic() < deadline:
            try:
                if httpx.get(health, timeout=2, trust_env=False).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise AssertionError("the relay process did not answer")

    def start_node(self, name: str, layers: str, *, home: bool = False) -> None:
        host = self.home_net.home_address if home else self.home_net.root_address
        folder = self.workdir / name
        argv = [
            sys.executable, "-m", "app.cli.node", "run", "--tracker", self.url,
            "--model", str(self.model_dir), "--layers", layers, "--host", host,
            "--identity-file", str(folder / "identity.key"), "--events", "json",
        ]  # fmt: skip
        if home:
            argv = self.home_net.prefix() + argv
        env = child_env(MESHNET_HOME=str(folder), PYTHONPATH=str(REPO))
        self.children[name] = Child(name, argv, env, self.workdir / f"{name}.log", self.line)
        self.wait_for(lambda: name in self.node_ids, f"{name} to register", 300)

    def line(self, name: str, line: object) -> None:
        self.events.append((name, line))
        if (node_id := registered_node_id(line)) is not None:
            self.node_ids[name] = node_id

    def relay_states(self, name: str) -> list[str]:
        return [
            str(line["data"]["relay_state"])
            for who, line in self.events
            if who == name and isinstance(line, dict) and "relay_state" in line.get("data", {})
        ]

    def model(self) -> str:
        recipes = self.state()["recipes"]
        return str(next(r for r in recipes if r["status"] == "certified")["artifact_id"])


def issue_key(workdir: Path) -> str:
    db = f"sqlite:///{workdir / 'tracker.db'}"
    result = subprocess.run(
        [sys.executable, "-m", "tracker_service.cli", "keys", "add", "--label", "relay-e2e",
         "--db", db],
        capture_output=True, text=True, timeout=120, cwd=REPO, env=child_env(PYTHONPATH=str(REPO)),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def mesh(default_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    why = unavailable()
    if why is not None:
        pytest.skip(f"cannot build the home router's namespace: {why}")
    workdir = tmp_path_factory.mktemp("relay-e2e")
    with HomeNetwork.create() as home_net:
        port = free_port()
        mesh = Mesh(
            home_net, workdir, default_model_dir, f"http://{home_net.root_address}:{port}",
            free_port(),
        )  # fmt: skip
        try:
            mesh.start_relay()
            env = child_env(
                PYTHONPATH=str(REPO),
                MESHNET_TRACKER_DATA_DIR=str(workdir / "tracker"),
                MESHNET_TRACKER_HEARTBEAT_INTERVAL_S="1",
                MESHNET_TRACKER_REACHABILITY_TIMEOUT_S="2",
                MESHNET_TRACKER_REACHABILITY_RETRY_S="1",
                MESHNET_TRACKER_CERTIFIER_POLL_S="1",
                MESHNET_TRACKER_AUDIT_RATE="0",
                MESHNET_TRACKER_AUDIT_PROBATION_RATE="0",  # a relay test: no audits at all
            )
            argv = [
                sys.executable, "-m", "tracker_service.cli", "serve",
                "--host", home_net.root_address, "--port", str(port),
                "--db", f"sqlite:///{workdir / 'tracker.db'}",
                "--allow-private-endpoints",  # the test's own 10.77.x.x addresses
                "--relay-url", mesh.relay_url,
                "--trust-first-model-source",  # the test's own network
                "--trust-lone-ranges",  # one node a range, all the test's own
            ]  # fmt: skip
            mesh.children["tracker"] = Child(
                "tracker", argv, env, workdir / "tracker.log", mesh.line
            )
            mesh.wait_for(lambda: _answers(mesh.url + "/api/v1/state"), "the tracker", 60)
            mesh.api_key = issue_key(workdir)  # the gateway is not on loopback here
            mesh.start_node("home", "0:15", home=True)
            mesh.start_node("upper", "15:30")
            yield mesh
        finally:
            for child in reversed(list(mesh.children.values())):
                child.stop()


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2, trust_env=False).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def expected(mesh: Mesh) -> str:
    return greedy_answer(mesh.model_dir, NEW_TOKENS)


def chat_stream(
    mesh: Mesh, *, on_token: Any = None, want_first_hop: str | None = None
) -> tuple[str, str] | None:
    """Stream a greedy chat; (text, route header). None when ``want_first_hop`` is set
    and the gateway chose another first hop (the stream is dropped at once)."""
    body = {
        "model": mesh.model(),
        "messages": [{"role": "user", "content": QUESTION}],
        "max_tokens": NEW_TOKENS,
        "temperature": 0,
        "stream": True,
    }
    headers = {"Authorization": f"Bearer {mesh.api_key}"}
    text: list[str] = []
    with (
        httpx.Client(timeout=300, trust_env=False) as http,
        http.stream("POST", mesh.url + "/v1/chat/completions", json=body, headers=headers) as reply,
    ):
        assert reply.status_code == 200, reply.read()
        route = reply.headers["X-Meshnet-Route"]
        if want_first_hop is not None and route.split(",")[0].split(":")[0] != want_first_hop:
            return None
        for line in reply.iter_lines():
            if not line.startswith("data:") or line == "data: [DONE]":
                continue
            event = json.loads(line[5:])
            assert "error" not in event, event
            for choice in event["choices"]:
                if choice["delta"].get("content"):
                    text.append(choice["delta"]["content"])
                    if on_token is not None:
                        on_token(len(text))
    return "".join(text), route


def test_the_firewalled_node_serves_through_the_relay_and_the_recipe_certifies(
    mesh: Mesh,
) -> None:
    mesh.wait_for(
        lambda: any(r["status"] == "certified" for r in mesh.state()["recipes"]),
        "the recipe to be certified through the relay",
    )
    home = mesh.node("home")
    assert home["endpoint"] == f"{mesh.relay_url}/{mesh.node_ids['home']}"
    assert home["reachability"] == "reachable"
    assert "through its relay" in home["reachability_reason"]
    assert home["relay"]["url"] == mesh.relay_url
    assert home["relay"]["reason"].startswith("serving through a relay")
    # Why, in the node's own words: the tracker's failed dial, stored with its registration.
    assert home["relay"]["why"].startswith("the tracker could not dial this node directly")
    assert home["relay"]["why"] in home["relay"]["reason"]
    # The node first found itself unreachable (the firewall), and says so.
    gates = [
        line
        for who, line in mesh.events
        if who == "home" and isinstance(line, dict) and line.get("gate") == "reachability"
    ]
    assert any("could not dial this node directly" in str(g.get("message")) for g in gates)
    page = httpx.get(mesh.url + "/", timeout=10, trust_env=False).text
    assert "Serving through a relay" in page
    # Only the home node serves layers 0-15: certification ran through the relay.
    assert {n["node_id"] for n in mesh.state()["nodes"] if n["shard_start"] == 0} == {
        mesh.node_ids["home"]
    }


def test_a_greedy_answer_through_the_relay_equals_the_unfirewalled_answer(
    mesh: Mesh, expected: str
) -> None:
    answered = chat_stream(mesh)
    assert answered is not None
    text, route = answered
    assert route.split(",")[0].split(":")[0] == mesh.node_ids["home"]
    assert expected.strip() and text == expected


def test_killing_the_relay_mid_stream_fails_over_and_the_node_reconnects_after(
    mesh: Mesh, expected: str
) -> None:
    mesh.start_node("lower", "0:15")  # a direct node the gateway can fail over to
    mesh.wait_for(lambda: mesh.node("lower")["reachability"] == "reachable", "lower reachable")
    killed: list[float] = []

    def kill_relay(tokens: int) -> None:
        if tokens == 6 and not killed:
            mesh.children["relay"].process.send_signal(signal.SIGKILL)
            killed.append(time.monotonic())

    answered = None
    for _ in range(12):  # the planner spreads routes: wait for one through the relay
        answered = chat_stream(mesh, on_token=kill_relay, want_first_hop=mesh.node_ids["home"])
        if answered is not None:
            break
    assert answered is not None, "the gateway never routed through the relayed node"
    assert killed, "the relay was not killed mid-stream"
    assert answered[0] == expected  # the failover finished the answer, unchanged
    mesh.children["relay"].stop()
    before = mesh.relay_states("home").count("connected")
    mesh.start_relay()  # a relay is back on the same address
    mesh.wait_for(
        lambda: mesh.relay_states("home").count("connected") > before,
        "the home node to reconnect to the relay",
        120,
    )
    assert "reconnecting" in mesh.relay_states("home")
    mesh.wait_for(
        lambda: mesh.node("home")["reachability"] == "reachable",
        "the tracker to reach the home node through the relay again",
        120,
    )
