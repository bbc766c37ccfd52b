"""The gateway and the nodes' prefix caches: a second request sharing a prompt's start is
routed to the nodes that hold it (prefix affinity), which take its blocks from their
caches, and the answer is the one the uncached model gives."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from tests.tracker_service.gateway_cluster import (
    MODEL,
    GatewayCluster,
    build_chat_model,
    greedy_ids,
    start_cluster,
)
from tests.tracker_service.real_nodes import RealNode

BUDGET = 8 * 2**20  # a KV budget: each node keeps a prefix cache inside it
NEW_TOKENS = 4


@pytest.fixture
def cluster(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Iterator[GatewayCluster]:
    model = build_chat_model(tmp_path_factory.mktemp("prefix-cache-chat"))
    cluster = start_cluster(tmp_path, model)
    try:
        yield cluster
    finally:
        cluster.stop()


def hit_blocks(node: RealNode) -> int:
    cache = node.sessions.prefix_cache
    assert cache is not None
    return cache.stats.hit_blocks


def test_requests_sharing_a_prefix_go_to_the_nodes_that_cached_it(
    cluster: GatewayCluster,
) -> None:
    head = cluster.add_node(0, 2, kv_budget_bytes=BUDGET)
    tails = [cluster.add_node(2, 4, kv_budget_bytes=BUDGET) for _ in range(2)]
    cluster.wait_certified()
    recipe = next(r for r in cluster.recipes() if r["status"] == "certified")
    key = (recipe["model_artifact_digest"], recipe["runtime_recipe_digest"])
    affinity = cluster.app.state.gateway.affinity
    client = openai.OpenAI(base_url=cluster.base_url, api_key="unused", max_retries=0)
    for k in range(4):
        # 7 whole blocks: long enough that their cached prefill outweighs the load the
        # previous requests left on the target (prefix_affinity.PrefixHint.slack)
        shared = [10 + (7 * i + k) % 200 for i in range(112)]
        # as if an earlier request had left this prefix on tail k % 2: whichever tail the
        # planner would pick on its own (two equal nodes), the affinity decides
        target = tails[k % 2]
        affinity.record(key, shared, [head.node_id, target.node_id])
        for last in (1, 2):
            prompt = [*shared, last]
            before = {id(n): hit_blocks(n) for n in (head, *tails)}
            raw = client.completions.with_raw_response.create(
                model=MODEL, prompt=prompt, max_tokens=NEW_TOKENS, temperature=0
            )
            assert f"{target.node_id}:2-4" in raw.headers["X-Meshnet-Route"]
            want = greedy_ids(cluster.model_dir, prompt, NEW_TOKENS)
            assert raw.parse().choices[0].text == _decode(cluster, want)
        # the second request found the blocks the first left on both hops
        assert hit_blocks(head) - before[id(head)] == 7
        assert hit_blocks(target) - before[id(target)] >= 7


def _decode(cluster: GatewayCluster, ids: list[int]) -> str:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(cluster.model_dir / "tokenizer.json"))
    return str(tokenizer.decode(ids))
