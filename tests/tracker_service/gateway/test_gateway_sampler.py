"""Sampling at the gateway (gateway/sampler.py) and its llguidance grammars
(gateway/constraint.py), without nodes: the last hop's reply is made up here."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

import jsonschema
import pytest
from tokenizers import Tokenizer

from tracker_service.errors import BadRequest
from tracker_service.gateway.constraint import (
    GrammarConstraint,
    check_grammar,
    json_grammar,
    tool_call_grammar,
    vocabulary,
)
from tracker_service.gateway.sampler import GatewaySampler, SamplerSettings
from tracker_service.gateway.tools import parse_calls
from tracker_service.services.session_plan import GeneratedToken

EOS = 2


def reply(ids: Sequence[int], logprobs: Sequence[float]) -> GeneratedToken:
    return GeneratedToken(
        token_id=ids[0], top_ids=list(ids), top_logprobs=list(logprobs), position=0, compute_ms=()
    )


TOP = reply([10, 11, 12, 13], [-0.5, -1.5, -2.5, -4.0])


def test_greedy_takes_the_most_likely_and_records_its_logprob_and_alternatives() -> None:
    sampler = GatewaySampler(SamplerSettings(temperature=0.0, top_logprobs=2))
    assert sampler.pick(TOP) == 10
    (picked,) = sampler.picked
    assert picked.logprob == -0.5 and picked.top == ((10, -0.5), (11, -1.5))


def test_logit_bias_bans_and_lifts() -> None:
    banned = GatewaySampler(SamplerSettings(temperature=0.0, logit_bias={10: -100}))
    assert banned.pick(TOP) == 11
    lifted = GatewaySampler(SamplerSettings(temperature=0.0, logit_bias={99: 50}))
    assert lifted.pick(TOP) == 99  # outside the top 20: lifted from the 20th's log-prob
    assert lifted.picked[0].logprob == -4.0


def test_penalties_turn_away_from_repeated_tokens() -> None:
    plain = GatewaySampler(SamplerSettings(temperature=0.0))
    assert [plain.pick(TOP) for _ in range(3)] == [10, 10, 10]
    frequency = GatewaySampler(SamplerSettings(temperature=0.0, frequency_penalty=0.6))
    assert [frequency.pick(TOP) for _ in range(3)] == [10, 10, 11]
    presence = GatewaySampler(SamplerSettings(temperature=0.0, presence_penalty=1.5))
    assert [presence.pick(TOP) for _ in range(2)] == [10, 11]


def test_a_seed_repeats_the_draws_and_top_p_keeps_the_head() -> None:
    def draws(seed: int, top_p: float = 1.0) -> list[int]:
        sampler = GatewaySampler(SamplerSettings(temperature=1.5, seed=seed, top_p=top_p))
        return [sampler.pick(TOP) for _ in range(60)]

    assert draws(5) == draws(5)
    assert draws(5) != draws(6)
    assert len(set(draws(5))) > 2
    assert set(draws(5, top_p=0.3)) == {10}


class OnlyEven:
    def __init__(self) -> None:
        self.fell_back = 0
        self.seen: list[int] = []

    def allowed(self, token_ids: Sequence[int]) -> list[bool]:
        return [t % 2 == 0 for t in token_ids]

    def fallback(self, preferred: Sequence[int]) -> int:
        self.fell_back += 1
        return 1000

    def advance(self, token_id: int) -> None:
        self.seen.append(token_id)

    def closer(self) -> int | None:
        return None


def test_the_mask_removes_what_the_grammar_forbids_and_falls_back_when_nothing_is_left() -> None:
    grammar = OnlyEven()
    sampler = GatewaySampler(SamplerSettings(temperature=0.0), grammar)
    assert sampler.pick(reply([11, 12, 13], [-0.1, -3, -4])) == 12
    assert sampler.pick(reply([11, 13], [-0.1, -3])) == 1000
    assert grammar.fell_back == 1 and grammar.seen == [12, 1000]


@pytest.fixture(scope="module")
def smollm_tokenizer(default_model_dir: Path) -> Tokenizer:
    return Tokenizer.from_file(str(default_model_dir / "tokenizer.json"))


PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 3},
    },
    "required": ["name", "age", "tags"],
    "additionalProperties": False,
}


def decode_under(
    grammar: str, tokenizer: Tokenizer, seed: int, closing_after: int | None = None
) -> str:
    """Drive a grammar with a 'model' whose favourites are random tokens: most steps the
    mask allows none of them, so the fallback decides; the answer must still be valid.
    (Bounded schemas only: inside a free string random tokens are all allowed, and such
    a 'model' never closes it.)"""
    vocab = vocabulary(tokenizer, {EOS})
    sampler = GatewaySampler(
        SamplerSettings(temperature=1.0, seed=seed, closing_after=closing_after),
        GrammarConstraint(grammar, vocab),
    )
    rng = random.Random(seed)
    ids: list[int] = []
    for _ in range(400):
        top = rng.sample(range(vocab.ll.vocab_size), 20)
        token = sampler.pick(reply(top, sorted((-rng.random() * 5 for _ in top), reverse=True)))
        if token == EOS:
            return str(tokenizer.decode(ids))
        ids.append(token)
    raise AssertionError(f"no end after 400 tokens: {tokenizer.decode(ids)!r}")


def test_a_json_schema_grammar_always_gives_valid_json(smollm_tokenizer: Tokenizer) -> None:
    grammar = json_grammar(PERSON)
    for seed in range(8):
        jsonschema.validate(json.loads(decode_under(grammar, smollm_tokenizer, seed)), PERSON)


def test_near_the_budget_a_free_json_object_is_steered_shut(smollm_tokenizer: Tokenizer) -> None:
    # Random favourites never close a free string by themselves (see decode_under);
    # past closing_after the sampler closes what is open and ends.
    for seed in range(4):
        text = decode_under(json_grammar(None), smollm_tokenizer, seed, closing_after=30)
        assert isinstance(json.loads(text), dict), text


def test_a_forced_tool_call_parses_into_a_valid_call(smollm_tokenizer: Tokenizer) -> None:
    params = {
        "type": "object",
        "properties": {"city": {"type": "string", "maxLength": 12}},
        "required": ["city"],
    }
    functions = [{"name": "get_weather", "parameters": params}, {"name": "get_time"}]
    for seed in range(4):
        text = decode_under(tool_call_grammar(functions), smollm_tokenizer, seed)
        content, calls = parse_calls(text, ["get_weather", "get_time"])
        assert content == "" and len(calls) == 1, text
        if calls[0].name == "get_weather":
            jsonschema.validate(json.loads(calls[0].arguments), params)


def test_a_schema_llguidance_cannot_enforce_is_a_400(smollm_tokenizer: Tokenizer) -> None:
    vocab = vocabulary(smollm_tokenizer, {EOS})
    with pytest.raises(BadRequest) as caught:
        check_grammar(json_grammar({"type": "strin"}), vocab, "response_format")
    assert caught.value.param == "response_format"
