"""Constrained decoding at the gateway with llguidance: JSON, a JSON schema, a tool call.

Why llguidance (over xgrammar and outlines-core): it is maintained (Microsoft's
guidance team, a release every few weeks), computes the token mask in Rust in
well under a millisecond for a 50k vocabulary with no precompilation per
schema, supports JSON Schema (with ``strict`` semantics: no extra properties
when ``additionalProperties`` is false) and Lark grammars that can embed a JSON
schema (``%json``; the tool-call grammar uses it), and reads a Hugging Face
``tokenizer.json`` directly, which is exactly what the gateway holds.

The mask is applied at the gateway to the last hop's top 20 (see
:mod:`tracker_service.gateway.sampler`); nodes are unchanged.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import llguidance
from tokenizers import Tokenizer

from tracker_service.errors import BadRequest, RateLimited

log = logging.getLogger(__name__)

# Separators the way models write JSON, and no free whitespace: a small model
# under a mask that allows newlines anywhere can pad forever.
JSON_STYLE: dict[str, Any] = {
    "whitespace_flexible": False,
    "item_separator": ", ",
    "key_separator": ": ",
}
TOOL_CALL_OPEN = "<tool_call>\n"
TOOL_CALL_CLOSE = "\n</tool_call>"
_CACHE_SIZE = 4
SCHEMA_TOO_COMPLEX = "schema_too_complex"
GRAMMAR_QUEUE_FULL = "grammar_queue_full"


class Vocabulary:
    """llguidance's view of one tokenizer (about a second to build), and each token's text."""

    def __init__(self, tokenizer: Tokenizer, eos_ids: Collection[int]) -> None:
        self.tokenizer = tokenizer  # held so that id() stays this tokenizer's
        self.ll = llguidance.LLTokenizer(tokenizer.to_str(), eos_token=sorted(eos_ids))
        self.texts = [tokenizer.decode([i]) for i in range(self.ll.vocab_size)]
        self.eos_ids = sorted(eos_ids)
        # Tokens made only of closing quotes/brackets, the longest (closing most) first.
        self.closers = sorted(
            (i for i, t in enumerate(self.texts) if t.strip() and set(t.strip()) <= set('"]}')),
            key=lambda i: -len(self.texts[i].strip()),
        )


_vocabularies: OrderedDict[int, Vocabulary] = OrderedDict()
_lock = threading.Lock()


def vocabulary(tokenizer: Tokenizer, eos_ids: Collection[int]) -> Vocabulary:
    with _lock:
        found = _vocabularies.get(id(tokenizer))
        if found is not None and found.tokenizer is tokenizer:
            _vocabularies.move_to_end(id(tokenizer))
            return found
    built = Vocabulary(tokenizer, eos_ids)
    with _lock:
        _vocabularies[id(tokenizer)] = built
        while len(_vocabularies) > _CACHE_SIZE:
            _vocabularies.popitem(last=False)
    return built


def _styled(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {**schema, "x-guidance": {**JSON_STYLE, **dict(schema.get("x-guidance") or {})}}


def json_grammar(schema: Mapping[str, Any] | None) -> str:
    """Any JSON object (``json_object``) or a value valid for `schema` (``json_schema``)."""
    return str(llguidance.LLMatcher.grammar_from_json_schema(_styled(schema or {"type": "object"})))


def _parameters(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """A function's arguments schema; one that declares no properties takes none (``{}``),
    as OpenAI reads a function without parameters."""
    schema = schema or {}
    open_keys = ("additionalProperties", "patternProperties", "anyOf", "oneOf")
    closed = not schema.get("properties") and not any(k in schema for k in open_keys)
    if not schema or (schema.get("type") == "object" and closed):
        return {"type": "object", "properties": {}, "additionalProperties": False}
    return dict(schema)


def tool_call_schema(functions: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``{"name": ..., "arguments": {...}}`` for one of `functions` (OpenAI function dicts)."""
    options = [
        {
            "type": "object",
            "properties": {
                "name": {"const": f["name"]},
                "arguments": _parameters(f.get("parameters")),
            },
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for f in functions
    ]
    return options[0] if len(options) == 1 else {"anyOf": options}


def tool_call_grammar(functions: Sequence[Mapping[str, Any]]) -> str:
    """One tool call in the preamble's syntax, its JSON valid for the function's schema."""
    schema = json.dumps(_styled(tool_call_schema(functions)))
    lark = f"start: {json.dumps(TOOL_CALL_OPEN)} call {json.dumps(TOOL_CALL_CLOSE)}\n"
    lark += f"call: %json {schema}\n"
    return str(llguidance.LLMatcher.grammar_from_lark(lark))


def check_grammar(grammar: str, vocab: Vocabulary, param: str) -> None:
    """A 400 naming `param` when llguidance cannot compile the grammar (a bad schema)."""
    error = llguidance.LLMatcher.validate_grammar(grammar, vocab.ll)
    if error:
        raise BadRequest(f"the schema cannot be enforced: {error}", param=param)


class OpenJson:
    """What is open in JSON text so far: a string, and the brackets around it."""

    def __init__(self) -> None:
        self._stack: list[str] = []
        self._in_string = False
        self._escaped = False

    def feed(self, text: str) -> None:
        for char in text:
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                elif char == "\\":
                    self._escaped = True
                elif char == '"':
                    self._in_string = False
            elif char == '"':
                self._in_string = True
            elif char in "[{":
                self._stack.append("]" if char == "[" else "}")
            elif char in "]}" and self._stack:
                self._stack.pop()

    def closing(self) -> str:
        return ('"' if self._in_string else "") + "".join(reversed(self._stack))


@dataclass(frozen=True)
class CompiledGrammar:
    """A grammar compiled for one vocabulary; each answer decodes under a copy of it."""

    grammar: str
    vocab: Vocabulary
    matcher: llguidance.LLMatcher  # never advanced itself: copied for every answer


@dataclass
class _Compile:
    future: Future[CompiledGrammar | str]  # the compiled grammar, or why it is refused
    waiters: int = field(default=0)  # requests awaiting it now


def _build(make: Callable[[], str], vocab: Vocabulary) -> CompiledGrammar | str:
    """Compile in a worker thread (llguidance drops the GIL while it builds)."""
    try:
        grammar = make()
    except ValueError as exc:
        return f"the schema is not valid: {exc}"
    matcher = llguidance.LLMatcher(vocab.ll, grammar)
    if matcher.is_error():
        return f"the schema cannot be enforced: {matcher.get_error()}"
    return CompiledGrammar(grammar, vocab, matcher)


class GrammarCompiler:
    """Compiles grammars off the event loop, within a time budget, once per schema.

    A 930 KB schema took seconds to compile inline, stalling every stream and
    heartbeat. Here compiles run on a few worker threads; one still running when its
    request's budget ends is answered 400 ``schema_too_complex``, and the schema's
    digest is remembered (in its own memory, which compiled grammars cannot evict)
    so the same schema is refused at once. Compiled grammars are kept by digest (and
    vocabulary), so a schema sent again compiles no more.

    A running compile cannot be stopped, so the queue is what is bounded: at most
    `max_pending` compiles queued or running, and `per_key` of them for one API key
    (fewer than the workers: one key's flood of slow schemas leaves a worker to the
    others; the loopback caller, the operator, has only the total); past either the
    request is answered 429 ``grammar_queue_full``. A queued
    compile nobody waits for any more (budget spent, client gone) is cancelled.
    """

    def __init__(
        self,
        budget_s: float,
        *,
        workers: int = 2,
        cache_size: int = 64,
        max_pending: int = 8,
        per_key: int = 1,
        refused_size: int = 4096,
    ) -> None:
        self.budget_s = budget_s
        self.max_pending = max_pending
        self.per_key = per_key
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="grammar")
        self._cache: OrderedDict[tuple[str, int], _Compile] = OrderedDict()
        self._cache_size = cache_size
        self._refused: OrderedDict[tuple[str, int], None] = OrderedDict()
        self._refused_size = refused_size
        self._pending: Counter[int | None] = Counter()  # compiles queued or running, by key
        self._lock = threading.Lock()  # _pending is released from worker threads

    @staticmethod
    def digest(kind: str, spec: Any) -> str:
        text = json.dumps([kind, spec], sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    @property
    def pending(self) -> int:
        """Compiles queued or running now."""
        with self._lock:
            return sum(self._pending.values())

    def _busy(self, why: str) -> RateLimited:
        return RateLimited(
            f"{why}; retry in a moment (a schema compiled once is served from the cache)",
            code=GRAMMAR_QUEUE_FULL,
            retry_after_s=math.ceil(self.budget_s),
        )

    def _submit(self, make: Callable[[], str], vocab: Vocabulary, owner: int | None) -> _Compile:
        with self._lock:
            if sum(self._pending.values()) >= self.max_pending:
                raise self._busy(f"{self.max_pending} schemas are waiting to compile")
            if owner is not None and self._pending[owner] >= self.per_key:
                raise self._busy(f"this key has {self.per_key} schema(s) compiling already")
            self._pending[owner] += 1

        def release(_: Future[CompiledGrammar | str]) -> None:
            with self._lock:
                self._pending[owner] -= 1
                if self._pending[owner] <= 0:
                    del self._pending[owner]

        future = self._pool.submit(_build, make, vocab)
        future.add_done_callback(release)  # also when cancelled
        return _Compile(future)

    def _too_complex(self, param: str) -> BadRequest:
        return BadRequest(
            f"the schema is too complex: it did not compile within {self.budget_s:g} s; "
            "send a smaller schema (fewer properties, shorter patterns)",
            code=SCHEMA_TOO_COMPLEX,
            param=param,
        )

    async def compile(
        self,
        digest: str,
        make: Callable[[], str],
        vocab: Vocabulary,
        param: str,
        owner: int | None = None,
    ) -> CompiledGrammar:
        """The compiled grammar; `owner` (the API key's id) is what ``per_key`` counts."""
        key = (digest, id(vocab))
        if key in self._refused:
            self._refused.move_to_end(key)
            raise self._too_complex(param)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._submit(make, vocab, owner)
            self._cache[key] = entry
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        self._cache.move_to_end(key)
        entry.waiters += 1
        try:
            waited = asyncio.shield(asyncio.wrap_future(entry.future))
            built = await asyncio.wait_for(waited, timeout=self.budget_s)
        except TimeoutError:
            started = entry.future.running() or (
                entry.future.done() and not entry.future.cancelled()
            )
            if self._forget(key, entry) or not started:
                raise self._busy("the schema waited its whole budget to be compiled") from None
            self._refused[key] = None  # it ran past its budget: the schema's fault
            while len(self._refused) > self._refused_size:
                self._refused.popitem(last=False)
            raise self._too_complex(param) from None
        finally:
            entry.waiters -= 1
            if entry.waiters == 0:
                self._forget(key, entry)  # nobody waits for it: drop it if it never started
        if isinstance(built, str):
            raise BadRequest(built, param=param)
        return built

    def _forget(self, key: tuple[str, int], entry: _Compile) -> bool:
        """Cancel `entry` if it is still queued (never started); True if it was."""
        if entry.waiters > 1 or not entry.future.cancel():
            return False
        if self._cache.get(key) is entry:
            del self._cache[key]
        return True

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class GrammarConstraint:
    """One answer's matcher: which of a few tokens the grammar allows, and advancing it."""

    def __init__(self, grammar: CompiledGrammar | str, vocab: Vocabulary | None = None) -> None:
        if isinstance(grammar, CompiledGrammar):
            self._vocab = grammar.vocab
            self._matcher = grammar.matcher.deep_copy()  # the compile is not repeated
        else:
            assert vocab is not None, "a grammar's text needs its vocabulary"
            self._vocab = vocab
            self._matcher = llguidance.LLMatcher(vocab.ll, grammar)
        self._open = OpenJson()
        if self._matcher.is_error():
            raise BadRequest(
                f"the schema cannot be enforced: {self._matcher.get_error()}",
                param="response_format",
            )

    def _mask(self) -> bytes:
        return bytes(self._matcher.compute_bitmask())

    def allowed(self, token_ids: Sequence[int]) -> list[bool]:
        mask = self._mask()
        return [0 <= t < len(mask) * 8 and bool(mask[t // 8] >> (t % 8) & 1) for t in token_ids]

    def fallback(self, preferred: Sequence[int]) -> int:
        """A token the grammar allows when the model's top 20 hold none: the forced one if
        the grammar forces one, else the allowed token sharing the longest start with the
        model's favourite's text."""
        forced = self._matcher.compute_ff_tokens()
        if forced:
            return int(forced[0])
        mask = self._mask()
        allowed = [t for t in range(self._vocab.ll.vocab_size) if mask[t // 8] >> (t % 8) & 1]
        if not allowed:
            raise BadRequest("the grammar allows no token here", param="response_format")
        texts = self._vocab.texts
        want = texts[preferred[0]] if preferred and preferred[0] < len(texts) else ""

        def shared(t: int) -> int:
            text, n = texts[t], 0
            while n < min(len(text), len(want)) and text[n] == want[n]:
                n += 1
            return n

        return max(allowed, key=lambda t: (shared(t), -t))

    def closer(self) -> int | None:
        """The end if the grammar allows it now, else the allowed token that is the longest
        start of what closes the open JSON (a string's quote, then brackets innermost
        first); None when none is allowed (a key needs its value, say)."""
        for token in self._vocab.eos_ids:
            if self.allowed([token])[0]:
                return token
        want = self._open.closing()
        if not want:
            return None
        mask = self._mask()
        best, size = None, 0
        for token in self._vocab.closers:
            text = self._vocab.texts[token].strip()
            if len(text) > size and want.startswith(text) and mask[token // 8] >> (token % 8) & 1:
                best, size = token, len(text)
        return best

    def advance(self, token_id: int) -> None:
        if 0 <= token_id < len(self._vocab.texts):
            self._open.feed(self._vocab.texts[token_id])
        if not self._matcher.consume_token(token_id):
            log.warning("llguidance refused token %d: %s", token_id, self._matcher.get_error())

    @property
    def done(self) -> bool:
        return bool(self._matcher.is_stopped())
