"""Issue 35, attack 1: the last hop decides sampled tokens unchecked.

Whenever the gateway samples (json_schema, logprobs, penalties, logit_bias) it draws from
the last hop's ``top_ids``/``top_logprobs``. A liar (tests/support/lies/top_ids.py)
answers the honest greedy token in ``token_ids`` but promotes another token to the head
of ``top_ids``, and signs its receipts consistently. Its signed reply binds the whole
list, and the audit compares the list within the recipe's tolerance: the liar is
quarantined at its first audited step, before its list reaches the sampler.

Real node processes of the default model, three on the whole model (two honest, one
liar), the tracker's own auditor at rate 1 (a newcomer is audited inline).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.adversary_network import adversary_network, routed_nodes
from tracker_service.gateway.sampler import WIRE_TOP_K, GatewaySampler, SamplerSettings
from tracker_service.services.session_plan import Sampling

pytestmark = pytest.mark.slow

PROMPT = [504, 3458, 282, 4649, 314]  # a few ids of the default model's vocabulary
NEW_TOKENS = 6
SEED = 11


def _gateway_sampled() -> tuple[Sampling, GatewaySampler]:
    """What the gateway opens for a request it samples itself (a presence penalty here)."""
    sampler = GatewaySampler(SamplerSettings(temperature=1.0, seed=SEED, presence_penalty=0.5))
    return Sampling(temperature=0.0, logprobs=WIRE_TOP_K), sampler


def test_a_last_hop_that_reorders_its_top_ids_is_quarantined_before_it_chooses_a_token(
    tmp_path: Path, default_model_dir: Path
) -> None:
    specs = [(0, 30, None), (0, 30, None), (0, 30, "top_ids")]
    with adversary_network(tmp_path, default_model_dir, specs) as net:
        liar = net.liar
        sampling, sampler = _gateway_sampled()
        lied_answer, generation = net.generate(
            PROMPT, NEW_TOKENS, sampling, pick=sampler.pick, force=liar
        )
        assert routed_nodes(generation)[0] == [liar]  # its first route went through it
        assert net.state(liar) == "quarantined"
        # No token it chose reached the answer: the same seed through honest nodes only
        # draws the very same tokens (the sampler drew nothing from the liar's list).
        sampling, sampler = _gateway_sampled()
        honest_answer, honest_run = net.generate(PROMPT, NEW_TOKENS, sampling, pick=sampler.pick)
        assert lied_answer == honest_answer
        for route in routed_nodes(generation)[1:] + routed_nodes(honest_run):
            assert liar not in route
        for node_id in net.honest:
            assert net.state(node_id) == "active"
            assert not net.withdrawn(node_id)
        assert net.earned(liar) == 0.0
        assert any(net.earned(node_id) > 0 for node_id in net.honest)
