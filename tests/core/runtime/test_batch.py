"""Decode of many sessions as one batched forward: every session's greedy tokens equal
its solo run, and a bad, closed or aborted member affects no other."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from core.errors import CapacityError, RuntimeInputError, SessionError
from core.runtime import SessionManager, Shard, generate_local
from core.runtime.batch import step_batch
from core.runtime.sessions import InferenceSession

NEW_TOKENS = 12


def prompts(n: int) -> list[list[int]]:
    g = torch.Generator().manual_seed(7)
    return [torch.randint(0, 256, (3 + 5 * i,), generator=g).tolist() for i in range(n)]


def chain(folder: Path) -> list[Shard]:
    return [Shard.load(folder, 0, 2), Shard.load(folder, 2, 4)]


class Chat:
    """One session per shard, prefilled alone (as a route prefills)."""

    def __init__(self, managers: list[SessionManager], ids: list[int]) -> None:
        self.sessions = [m.open(len(ids) + NEW_TOKENS + 1) for m in managers]
        x = torch.tensor([ids])
        for session in self.sessions[:-1]:
            x = session.step(x).hidden  # type: ignore[assignment]
        token = self.sessions[-1].step(x).token_ids
        assert token is not None
        self.tokens = [int(token[0])]


def batched_decode(chats: list[Chat], steps: int) -> None:
    """`steps` decode positions of every chat, each hop one step_batch over all chats."""
    for _ in range(steps):
        live = [c for c in chats if not c.sessions[0].closed]
        x: list[torch.Tensor] = [torch.tensor([[c.tokens[-1]]]) for c in live]
        for hop in range(len(live[0].sessions)):
            outcomes = step_batch([c.sessions[hop] for c in live], x)
            assert all(not isinstance(o, Exception) for o in outcomes), outcomes
            if hop < len(live[0].sessions) - 1:
                x = [o.hidden for o in outcomes]  # type: ignore[union-attr,misc]
        for chat, outcome in zip(live, outcomes, strict=True):
            chat.tokens.append(int(outcome.token_ids[0]))  # type: ignore[union-attr,index]


def test_eight_sessions_at_different_positions_decode_exactly_their_solo_tokens(
    tiny_llama: Path,
) -> None:
    shards = chain(tiny_llama)
    solo = [list(generate_local(shards, ids, NEW_TOKENS)) for ids in prompts(8)]
    managers = [SessionManager(s) for s in shards]
    chats = [Chat(managers, ids) for ids in prompts(8)]
    assert len({c.sessions[0].position for c in chats}) == 8  # all at different positions
    batched_decode(chats, NEW_TOKENS - 1)
    assert [c.tokens for c in chats] == solo


def test_a_session_closed_between_batches_leaves_the_others_exact(tiny_llama: Path) -> None:
    shards = chain(tiny_llama)
    solo = [list(generate_local(shards, ids, NEW_TOKENS)) for ids in prompts(4)]
    managers = [SessionManager(s) for s in shards]
    chats = [Chat(managers, ids) for ids in prompts(4)]
    batched_decode(chats, 3)
    for session in chats[1].sessions:  # the client aborts chat 1 mid-generation
        session.close()
    batched_decode(chats, NEW_TOKENS - 4)
    assert [chats[i].tokens for i in (0, 2, 3)] == [solo[i] for i in (0, 2, 3)]
    assert managers[0].open_count == 3


def test_a_bad_or_closed_member_gets_its_own_error_and_the_rest_step(tiny_llama: Path) -> None:
    shard = Shard.load(tiny_llama, 0, 4)
    manager = SessionManager(shard)
    reference = [manager.open(16) for _ in range(4)]
    members = [manager.open(16) for _ in range(4)]
    for r, m in zip(reference, members, strict=True):
        r.step(torch.tensor([[1, 2, 3]]))
        m.step(torch.tensor([[1, 2, 3]]))
    members[3].close()
    ids = [torch.tensor([[5]]), torch.tensor([[999]]), torch.tensor([[5]]), torch.tensor([[5]])]
    outcomes = step_batch(members, ids)
    assert isinstance(outcomes[1], RuntimeInputError) and outcomes[1].reason == "bad-token-id"
    assert isinstance(outcomes[3], SessionError)
    for i in (0, 2):
        expected = reference[i].step(torch.tensor([[5]])).token_ids
        assert torch.equal(outcomes[i].token_ids, expected)  # type: ignore[union-attr,arg-type]
        assert members[i].position == 4
    assert members[1].position == 3  # the refused step left its session as it was


def test_a_failing_batched_forward_falls_back_to_each_session_alone(
    tiny_llama: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shard = Shard.load(tiny_llama, 0, 4)
    manager = SessionManager(shard)
    sessions: list[InferenceSession] = [manager.open(8) for _ in range(3)]

    def broken(*_args: object) -> torch.Tensor:
        raise RuntimeError("simulated failure of the batched kernel")

    monkeypatch.setattr(shard, "run_layers_rows", broken)
    outcomes = step_batch(sessions, [torch.tensor([[i + 1]]) for i in range(3)])
    assert all(o.token_ids is not None for o in outcomes)  # type: ignore[union-attr]
    assert [s.position for s in sessions] == [1, 1, 1]


def test_kv_bytes_per_token_is_what_a_session_reserves_per_position(tiny_llama: Path) -> None:
    shard = Shard.load(tiny_llama, 1, 4)
    cfg = shard.config
    assert shard.kv_bytes_per_token() == 3 * 2 * cfg.num_kv_heads * cfg.head_dim * 4
    manager = SessionManager(shard, kv_budget_bytes=shard.kv_bytes_per_token() * 100)
    assert manager.kv_bytes_per_token == shard.kv_bytes_per_token()
    manager.open(60)
    assert manager.sessions_that_fit(30) == 1


def test_the_kv_budget_decides_admission_and_refuses_with_a_reason(tiny_llama: Path) -> None:
    shard = Shard.load(tiny_llama, 0, 4)
    per_session = shard.kv_bytes_per_token() * 32
    manager = SessionManager(shard, kv_budget_bytes=per_session * 3)
    opened = [manager.open(32) for _ in range(3)]
    assert manager.sessions_that_fit(32) == 0
    with pytest.raises(CapacityError) as refused:
        manager.open(32)
    assert refused.value.reason == "no-capacity"
    assert f"{shard.kv_bytes_per_token()} bytes per token" in str(refused.value)
    opened[0].close()  # a session ending gives its reservation back
    assert manager.open(32).position == 0
