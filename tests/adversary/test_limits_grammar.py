"""A huge ``json_schema`` against the gateway: refused 400, and the loop keeps serving.

A 930 KB schema took 2.66 s to compile inline on the tracker's event loop, before a
concurrency slot was taken: a few a second stalled every stream, heartbeat and audit.
Here the tracker's own gateway compiles one (with the real default model's
tokenizer) while the same app answers an HTTP request; the request must be answered
while the compile is still running, and the schema refused in OpenAI's shape once
its budget is spent.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from tokenizers import Tokenizer

from tests.tracker_service.conftest import make_settings
from tracker_service.app import create_app
from tracker_service.gateway import constraint
from tracker_service.gateway.constraint import (
    GRAMMAR_QUEUE_FULL,
    SCHEMA_TOO_COMPLEX,
    vocabulary,
)
from tracker_service.gateway.errors import BadRequest, GatewayError
from tracker_service.gateway.openai_schemas import ChatCompletionCreate

# Thousands of patterned properties: seconds of compiling on any machine, far past
# the budget this test gives (the default is 2 s).
HUGE = {
    "type": "object",
    "properties": {
        f"field_{i:05d}": {"type": "string", "pattern": f"^[a-z]{{1,{i % 40 + 1}}}x{i}$"}
        for i in range(3000)
    },
    "additionalProperties": False,
}
BUDGET_S = 0.05
FLOOD_BUDGET_S = 2.0  # the default: a small schema compiles far within it on a free worker
POLL_S = 120.0  # bounded waits, never a timing assertion


def _body(schema: dict[str, Any]) -> ChatCompletionCreate:
    return ChatCompletionCreate.model_validate(
        {
            "model": "any",
            "messages": [{"role": "user", "content": "fill the form"}],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "form", "schema": schema},
            },
        }
    )


async def _until(predicate: Any, what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + POLL_S
    while not predicate():
        assert loop.time() < deadline, f"gave up waiting for {what}"
        await asyncio.sleep(0.01)


def test_a_huge_schema_is_refused_while_the_loop_keeps_answering(
    tmp_path: Path, default_model_dir: Path
) -> None:
    tokenizer = Tokenizer.from_file(str(default_model_dir / "tokenizer.json"))
    eos_ids = [tokenizer.token_to_id("<|im_end|>") or 0]
    app = create_app(
        make_settings(tmp_path, background_tasks=False, gateway_grammar_budget_s=BUDGET_S)
    )
    gateway = app.state.gateway
    assets = SimpleNamespace(tokenizer=tokenizer, eos_ids=eos_ids)

    async def scenario() -> None:
        await asyncio.to_thread(vocabulary, tokenizer, eos_ids)  # built once per model
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            compiling = asyncio.create_task(gateway._grammar(_body(HUGE), assets))
            await _until(lambda: gateway.grammars._cache or compiling.done(), "the compile")
            [entry] = gateway.grammars._cache.values()
            assert not entry.future.done(), "the schema compiled before the loop ran again"

            reply = await http.get("/api/v1/network")
            assert reply.status_code == 200, reply.text
            # Answered while the grammar was still compiling: the loop was free.
            assert not entry.future.done()

            with pytest.raises(BadRequest) as refused:
                await compiling
            error = refused.value.body()["error"]
            assert refused.value.status_code == 400
            assert error["code"] == SCHEMA_TOO_COMPLEX and error["param"] == "response_format"
            assert error["type"] == "invalid_request_error"

            # The same schema again is refused by its digest: no second compile.
            with pytest.raises(BadRequest) as again:
                await gateway._grammar(_body(HUGE), assets)
            assert again.value.code == SCHEMA_TOO_COMPLEX
            assert list(gateway.grammars._cache.values()) == [entry]

            # An ordinary schema is compiled once and then served from the cache.
            small = {"type": "object", "properties": {"name": {"type": "string"}}}
            gateway.grammars.budget_s = POLL_S
            first = await gateway._grammar(_body(small), assets)
            assert first is await gateway._grammar(_body(small), assets)

    try:
        asyncio.run(scenario())
    finally:
        gateway.grammars.close()
        app.state.tracker.database.dispose()


def _huge(variant: int) -> dict[str, Any]:
    """HUGE made distinct, so that no digest is shared and each is a new compile."""
    return {**HUGE, "title": f"flood {variant}"}


def test_a_flood_of_slow_schemas_from_one_key_leaves_other_keys_served(
    tmp_path: Path, default_model_dir: Path
) -> None:
    """One key's 16 sessions send distinct slow schemas as fast as they are answered.
    Without a bound they queued behind each other (the queue only grew) and another
    key's small schema waited behind them all, past its budget: refused
    schema_too_complex. Now the flood is answered 429 past its key's share, the queue
    stays bounded, and the other key's schema is compiled and answered."""
    tokenizer = Tokenizer.from_file(str(default_model_dir / "tokenizer.json"))
    eos_ids = [tokenizer.token_to_id("<|im_end|>") or 0]
    app = create_app(
        make_settings(tmp_path, background_tasks=False, gateway_grammar_budget_s=FLOOD_BUDGET_S)
    )
    gateway = app.state.gateway
    grammars = gateway.grammars
    assets = SimpleNamespace(tokenizer=tokenizer, eos_ids=eos_ids)
    flooder, victim = 1, 2
    refused: list[str] = []
    most_pending = 0

    async def flood(session: int, stop: asyncio.Event) -> None:
        variant = session * 10_000
        while not stop.is_set():
            variant += 1
            try:
                await gateway._grammar(_body(_huge(variant)), assets, flooder)
            except GatewayError as exc:
                refused.append(str(exc.code))
                if exc.code == GRAMMAR_QUEUE_FULL:
                    assert exc.status_code == 429 and exc.headers()["Retry-After"]
                    assert exc.body()["error"]["type"] == "rate_limit_error"
            await asyncio.sleep(0)  # the attacker resubmits at once

    async def scenario() -> None:
        nonlocal most_pending
        await asyncio.to_thread(vocabulary, tokenizer, eos_ids)  # built once per model
        stop = asyncio.Event()
        sessions = [asyncio.create_task(flood(i, stop)) for i in range(16)]
        try:
            # The flood is under way: its compiles fill the workers.
            await _until(lambda: grammars.pending >= 1 and len(refused) >= 16, "the flood")
            small = {"type": "object", "properties": {"name": {"type": "string"}}}
            answer = asyncio.create_task(gateway._grammar(_body(small), assets, victim))
            while not answer.done():
                most_pending = max(most_pending, grammars.pending)
                await asyncio.sleep(0.01)
            compiled = await answer  # a BadRequest here is the bug: refused as too complex
            assert compiled is not None
            assert most_pending <= grammars.max_pending
        finally:
            stop.set()
            for task in sessions:
                task.cancel()
            await asyncio.gather(*sessions, return_exceptions=True)
        assert GRAMMAR_QUEUE_FULL in refused  # the flood was turned away, not queued

    try:
        asyncio.run(scenario())
    finally:
        grammars.close()
        app.state.tracker.database.dispose()


