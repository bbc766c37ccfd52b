"""Three real nodes started without --layers cover the default model, and it certifies.

Each node's memory cap is below the whole model's size (issue 25: a model no single
computer holds), and the gateway's answer equals one-process generation.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import httpx
import pytest

from app.demo.processes import start_node, start_tracker
from core.doctor.hardware import footprint_from_shapes, tensor_shapes
from core.doctor.placement_advice import max_layers_anywhere
from core.one_process_generate import generate
from core.recipes.catalogue import load_catalogue
from core.runtime.config import ModelConfig
from core.runtime.dtypes import parse_dtype
from tests.e2e.conftest import Cluster

pytestmark = pytest.mark.slow

ROOM = 12  # layers each node has memory for: three of them are needed for 30 layers
PROMPT = "Name three colours of the rainbow."
MIB = 1024 * 1024


def _memory_cap_mb(model_dir: Path, layers: int) -> int:
    """The memory cap under which exactly `layers` layers fit anywhere in the model."""
    config = ModelConfig.from_folder(model_dir)
    recipe = load_catalogue().default_for(config.architecture, "cpu")
    footprint = footprint_from_shapes(
        tensor_shapes(model_dir),
        layer_count=config.num_layers,
        num_kv_heads=config.num_kv_heads,
        head_dim=config.head_dim,
        compute_itemsize=parse_dtype(recipe.compute_dtype).itemsize,
        kv_itemsize=parse_dtype(recipe.kv_dtype).itemsize,
    )
    n = config.num_layers
    places = [(0, layers), (n - layers, n), (1, 1 + layers)]
    cap_mb = math.ceil(max(footprint.needed_bytes(a, b) for a, b in places) / MIB)
    assert max_layers_anywhere(footprint, cap_mb * MIB) == layers
    assert cap_mb * MIB < footprint.needed_bytes(0, n), "a node could hold the whole model"
    return cap_mb


def _chat(url: str, prompt: str, max_tokens: int, timeout_s: float = 120.0) -> str:
    """A greedy answer through the gateway, once the model is listed there."""
    deadline = time.monotonic() + timeout_s
    while not httpx.get(url + "/v1/models", timeout=10).json().get("data"):
        assert time.monotonic() < deadline, "the gateway never listed the model"
        time.sleep(0.5)
    model = httpx.get(url + "/v1/models", timeout=10).json()["data"][0]["id"]
    body = {
        "model": model,
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": max_tokens,
        "temperature": 0,
    }
    reply = httpx.post(url + "/v1/chat/completions", json=body, timeout=300)
    assert reply.status_code == 200, reply.text
    return str(reply.json()["choices"][0]["message"]["content"])


def test_three_nodes_without_layers_cover_the_model_without_a_hole_and_certify_it(
    default_model_dir: Path, tmp_path: Path
) -> None:
    lines: list[tuple[str, object]] = []
    cap_mb = _memory_cap_mb(default_model_dir, ROOM)
    tracker, url = start_tracker(
        tmp_path, lambda name, line: lines.append((name, line)), heartbeat_s=1.0
    )
    children = [tracker]
    try:
        for index in (1, 2, 3):  # all at once: the tracker spreads nodes that ask together
            children.append(
                start_node(
                    index,
                    tmp_path,
                    url,
                    default_model_dir,
                    None,
                    lambda name, line: lines.append((name, line)),
                    extra=["--memory-cap-mb", str(cap_mb), "--device", "cpu"],
                )
            )
        cluster = Cluster(url, tmp_path, default_model_dir, children)
        state = cluster.wait_for(
            lambda s: any(r["status"] == "certified" for r in s.get("recipes", [])),
            timeout_s=420.0,
            what="three nodes placed by the tracker to certify the recipe",
        )
        ranges = sorted((n["shard_start"], n["shard_end"]) for n in state["nodes"])
        assert len(ranges) == 3 and all(end - start <= ROOM for start, end in ranges)
        covered = set()
        for start, end in ranges:
            covered |= set(range(start, end))
        assert covered == set(range(30)), (
            f"layers left uncovered: {sorted(set(range(30)) - covered)}"
        )
        placements = [
            line
            for name, line in lines
            if name.startswith("node")
            and isinstance(line, dict)
            and line.get("gate") == "placement"
        ]
        chosen = [p for p in placements if p["data"]["source"] == "tracker"]
        assert len(chosen) == 3  # each node asked once, and the tracker answered
        assert all(p["gate_state"] == "passed" for p in chosen)
        assert all(p["message"].startswith("Layers ") for p in chosen)
        # On a loaded machine a node may ask before another's range is known, and the
        # tracker then moves one to close the hole that leaves (rebalancing): only that.
        moves = [p for p in placements if p not in chosen]
        assert all(
            p["data"]["source"] == "rebalance" and "uncovered layer" in p["message"] for p in moves
        ), moves
        # No node could hold the model, and together they answer as one process does.
        whole = generate(str(default_model_dir), PROMPT, 12, chat=True)
        assert _chat(url, PROMPT, 12) == whole.text
    finally:
        for child in reversed(children):
            child.stop()


def test_two_whole_model_nodes_started_apart_without_layers_certify_the_recipe(
    default_model_dir: Path, tmp_path: Path
) -> None:
    """Issue 22/35: each node can hold all 30 layers. Both take the whole model (each
    replays the other), the certifier runs A over [0, k) and B over [k, 30), and a
    tracker that checks its nodes (no --trust-lone-ranges) answers a chat."""
    lines: list[tuple[str, object]] = []
    tracker, url = start_tracker(
        tmp_path,
        lambda name, line: lines.append((name, line)),
        heartbeat_s=1.0,
        trust_lone_ranges=False,  # the public default
    )
    children = [tracker]
    try:
        cluster = Cluster(url, tmp_path, default_model_dir, children)
        for index in (1, 2):  # one after the other, as strangers join
            children.append(
                start_node(
                    index,
                    tmp_path,
                    url,
                    default_model_dir,
                    None,
                    lambda name, line: lines.append((name, line)),
                    extra=["--device", "cpu"],
                )
            )
            cluster.wait_for(
                lambda s, n=index: len(s.get("nodes", [])) == n,
                timeout_s=300.0,
                what=f"node {index} to register",
            )
        state = cluster.wait_for(
            lambda s: any(r["status"] == "certified" for r in s.get("recipes", [])),
            timeout_s=300.0,
            what="two whole-model nodes placed by the tracker to certify the recipe",
        )
        ranges = sorted((n["shard_start"], n["shard_end"]) for n in state["nodes"])
        assert ranges == [(0, 30), (0, 30)], ranges  # no lone range: each replays the other
        placements = [
            line
            for name, line in lines
            if name == "node 2" and isinstance(line, dict) and line.get("gate") == "placement"
        ]
        assert placements and placements[-1]["data"]["source"] == "tracker"
        assert "chain of two or more" in placements[-1]["message"]
        assert _chat(url, PROMPT, 8)  # served by a route that another node can replay
    finally:
        for child in reversed(children):
            child.stop()
