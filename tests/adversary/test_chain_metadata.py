"""Issue 35, attack 5: a chain hop corrupts its successor and gets it convicted.

The liar (tests/support/lies/chain_metadata.py) is the first hop of a chained route and
forwards the right hidden states with ``rewind=1, position=0``: its honest successor
drops its cache and answers wrongly. Every step on a link is now signed by the hop that
passes it, over its tensor bytes *and* the position, rewind, verify and draft; the
successor shows that signature to the client with its reply, and the client, which knows
the step it sent, finds the liar's own signature over a step it forged: the liar is
quarantined on that proof, its wrong token is never served, and the successor is neither
convicted nor withdrawn.

Real node processes of the default model split in two: the liar and two honest nodes on
layers 0-15 (once the liar is gone, the two check each other: a range only one new node
holds serves no user), two honest nodes on 15-30; chained routes (loopback nodes dial
each other).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.adversary_network import adversary_network, routed_nodes
from tracker_service.services.session_plan import Sampling

pytestmark = pytest.mark.slow

PROMPT = [504, 3458, 282, 4649, 314]  # a few ids of the default model's vocabulary
NEW_TOKENS = 5
GREEDY = Sampling(temperature=0.0)


def test_a_chain_hop_that_forges_its_successors_position_is_convicted_by_its_signature(
    tmp_path: Path, default_model_dir: Path
) -> None:
    specs = [
        (0, 15, "chain_metadata"),
        (0, 15, None),
        (0, 15, None),
        (15, 30, None),
        (15, 30, None),
    ]
    with adversary_network(tmp_path, default_model_dir, specs) as net:
        liar = net.liar
        lied_answer, generation = net.generate(PROMPT, NEW_TOKENS, GREEDY, force=liar, chain=True)
        first_route = routed_nodes(generation)[0]
        assert first_route[0] == liar
        assert generation.stats.shape == "chain" or len(generation.stats.routes) > 1
        assert net.state(liar) == "quarantined"
        shown = net.client.get(f"/api/v1/nodes/{liar}").json()
        assert shown["quarantine_evidence"]["kind"] == "chain-step-forged"
        assert shown["quarantine_evidence"]["statement"]["from"] == liar
        # The answer is the honest one: nothing computed on the forged step was served.
        honest_answer, honest_run = net.generate(PROMPT, NEW_TOKENS, GREEDY, chain=True)
        assert lied_answer == honest_answer
        for route in routed_nodes(generation)[1:] + routed_nodes(honest_run):
            assert liar not in route
        successor = first_route[1]
        for node_id in net.honest:
            assert net.state(node_id) == "active"
            assert not net.withdrawn(node_id)
        assert net.state(successor) == "active"
        assert net.earned(liar) == 0.0
        assert net.earned(successor) > 0 or any(net.earned(n) > 0 for n in net.honest)
