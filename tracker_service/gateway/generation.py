"""One generation over certified routes, with failover mid-stream.

A hop that dies (connection lost, a refusal, a step past its deadline) ends
that route session. The generation then asks the planner for a route that
avoids the failed node, replays the whole prefix (prompt plus every token
produced so far) as one prefill so each hop rebuilds its cache, and goes on
from the next token: nothing is emitted twice or skipped, and greedy decoding
continues exactly as an undisturbed run would. A node that refuses to open
(at its session limit, out of KV budget) is skipped the same way. When no
route is left the caller gets :class:`GenerationFailed`, never a hang: every
wait is bounded by the route client's timeouts.

The replacement is a whole new route (a ticket binds the full hop list, so a
span cannot be swapped under the old one); hops that survive may be chosen
again and simply rebuild their caches from the replayed prefix.

Sampled (temperature > 0) answers are drawn here, never on a node: the last hop is
opened greedy with its 20 most likely tokens and their log-probs, and a
:class:`~tracker_service.gateway.sampler.GatewaySampler` (seeded by the request, or
by the OS) draws among them. So the last hop's reply is a deterministic function of
its inputs that an audit replays and compares (hop_audit.py), its receipt binds what
the draw used, and a seed gives the same answer even across a failover.

Whatever way the generation ends (done, failed, or the client went away and
the task was cancelled), every hop's session is closed or dropped, so no node
keeps a KV cache for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, Callable, Collection, Sequence
from dataclasses import dataclass, field

from tracker_service.errors import (
    GenerationFailed,
    NoRoute,
    RouteFailure,
    RouteRefused,
)
from tracker_service.gateway.chain_memory import ChainMemory
from tracker_service.gateway.drafting import (
    DraftLength,
    PromptLookup,
    SpeedGate,
)
from tracker_service.gateway.sampler import WIRE_TOP_K, GatewaySampler, SamplerSettings
from tracker_service.services.departures import Departures
from tracker_service.services.hop_link import CHAIN_REASONS, DEPARTURE_REASONS
from tracker_service.services.prefix_affinity import PrefixAffinity, PrefixHint
from tracker_service.services.route_receipts import ReceiptsHook
from tracker_service.services.route_session import RouteSession
from tracker_service.services.session_plan import GeneratedToken, RoutePlan, Sampling
from tracker_service.services.step_audit import StepAuditor
from tracker_service.store.route_candidates import Key

log = logging.getLogger(__name__)

# (recipe, nodes to exclude, nodes to prefer) -> a route; blocking, run in a thread
# (recipe, nodes to leave out, nodes to prefer, how much costlier a preferred node may be)
Planner = Callable[[Key, Collection[str], Collection[str], float | None], RoutePlan]
# Chooses the token to feed back from the last hop's reply (gateway-side sampling:
# gateway/sampler.py); without one, the token the last hop sampled is taken.
Picker = Callable[[GeneratedToken], int]


@dataclass
class GenerationStats:
    routes: list[RoutePlan] = field(default_factory=list)
    failovers: int = 0
    failed_nodes: list[str] = field(default_factory=list)
    # Why each failover happened (a hop's reason code: node-left, node-leaving, timeout…)
    failover_reasons: list[str] = field(default_factory=list)
    stall_s: float = 0.0  # time from a hop's failure to the next token
    first_token_at: float | None = None  # perf_counter() when the first token came
    # Prompt tokens the route's nodes took from their prefix caches instead of computing
    # (of the prefill that produced the first token): usage.prompt_tokens_details.cached_tokens
    cached_tokens: int = 0
    started: float = field(default_factory=time.perf_counter)
    # Where a decode token's time goes: inside the route's step (the hops' compute and
    # the legs to them), or between steps (sampling, detokenizing, the stream's write
    # and the caller's reading: the gateway's own share), summed over decode steps.
    decode_steps: int = 0  # tokens produced by decode steps (several a speculative step)
    in_route_s: float = 0.0
    between_steps_s: float = 0.0
    # Speculative decoding (gateway/drafting.py): tokens drafted, and those the route kept
    drafted_tokens: int = 0
    accepted_tokens: int = 0
    shape: str = "-"  # the last opened route's: "chain" or "star"

    def per_decode_token_ms(self) -> tuple[float, float] | None:
        """(ms inside the route, ms between steps) per decode token; None before one."""
        if not self.decode_steps:
            return None
        n = self.decode_steps
        return self.in_route_s * 1000.0 / n, self.between_steps_s * 1000.0 / n

    @property
    def route_header(self) -> str:
        """The current route as ``node:start-end,...`` (the X-Meshnet-Route header)."""
        if not self.routes:
            return ""
        hops = self.routes[-1].hops
        return ",".join(f"{h.node_id}:{h.effective_start}-{h.end}" for h in hops)

    @property
    def route_text(self) -> str:
        if not self.routes:
            return "-"
        hops = self.routes[-1].hops
        return " -> ".join(f"{h.node_id[:8]}[{h.effective_start},{h.end})" for h in hops)


@dataclass(frozen=True)
class GenerationSettings:
    open_timeout_s: float = 15.0
    step_timeout_s: float = 30.0
    max_failovers: int = 4
    allow_private_endpoints: bool = False
    allow_plaintext_nodes: bool = False  # route through unpinned ws:// nodes (development)
    # greedy answers verify prompt-lookup drafts (drafting.py): "auto" while that serves
    # tokens faster (drafting.SpeedGate), "on" always, "off" never
    speculative: str = "auto"
    # routes run as chains where the ticket offers one ("auto"), or always as stars ("off")
    chain: str = "auto"


class Generation:
    """``async for token_id in Generation(...).run(prompt, max_new, stop_ids)``."""

    def __init__(
        self,
        key: Key,
        plan: Planner,
        sampling: Sampling,
        settings: GenerationSettings,
        *,
        on_suspect: Callable[[str], object] | None = None,
        auditor: StepAuditor | None = None,
        affinity: PrefixAffinity | None = None,
        on_receipts: ReceiptsHook | None = None,
        pick: Picker | None = None,
        speculative: bool = True,
        chain: bool = True,
        chains: ChainMemory | None = None,
        departures: Departures | None = None,
    ) -> None:
        if pick is None and sampling.temperature > 0:
            # the node's answer must replay exactly: the draw is the gateway's own
            drawn = GatewaySampler(
                SamplerSettings(
                    temperature=sampling.temperature,
                    top_p=sampling.top_p,
                    top_k=sampling.top_k,
                    seed=sampling.seed,
                )
            )
            pick = drawn.pick
            sampling = Sampling(temperature=0.0, logprobs=WIRE_TOP_K)
        self._pick = pick
        # run routes as chains (docs/wire.md#chained-hops) until one fails as a chain
        self._chain = chain and settings.chain != "off"
        self._chains = chains  # routes that failed as chains lately, across requests
        self._speculative = speculative  # the request's choice (the operator's: settings)
        self._gate = SpeedGate()  # which kind of decode step serves tokens faster now
        self._key = key
        # the nodes that served this prompt's prefix lately are preferred: their prefix
        # caches hold its KV (docs/wire.md#prefix-cache)
        self._affinity = affinity
        self._prefer = PrefixHint(frozenset(), 0)
        self._prefer_slack: float | None = None
        self._on_receipts = on_receipts  # credits the hops of each cleanly closed session
        self._plan = plan
        self._sampling = sampling
        self._settings = settings
        self._on_suspect = on_suspect
        self._auditor = auditor
        self._session: RouteSession | None = None
        # positions of the answer a failed-over route's hops were paid for (their signed
        # step receipts): the replacement's replay of them earns nothing
        self._paid_layers: list[int] = []
        self._settling: list[asyncio.Task[None]] = []  # failed routes' pay, after audits
        self._departures = departures  # a leaving node's announcement fails its hops over
        self.stats = GenerationStats()

    async def run(
        self, prompt_ids: Sequence[int], max_new_tokens: int, stop_ids: Collection[int] = ()
    ) -> AsyncGenerator[int, None]:
        context = list(prompt_ids)
        max_length = len(context) + max_new_tokens
        excluded: list[str] = []
        feed: list[int] = list(context)
        failed_at: float | None = None
        produced = 0
        answered_at: float | None = None  # when the last step's token came back
        if self._affinity is not None:
            self._prefer = self._affinity.hint_for(self._key, context)
            self._prefer_slack = self._prefer.slack(max_new_tokens)
        lookup, length = PromptLookup(), DraftLength()
        try:
            while produced < max_new_tokens:
                if self._session is None:
                    # the new route replays ``context``: what is paid of it earns nothing
                    paid = [min(p, len(context)) for p in self._paid_layers]
                    await self._open(max_length, excluded, paid)
                    feed = list(context)  # replay the prefix: the new hops rebuild their caches
                session = self._session
                assert session is not None
                began = time.perf_counter()
                speculated = False
                try:
                    if self._speculates(session):
                        room = max_new_tokens - produced - 1  # the last token needs no draft
                        room = min(room, max_length - session.position - len(feed))
                        draft = lookup.draft(context, min(length.now, room))
                        speculated = bool(draft)
                        tokens = await self._speculative_step(session, feed, draft, length)
                        token = None
                    else:
                        token = await session.step(feed)
                        tokens = [self._pick(token) if self._pick is not None else token.token_id]
                except RouteFailure as exc:
                    failed_at = failed_at or time.perf_counter()
                    answered_at = None  # the replay after a failover is no decode step
                    await self._fail_over(exc, excluded)
                    continue
                if answered_at is not None:
                    self._gate.observe(speculated, time.perf_counter() - began, len(tokens))
                    self.stats.decode_steps += len(tokens)
                    self.stats.between_steps_s += began - answered_at
                    self.stats.in_route_s += time.perf_counter() - began
                answered_at = time.perf_counter()
                if failed_at is not None:
                    self.stats.stall_s += time.perf_counter() - failed_at
                    failed_at = None
                if self.stats.first_token_at is None and token is not None:
                    self.stats.first_token_at = time.perf_counter()
                    self.stats.cached_tokens = min(token.cached, len(prompt_ids))
                    if self._affinity is not None:
                        hops = session.plan.hops
                        self._affinity.record(self._key, prompt_ids, [h.node_id for h in hops])
                stopped = False
                for chosen in tokens[: max_new_tokens - produced]:
                    produced += 1
                    context.append(chosen)
                    yield chosen
                    if chosen in stop_ids:
                        stopped = True
                        break
                if stopped:
                    break
                feed = [tokens[-1]]
            await self._close()
        finally:
            await self._drop()
            # the failed routes' hops are paid once their audits ended (bounded)
            await asyncio.gather(*self._settling, return_exceptions=True)

    def _speculates(self, session: RouteSession) -> bool:
        """Decode steps verify drafts when the last hop's token is the answer's (greedy: no
        gateway-side sampling or grammar, no log-probs), every
        hop takes speculative steps, and (``auto``) such steps have lately served this
        route's tokens faster than plain ones (drafting.SpeedGate). A prefill is always
        a plain step."""
        mode = self._settings.speculative
        eligible = (
            mode != "off"
            and self._speculative
            and session.position > 0
            and self._pick is None
            and self._sampling.logprobs == 0
            and session.speculative
        )
        if not eligible:
            return False
        if mode == "on":
            return True
        return self._gate.speculate()

    async def _speculative_step(
        self, session: RouteSession, feed: list[int], draft: list[int], length: DraftLength
    ) -> list[int]:
        """One round trip: `feed` and the draft verified together; the drafts the last hop
        kept (greedy: while a draft is its argmax, runtime/speculation.py on the node), then
        its own next token. The positions of drafts not kept are rewound."""
        if not draft:
            token = await session.step(feed)
            return [token.token_id]
        answer = await session.verify([*feed, *draft], draft)
        kept = len(answer) - 1  # the route checked: answer[:kept] is the draft's start
        session.rewind(session.position - (len(draft) - kept))
        length.update(kept, len(draft))
        self.stats.drafted_tokens += len(draft)
        self.stats.accepted_tokens += kept
        return answer

    async def _open(self, max_length: int, excluded: list[str], credited: list[int]) -> None:
        while True:
            try:
                plan = await asyncio.to_thread(
                    self._plan,
                    self._key,
                    tuple(excluded),
                    self._prefer.nodes,
                    self._prefer_slack,
                )
            except (NoRoute, RouteRefused) as exc:
                detail = exc.message
                if excluded:
                    left_out = ", ".join(n[:8] for n in excluded)
                    detail += f" (after leaving out failed node(s) {left_out})"
                raise GenerationFailed(detail, no_route=True) from exc
            self.stats.routes.append(plan)
            session = RouteSession(
                plan,
                open_timeout_s=self._settings.open_timeout_s,
                step_timeout_s=self._settings.step_timeout_s,
                auditor=self._auditor,
                allow_private_endpoints=self._settings.allow_private_endpoints,
                allow_plaintext_nodes=self._settings.allow_plaintext_nodes,
                on_receipts=self._on_receipts,
                chain=self._chain and self._may_chain(plan),
                departures=self._departures,
                credited_layers=credited,
            )
            self._session = session
            try:
                await session.open(max_length, self._sampling)
                self.stats.shape = "chain" if session.chained else "star"
                return
            except RouteFailure as exc:
                # A node at its session limit (or gone) is skipped, not waited for.
                await self._fail_over(exc, excluded)

    def _may_chain(self, plan: RoutePlan) -> bool:
        return self._chains is None or self._chains.can_chain([h.node_id for h in plan.hops])

    async def _fail_over(self, exc: RouteFailure, excluded: list[str]) -> None:
        route = self._session.plan.route_session_id if self._session else "-"
        log.warning("route %s failed: %s", route, exc)
        failed = self._session.plan if self._session else None
        await self._abandon(exc)
        self.stats.failovers += 1
        self.stats.failed_nodes.append(exc.node_id)
        self.stats.failover_reasons.append(exc.reason)
        if exc.reason in CHAIN_REASONS and self._chain:
            # The nodes could not chain (a link refused, unreachable between them, or a
            # hop passed on other states than it showed): the same route runs as a star.
            self._chain = False
            if self._chains is not None and failed is not None:
                self._chains.failed([h.node_id for h in failed.hops], exc.hop_index)
        elif exc.node_id not in excluded:
            excluded.append(exc.node_id)
        # A node that said it leaves is not suspect: it is out of routing already.
        if self._on_suspect is not None and exc.reason not in DEPARTURE_REASONS:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self._on_suspect, exc.node_id)
        if self.stats.failovers > self._settings.max_failovers:
            raise GenerationFailed(
                f"the route failed {self.stats.failovers} times; last: {exc.message} "
                f"[{exc.reason}]",
                no_route=False,
            ) from exc

    async def finish(self) -> None:
        """Close the current session cleanly (receipts collected) when the caller stops
        reading before the generator ran to its end (a stop sequence, eos)."""
        await self._close()

    async def _close(self) -> None:
        """A clean close: every hop returns its receipt and frees its cache."""
        session, self._session = self._session, None
        if session is None:
            return
        try:
            await session.close()
        except RouteFailure as exc:
            log.info("closing route %s: %s", session.plan.route_session_id, exc)

    async def _abandon(self, failure: RouteFailure) -> None:
        """A failover: the route's connections drop now; the verified steps of its hops
        are paid in the background once its audits end (RouteSession.settle_abandoned)."""
        session, self._session = self._session, None
        if session is None:
            return
        self._paid_layers = await asyncio.shield(session.abandon(failure))
        self._settling.append(asyncio.create_task(session.settle_abandoned()))

    async def _drop(self) -> None:
        """Drop every hop's connection (the nodes free their caches), even when cancelled:
        the drop runs as its own task, so a cancellation that interrupts this await
        cannot leave a later hop open."""
        session, self._session = self._session, None
        if session is not None:
            await asyncio.shield(session.abort())