def test_a_queued_compile_is_cancelled_when_its_request_gives_up(
    tmp_path: Path, default_model_dir: Path
) -> None:
    """A request that leaves (client gone) while its schema still waits in the queue
    takes its compile with it: no worker ever spends time on it."""
    tokenizer = Tokenizer.from_file(str(default_model_dir / "tokenizer.json"))
    eos_ids = [tokenizer.token_to_id("<|im_end|>") or 0]
    app = create_app(
        make_settings(tmp_path, background_tasks=False, gateway_grammar_budget_s=POLL_S)
    )
    gateway = app.state.gateway
    grammars = gateway.grammars
    assets = SimpleNamespace(tokenizer=tokenizer, eos_ids=eos_ids)

    async def scenario() -> None:
        await asyncio.to_thread(vocabulary, tokenizer, eos_ids)
        # Two slow compiles fill both workers (two keys: one each).
        busy = [asyncio.create_task(gateway._grammar(_body(_huge(i)), assets, i)) for i in (1, 2)]
        await _until(lambda: len(grammars._cache) == 2, "the workers busy")
        small = {"type": "object", "properties": {"name": {"type": "string"}}}
        leaving = asyncio.create_task(gateway._grammar(_body(small), assets, 3))
        await _until(lambda: len(grammars._cache) == 3, "the small schema queued")
        queued = list(grammars._cache.values())[-1]
        assert not queued.future.running() and not queued.future.done()
        leaving.cancel()
        await asyncio.gather(leaving, return_exceptions=True)
        assert queued.future.cancelled()
        assert len(grammars._cache) == 2 and grammars.pending == 2
        for task in busy:
            task.cancel()
        await asyncio.gather(*busy, return_exceptions=True)

    try:
        asyncio.run(scenario())
    finally:
        grammars.close()
        app.state.tracker.database.dispose()


def test_a_schema_sent_again_is_served_from_the_cache_by_its_digest(
    tmp_path: Path, default_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same schema from many requests (and keys) compiles once: a flood of one
    costly schema costs one compile, not one per request."""
    tokenizer = Tokenizer.from_file(str(default_model_dir / "tokenizer.json"))
    eos_ids = [tokenizer.token_to_id("<|im_end|>") or 0]
    app = create_app(
        make_settings(tmp_path, background_tasks=False, gateway_grammar_budget_s=POLL_S)
    )
    gateway = app.state.gateway
    grammars = gateway.grammars
    assets = SimpleNamespace(tokenizer=tokenizer, eos_ids=eos_ids)
    builds: list[int] = []
    real_build = constraint._build

    def counted(make: Any, vocab: Any) -> Any:
        builds.append(1)
        return real_build(make, vocab)

    monkeypatch.setattr(constraint, "_build", counted)
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    same_keys_differ = {"properties": {"name": {"type": "string"}}, "type": "object"}

    async def scenario() -> list[Any]:
        await asyncio.to_thread(vocabulary, tokenizer, eos_ids)
        compiled = []
        for key_id, sent in enumerate([schema, same_keys_differ, schema, schema]):
            compiled.append(await gateway._grammar(_body(sent), assets, key_id))
        return compiled

    try:
        compiled = asyncio.run(scenario())
    finally:
        grammars.close()
        app.state.tracker.database.dispose()
    assert len(builds) == 1
    assert all(grammar is compiled[0] for grammar in compiled)
