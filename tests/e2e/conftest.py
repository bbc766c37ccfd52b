"""A real tracker and two real node processes on loopback, shared by the e2e tests."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from app.demo.processes import Child, start_node, start_tracker


@dataclass
class Cluster:
    url: str
    workdir: Path
    model_dir: Path
    children: list[Child]
    events: list[tuple[str, object]] = field(default_factory=list)

    def state(self) -> dict:
        return dict(httpx.get(self.url + "/api/v1/state", timeout=5).json())

    def wait_for(self, predicate, timeout_s: float = 240.0, what: str = "condition") -> dict:
        deadline = time.monotonic() + timeout_s
        state: dict = {}
        while time.monotonic() < deadline:
            for child in self.children:
                assert child.exited is None, f"{child.name} exited with {child.exited}"
            state = self.state()
            if predicate(state):
                return state
            time.sleep(0.5)
        raise AssertionError(f"timed out waiting for {what}; last state: {state}")


@pytest.fixture(scope="module")
def cluster(default_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    workdir = tmp_path_factory.mktemp("cluster")
    events: list[tuple[str, object]] = []

    def on_line(name: str, line: object) -> None:
        events.append((name, line))

    tracker, url = start_tracker(workdir, on_line, heartbeat_s=1.0)
    children = [tracker]
    try:
        for index, layers in enumerate([(0, 15), (15, 30)], start=1):
            children.append(start_node(index, workdir, url, default_model_dir, layers, on_line))
        cluster = Cluster(url, workdir, default_model_dir, children, events)
        cluster.wait_for(
            lambda s: any(r["status"] == "certified" for r in s.get("recipes", [])),
            what="the recipe to be certified",
        )
        yield cluster
    finally:
        for child in reversed(children):
            child.stop()
