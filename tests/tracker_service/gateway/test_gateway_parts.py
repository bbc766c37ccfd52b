"""The gateway's parts on their own: text deltas with stop strings, the sandboxed
chat template, rate-limit windows and the loopback rule without keys."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tracker_service.errors import RateLimited, TemplateError, Unauthorized
from tracker_service.gateway.api_keys import Caller, KeyCheck, RateLimiter, is_loopback
from tracker_service.gateway.chat_template import ChatTemplate
from tracker_service.gateway.text_stream import TextStream
from tracker_service.store.api_keys import add_api_key, revoke_api_key
from tracker_service.store.db import Database

PIECES = ["Hel", "lo", " wor", "ld", "!", " Bye"]


def decode(ids: Sequence[int]) -> str:
    return "".join(PIECES[i] for i in ids)


def run(stream: TextStream, ids: Sequence[int]) -> list[str]:
    out = [stream.push(i) for i in ids]
    out.append(stream.finish())
    return out


def test_deltas_add_up_to_the_decoded_text() -> None:
    deltas = run(TextStream(decode), range(6))
    assert "".join(deltas) == "Hello world! Bye"
    assert deltas[0] == "Hel"


def test_a_stop_string_ends_the_text_before_it_even_across_tokens() -> None:
    stream = TextStream(decode, ["o wo"])
    deltas = run(stream, range(6))
    assert "".join(deltas) == "Hell"
    assert stream.stopped


def test_text_that_may_start_a_stop_string_is_held_back_then_released() -> None:
    stream = TextStream(decode, ["!X"])
    assert stream.push(0) == "Hel"
    stream.push(1)
    stream.push(2)
    stream.push(3)
    assert stream.push(4) == ""  # "!" could begin "!X"
    assert stream.push(5) == "! Bye"
    assert not stream.stopped


def test_an_incomplete_character_waits_for_its_other_bytes() -> None:
    texts = ["a", "a\ufffd", "aé"]
    stream = TextStream(lambda ids: texts[len(ids) - 1])
    assert [stream.push(0), stream.push(1), stream.push(2)] == ["a", "", "é"]


def test_the_chat_template_renders_messages_and_the_generation_prompt() -> None:
    template = ChatTemplate(
        "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
        "{% if add_generation_prompt %}<assistant>{% endif %}",
        bos_token="<s>",
    )
    assert template.render([{"role": "user", "content": "hi"}]) == "<s><user>hi<assistant>"


def test_the_chat_template_runs_sandboxed() -> None:
    escape = ChatTemplate("{{ ''.__class__.__mro__[1].__subclasses__() }}")
    with pytest.raises(TemplateError):
        escape.render([{"role": "user", "content": "x"}])
    mutate = ChatTemplate("{% set _ = messages.append(1) %}x")
    with pytest.raises(TemplateError):
        mutate.render([{"role": "user", "content": "x"}])
    refusing = ChatTemplate("{{ raise_exception('roles must alternate') }}")
    with pytest.raises(TemplateError, match="roles must alternate"):
        refusing.render([])


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_requests_over_the_per_minute_limit_get_429_until_the_window_frees() -> None:
    clock = Clock()
    limiter = RateLimiter(clock)
    caller = Caller(1, "alice", requests_per_minute=2, tokens_per_minute=None)
    limiter.admit(caller)
    clock.now += 10
    limiter.admit(caller)
    with pytest.raises(RateLimited) as caught:
        limiter.admit(caller)
    assert caught.value.headers()["Retry-After"] == "51"
    clock.now += 51
    limiter.admit(caller)


def test_tokens_over_the_per_minute_limit_get_429() -> None:
    clock = Clock()
    limiter = RateLimiter(clock)
    caller = Caller(1, "alice", requests_per_minute=None, tokens_per_minute=100)
    limiter.admit(caller)
    limiter.charge(caller, 100)
    with pytest.raises(RateLimited, match="100 tokens"):
        limiter.admit(caller)
    clock.now += 61
    limiter.admit(caller)


def test_without_keys_only_loopback_callers_are_served(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'keys.db'}")
    database.migrate()
    check = KeyCheck(database, requests_per_minute=5, tokens_per_minute=5, clock=Clock())
    assert check.authenticate(None, "127.0.0.1").key_id is None
    assert check.authenticate(None, "::1").key_id is None
    with pytest.raises(Unauthorized, match="only on loopback"):
        check.authenticate(None, "10.1.2.3")
    assert is_loopback("localhost") and not is_loopback("example.org")
    database.dispose()


def test_with_keys_a_bearer_key_is_needed_even_on_loopback(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'keys.db'}")
    database.migrate()
    with database.sessions.begin() as session:
        row, key = add_api_key(session, label="bob", now=0.0, requests_per_minute=3)
        key_id = row.id
    check = KeyCheck(database, requests_per_minute=5, tokens_per_minute=7, clock=Clock())
    caller = check.authenticate(f"Bearer {key}", "127.0.0.1")
    assert (caller.key_id, caller.requests_per_minute, caller.tokens_per_minute) == (key_id, 3, 7)
    for header in (None, "Bearer ", f"Basic {key}", "Bearer mnk_wrong"):
        with pytest.raises(Unauthorized):
            check.authenticate(header, "127.0.0.1")
    with database.sessions.begin() as session:
        assert revoke_api_key(session, key_id, now=1.0)
    with pytest.raises(Unauthorized, match="revoked"):
        check.authenticate(f"Bearer {key}", "127.0.0.1")
    database.dispose()


def test_a_tracker_without_keys_says_at_startup_that_it_serves_loopback_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.tracker_service.conftest import make_settings
    from tracker_service.app import create_app

    with caplog.at_level("WARNING", logger="tracker_service.app"):
        app = create_app(make_settings(tmp_path, background_tasks=False))
    app.state.tracker.database.dispose()
    assert any("answers only on loopback" in r.getMessage() for r in caplog.records)
