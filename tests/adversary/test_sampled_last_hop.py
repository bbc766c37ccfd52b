"""Issue 35, attack 2: a last hop was never audited while sampling.

The liar (tests/support/lies/sampling_only.py) is honest on greedy sessions and, on
every sampled one, chooses the token itself (in ``token_ids`` and first in ``top_ids``).
The OpenAI default temperature is 1.0, so that is most real traffic. Now every sampled
answer is drawn at the gateway from a greedy last hop's top log-probs, so the last hop's
reply is a deterministic function of its inputs: the audit replays it like a greedy one
and the liar is quarantined at its first sampled step. A seeded request still gives the
same answer, twice.

Real node processes of the default model: two honest on the whole model, one liar.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.adversary_network import adversary_network, routed_nodes
from tracker_service.services.session_plan import Sampling

pytestmark = pytest.mark.slow

PROMPT = [504, 3458, 282, 4649, 314]  # a few ids of the default model's vocabulary
NEW_TOKENS = 6
SAMPLED = Sampling(temperature=1.0, top_p=0.95, seed=3)  # what a chat request opens


def test_a_last_hop_that_lies_only_when_sampling_is_audited_and_quarantined(
    tmp_path: Path, default_model_dir: Path
) -> None:
    specs = [(0, 30, None), (0, 30, None), (0, 30, "sampling_only")]
    with adversary_network(tmp_path, default_model_dir, specs) as net:
        liar = net.liar
        lied_answer, generation = net.generate(PROMPT, NEW_TOKENS, SAMPLED, force=liar)
        assert routed_nodes(generation)[0] == [liar]
        assert net.state(liar) == "quarantined"
        # The seeded answer is what honest nodes give for that seed, every time.
        first, first_run = net.generate(PROMPT, NEW_TOKENS, SAMPLED)
        second, second_run = net.generate(PROMPT, NEW_TOKENS, SAMPLED)
        assert lied_answer == first == second
        for route in routed_nodes(generation)[1:] + routed_nodes(first_run):
            assert liar not in route
        assert all(liar not in route for route in routed_nodes(second_run))
        for node_id in net.honest:
            assert net.state(node_id) == "active"
            assert not net.withdrawn(node_id)
        assert net.earned(liar) == 0.0
        assert any(net.earned(node_id) > 0 for node_id in net.honest)
