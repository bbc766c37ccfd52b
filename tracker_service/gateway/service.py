"""The gateway's one entry point: a validated request in, an answer (or events) out.

``Gateway.prepare`` does everything that can fail with a plain HTTP error
(model, verified assets, prompt, context, parameters) and produces the first
token, so that "no live route" is a 503 with ``Retry-After`` rather than an
error event inside a 200 stream. ``Answer.deltas`` then yields the text as it
is generated; a failure after the first token (no replacement for a dead hop)
surfaces as :class:`GenerationFailed` for the route to turn into an error event.
The answer's own types (``Answer``, ``Choice``, ``Piece``) live in ``answer.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
import uuid
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from tracker_service.config import Settings
from tracker_service.domain.credit_rules import priority_cost, reserve_cost
from tracker_service.domain.route_formation import PURPOSE_SERVE
from tracker_service.errors import (
    AssetsUnavailable,
    BadRequest,
    GenerationFailed,
    TemplateError,
    Unavailable,
)
from tracker_service.gateway.answer import Answer, Choice
from tracker_service.gateway.api_keys import Caller, KeyCheck, RateLimiter, SessionCap
from tracker_service.gateway.chain_memory import ChainMemory
from tracker_service.gateway.constraint import (
    CompiledGrammar,
    GrammarCompiler,
    GrammarConstraint,
    json_grammar,
    tool_call_grammar,
    vocabulary,
)
from tracker_service.gateway.generation import Generation, GenerationSettings
from tracker_service.gateway.model_assets import AssetStore, ModelAssets
from tracker_service.gateway.model_catalogue import ModelCatalogue, ServedModel
from tracker_service.gateway.observability import GatewayMetrics, RequestRecord
from tracker_service.gateway.openai_schemas import ChatCompletionCreate, CompletionCreate
from tracker_service.gateway.priority import CREDITED, FREE, PriorityGate
from tracker_service.gateway.sampler import (
    WIRE_TOP_K,
    GatewaySampler,
    SamplerSettings,
)
from tracker_service.gateway.text_stream import TextStream
from tracker_service.gateway.tools import template_knows_tools, with_preamble
from tracker_service.services.credits import CreditLedger
from tracker_service.services.departures import Departures
from tracker_service.services.prefix_affinity import PrefixAffinity
from tracker_service.services.reachability import ReachabilityMonitor
from tracker_service.services.route_planner import RoutePlanner
from tracker_service.services.session_plan import RoutePlan, Sampling
from tracker_service.services.step_audit import StepAuditor
from tracker_service.store.db import Database
from tracker_service.store.route_candidates import Key

RETRY_BROKEN_ROUTE_S = 5
# The last tokens of max_tokens in which a grammar's answer is steered shut (sampler.py).
CLOSING_MARGIN = 24


class Gateway:
    def __init__(
        self,
        settings: Settings,
        database: Database,
        planner: RoutePlanner,
        monitor: ReachabilityMonitor,
        metrics: GatewayMetrics,
        *,
        auditor: StepAuditor | None = None,
        credits: CreditLedger | None = None,
        departures: Departures | None = None,
    ) -> None:
        self.settings = settings
        self.credits = credits
        # leaving nodes' announcements: their route sessions fail over at once
        self.departures = departures or Departures()
        self.priority = PriorityGate(
            settings.gateway_max_concurrent, free_share=settings.gateway_free_share
        )
        self.grammars = GrammarCompiler(settings.gateway_grammar_budget_s)
        self.catalogue = ModelCatalogue(
            database,
            planner,
            trust_first_source=settings.trust_first_model_source,
            allowed_sources=settings.allowed_model_sources,
        )
        self.assets = AssetStore(database, allow_private_endpoints=settings.allow_private_endpoints)
        self.keys = KeyCheck(
            database,
            requests_per_minute=settings.gateway_requests_per_minute,
            tokens_per_minute=settings.gateway_tokens_per_minute,
        )
        self.limiter = RateLimiter()
        self.sessions = SessionCap(settings.gateway_max_sessions_per_key)
        self.metrics = metrics
        self._planner = planner
        self.affinity = PrefixAffinity()  # routes that served a prompt's prefix lately
        self.chains = ChainMemory()  # hops that could not link to each other lately
        self._monitor = monitor
        self._auditor = auditor  # audits the final hop too: a lying last node is caught
        self._generation = GenerationSettings(
            open_timeout_s=settings.gateway_open_timeout_s,
            step_timeout_s=settings.gateway_step_timeout_s,
            max_failovers=settings.gateway_max_failovers,
            speculative=settings.gateway_speculative_decoding,
            chain=settings.gateway_chained_hops,
            allow_private_endpoints=settings.allow_private_endpoints,
            allow_plaintext_nodes=settings.allow_plaintext_nodes,
        )

    def plan(
        self,
        key: Key,
        exclude: Collection[str],
        prefer: Collection[str] = (),
        prefer_slack: float | None = None,
    ) -> RoutePlan:
        return self._planner.plan(
            key, purpose=PURPOSE_SERVE, exclude=exclude, prefer=prefer, prefer_slack=prefer_slack
        )

    async def models(self) -> list[ServedModel]:
        return await asyncio.to_thread(self.catalogue.listed)

    async def authenticate(self, authorization: str | None, host: str | None) -> Caller:
        caller = await asyncio.to_thread(self.keys.authenticate, authorization, host)
        self.limiter.admit(caller)
        return caller

    async def served(self, model: str) -> tuple[ServedModel, ModelAssets]:
        """The model's certified recipe and verified assets (ModelNotFound, Unavailable)."""
        return await self._served(model)

    async def count_prompt(self, body: ChatCompletionCreate) -> int:
        """The prompt's tokens as ``prepare`` would send them (Anthropic's count_tokens)."""
        _served, assets = await self._served(body.model)
        return len(self._prompt_ids(body, assets, body.functions))

    async def _served(self, model: str) -> tuple[ServedModel, ModelAssets]:
        served = await asyncio.to_thread(self.catalogue.resolve, model)
        try:
            assets = await self.assets.get(served.info, served.candidates)
        except AssetsUnavailable as exc:
            raise Unavailable(str(exc), retry_after_s=RETRY_BROKEN_ROUTE_S) from exc
        return served, assets

    async def prepare(
        self,
        body: ChatCompletionCreate | CompletionCreate,
        caller: Caller,
        record: RequestRecord,
    ) -> Answer:
        """The request's answer, its route sessions (one per choice) counted against the
        key's cap from the start (429 too_many_sessions past it) until it closes."""
        end_sessions = self.sessions.open(caller, body.n)
        try:
            answer = await self._prepare(body, caller, record)
        except BaseException:
            end_sessions()
            raise
        on_close = answer._on_close

        async def closed(tokens: int) -> None:
            end_sessions()
            if on_close is not None:
                await on_close(tokens)

        answer._on_close = closed
        return answer

    async def _prepare(
        self,
        body: ChatCompletionCreate | CompletionCreate,
        caller: Caller,
        record: RequestRecord,
    ) -> Answer:
        unsupported = body.unsupported()
        if unsupported:
            raise BadRequest(
                f"this gateway does not support {', '.join(unsupported)}; remove "
                f"{'it' if len(unsupported) == 1 else 'them'} from the request",
                code="unsupported_parameter",
                param=unsupported[0],
            )
        served, assets = await self._served(body.model)
        functions = body.functions if isinstance(body, ChatCompletionCreate) else []
        prompt = self._prompt_ids(body, assets, functions)
        max_tokens = self._max_tokens(body, len(prompt), assets)
        vocab_size = assets.tokenizer.get_vocab_size(with_added_tokens=True)
        outside = [t for t in body.bias if t >= vocab_size]
        if outside:
            raise BadRequest(
                f"logit_bias names token id {outside[0]}, outside the model's vocabulary of "
                f"{vocab_size}",
                param="logit_bias",
            )
        grammar = await self._grammar(body, assets, caller.key_id)
        on_close = await self._take_slot(caller, reserve_cost(len(prompt), max_tokens, body.n))
        try:
            answer = await self._answer(
                body, caller, record, served, assets, prompt, max_tokens, grammar, functions
            )
        except BaseException:
            await on_close(0)
            raise
        answer._on_close = on_close
        return answer

    async def _take_slot(self, caller: Caller, worst: float) -> Callable[[int], Awaitable[None]]:
        """Wait for a generation slot (credited keys first, docs/credits.md). A credited
        request first reserves its worst case (`worst`); the returned callback gives the
        slot back and settles: spends what the tokens used cost, frees the rest."""
        held = None
        if self.credits is not None and self.priority.enabled:
            held = await asyncio.to_thread(self.credits.reserve, caller.key_id, worst)
        try:
            await self.priority.acquire(CREDITED if held else FREE)
        except BaseException:
            if held is not None and self.credits is not None:
                await asyncio.to_thread(self.credits.settle, held, 0.0)
            raise
        released = False

        async def on_close(tokens: int) -> None:
            nonlocal released
            if released:
                return
            released = True
            self.priority.release()
            if held is not None and self.credits is not None:
                with contextlib.suppress(Exception):
                    await asyncio.to_thread(self.credits.settle, held, priority_cost(tokens))

        return on_close

    async def _answer(
        self,
        body: ChatCompletionCreate | CompletionCreate,
        caller: Caller,
        record: RequestRecord,
        served: ServedModel,
        assets: ModelAssets,
        prompt: list[int],
        max_tokens: int,
        grammar: CompiledGrammar | None,
        functions: list[dict[str, Any]],
    ) -> Answer:
        """Start the request's ``n`` choices together and wrap them in an Answer."""
        choices: list[Choice] = []
        try:
            starts = [
                self._start(body, caller, served.info.key, assets, prompt, max_tokens, grammar, i)
                for i in range(body.n)
            ]
            # Concurrent route sessions, so the nodes batch the choices' steps.
            results = await asyncio.gather(*starts, return_exceptions=True)
            choices = [r for r in results if isinstance(r, Choice)]
            failed = [r for r in results if isinstance(r, BaseException)]
            if failed:
                raise failed[0]
        except GenerationFailed as exc:
            for choice in choices:
                await choice.aclose()
            raise Unavailable(
                f"no route could serve '{body.model}': {exc.message}",
                retry_after_s=RETRY_BROKEN_ROUTE_S,
            ) from exc
        except BaseException:
            for choice in choices:
                await choice.aclose()
            raise
        prefix = "chatcmpl" if isinstance(body, ChatCompletionCreate) else "cmpl"
        return Answer(
            id=f"{prefix}-{uuid.uuid4().hex}",
            model=body.model,
            created=int(time.time()),
            prompt_tokens=len(prompt),
            max_tokens=max_tokens,
            choices=choices,
            record=record,
            caller=caller,
            functions=functions,
            token_text=lambda t: assets.tokenizer.decode([t], skip_special_tokens=False),
        )

    async def _grammar(
        self,
        body: ChatCompletionCreate | CompletionCreate,
        assets: ModelAssets,
        key_id: int | None = None,
    ) -> CompiledGrammar | None:
        """The grammar the answer is decoded under, compiled off the event loop within
        the budget (gateway/constraint.py), if any; `key_id`'s pending compiles are capped."""
        if not isinstance(body, ChatCompletionCreate):
            return None
        forced = body.forced_functions
        fmt = body.response_format
        make: Callable[[], str]
        spec: Any
        if forced:
            kind, spec, param = "tools", forced, "tools"
            make = functools.partial(tool_call_grammar, forced)
        elif fmt is not None and fmt.type == "json_object":
            kind, spec, param = "json_object", None, "response_format"
            make = functools.partial(json_grammar, None)
        elif fmt is not None and fmt.type == "json_schema" and fmt.json_schema is not None:
            schema = fmt.json_schema.schema_ or {}
            kind, spec, param = "json_schema", schema, "response_format"
            make = functools.partial(json_grammar, schema)
        else:
            return None
        vocab = await asyncio.to_thread(vocabulary, assets.tokenizer, assets.eos_ids)
        digest = await asyncio.to_thread(GrammarCompiler.digest, kind, spec)
        return await self.grammars.compile(digest, make, vocab, param, key_id)

    async def _start(
        self,
        body: ChatCompletionCreate | CompletionCreate,
        caller: Caller,
        key: Key,
        assets: ModelAssets,
        prompt: list[int],
        max_tokens: int,
        grammar: CompiledGrammar | None,
        index: int,
    ) -> Choice:
        """Open choice `index`'s route session and produce its first token."""
        seed = body.seed + index if body.seed is not None else None
        sampler: GatewaySampler | None = None
        gateway_samples = (
            grammar is not None
            or body.wants_logprobs
            or bool(body.presence_penalty)
            or bool(body.frequency_penalty)
            or bool(body.logit_bias)
        )
        top_k = body.top_k or 0
        if gateway_samples and 0 < top_k < WIRE_TOP_K and body.temperature > 0:
            # The gateway draws from the last hop's top 20 and has no top_k of its own.
            raise BadRequest(
                f"top_k {top_k} cannot be combined with a format, tools, log-probs, "
                "penalties or logit_bias at a temperature above 0: drop top_k (the gateway "
                f"then draws from the {WIRE_TOP_K} most likely tokens) or one of those",
                param="top_k",
            )
        if gateway_samples:
            constraint = GrammarConstraint(grammar) if grammar is not None else None
            sampler = GatewaySampler(
                SamplerSettings(
                    temperature=body.temperature,
                    top_p=body.top_p,
                    seed=seed,
                    presence_penalty=body.presence_penalty or 0.0,
                    frequency_penalty=body.frequency_penalty or 0.0,
                    logit_bias=body.bias,
                    top_logprobs=body.top_logprob_count,
                    closing_after=(
                        max(max_tokens - CLOSING_MARGIN, max_tokens // 2) if grammar else None
                    ),
                ),
                constraint,
            )
            # The last hop reports its top 20 greedily; the gateway chooses among them.
            sampling = Sampling(temperature=0.0, logprobs=WIRE_TOP_K)
        else:
            sampling = Sampling(
                temperature=body.temperature, top_p=body.top_p, seed=seed, top_k=top_k
            )
        generation = Generation(
            key,
            self.plan,
            sampling,
            self._generation,
            on_suspect=self._monitor.suspect,
            auditor=self._auditor,
            pick=sampler.pick if sampler is not None else None,
            affinity=self.affinity,
            on_receipts=self.credits.sink(caller.key_id, caller.host) if self.credits else None,
            speculative=body.speculative,
            chain=body.chain,
            chains=self.chains,
            departures=self.departures,
        )
        tokens = generation.run(prompt, max_tokens, assets.eos_ids)
        try:
            first = await anext(tokens)
        except BaseException:
            await tokens.aclose()
            raise
        return Choice(
            index=index,
            generation=generation,
            sampler=sampler,
            _tokens=tokens,
            _first=first,
            _text=TextStream(assets.decode, body.stop_list),
            _eos=assets.eos_ids,
        )

    def _prompt_ids(
        self,
        body: ChatCompletionCreate | CompletionCreate,
        assets: ModelAssets,
        functions: list[dict[str, Any]],
    ) -> list[int]:
        if isinstance(body, ChatCompletionCreate):
            if assets.template is None:
                raise Unavailable(
                    f"the chat template of '{body.model}' could not be verified: no live node "
                    "serves the bytes pinned when it was certified (or, with no pin, fewer than "
                    "two nodes serve identical copies); /v1/completions with a raw prompt works",
                    code="chat_template_unverified",
                    retry_after_s=RETRY_BROKEN_ROUTE_S,
                )
            messages = [m.to_template() for m in body.messages]
            tools: list[dict[str, Any]] | None = None
            if functions and template_knows_tools(assets.template.source):
                tools = [{"type": "function", "function": f} for f in functions]
            else:  # no tool syntax in the template: the documented preamble (gateway/tools.py)
                messages = with_preamble(messages, functions)
            try:
                text = assets.template.render(messages, tools)
            except TemplateError as exc:
                raise BadRequest(str(exc), param="messages") from exc
            ids = assets.encode(text)
        elif isinstance(body.prompt, str):
            ids = assets.encode(body.prompt)
        elif body.prompt and isinstance(body.prompt[0], str):
            ids = assets.encode(str(body.prompt[0]))
        else:
            ids = [int(i) for i in body.prompt]
            vocab = assets.tokenizer.get_vocab_size(with_added_tokens=True)
            bad = [i for i in ids if not 0 <= i < vocab]
            if bad:
                raise BadRequest(
                    f"token id {bad[0]} is outside the model's vocabulary of {vocab}",
                    param="prompt",
                )
        if not ids:
            raise BadRequest("the prompt is empty after tokenization", param="prompt")
        return ids

    def _max_tokens(
        self, body: ChatCompletionCreate | CompletionCreate, prompt: int, assets: ModelAssets
    ) -> int:
        context = assets.context_length
        asked = body.token_limit
        if context is not None and prompt >= context:
            raise BadRequest(
                f"the prompt is {prompt} tokens, and the model's context is {context}: "
                "shorten the prompt or the conversation",
                code="context_length_exceeded",
                param="messages" if isinstance(body, ChatCompletionCreate) else "prompt",
            )
        if asked is None:
            room = (context - prompt) if context is not None else None
            default = body.default_max_tokens(self.settings.gateway_default_max_tokens)
            return min(default, room) if room is not None else default
        if context is not None and prompt + asked > context:
            raise BadRequest(
                f"the prompt is {prompt} tokens and max_tokens is {asked}: {prompt + asked} is "
                f"past the model's context of {context} tokens; lower max_tokens to at most "
                f"{context - prompt} or shorten the prompt",
                code="context_length_exceeded",
                param="max_tokens",
            )
        return asked
