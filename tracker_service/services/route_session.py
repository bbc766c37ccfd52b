"""The tracker's route client: drives one route session across its hops.

One WebSocket per hop (``ws://host:port/v1/session``), opened in route order
with the same signed ticket. A step sends the token ids to the first hop and
relays each hop's hidden states to the next; the last hop samples and returns
token ids. Closing collects every hop's receipt and verifies it against the key
the node registered with, and against the work this client actually sent.

Async, so a gateway can stream tokens as they are produced::

    async with RouteSession(plan) as session:
        await session.open(max_length=len(prompt) + 16, sampling=Sampling(temperature=0.7))
        async for token in session.generate(prompt, 16, stop_ids={eos}):
            ...
        receipts = await session.close()

The plan it runs is :mod:`tracker_service.services.session_plan`; one hop's WebSocket
and the failures it reads as are :mod:`tracker_service.services.hop_link`.

Hop audits run off the critical path (:mod:`tracker_service.services.route_audits`):
a verdict that quarantines or withdraws a hop fails the route at its next step, or at
``close``; ``close`` awaits them, ``abort`` cancels them.

Independent of ``core`` (the wire contract is re-implemented in
:mod:`tracker_service.domain.wire_frames` and :mod:`tracker_service.domain.tickets`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

from tracker_service.domain import wire_frames
from tracker_service.domain.tickets import (
    HopReceipt,
    chain_step_statement,
    verify_chain_step,
)
from tracker_service.errors import RouteFailure
from tracker_service.services.hop_link import (
    CHAIN_FORGED,
    CHAIN_MISMATCH,
    CHAIN_REFUSED,
    CONNECTION_CLOSED,
    FRAME_TOO_LARGE,
    NODE_LEFT,
    PROTOCOL,
    TIMEOUT,
    UNREACHABLE,
    HopLink,
)
from tracker_service.services.route_audits import DISPUTED, RouteAudits
from tracker_service.services.route_receipts import (
    ReceiptsHook,
    RoutePay,
    payable_after,
    verified_receipt,
)
from tracker_service.services.session_plan import GeneratedToken, PlannedHop, RoutePlan, Sampling

if TYPE_CHECKING:
    from tracker_service.services.departures import Departures
    from tracker_service.services.step_audit import StepAuditor

log = logging.getLogger(__name__)

# The plan and the failure lived here before the split: the route planner and clients
# outside the tracker still import them from here.
__all__ = [
    "CONNECTION_CLOSED",
    "DEFAULT_MAX_REPLY_BYTES",
    "DISPUTED",
    "FRAME_TOO_LARGE",
    "TIMEOUT",
    "UNREACHABLE",
    "GeneratedToken",
    "PlannedHop",
    "RouteFailure",
    "RoutePlan",
    "RouteSession",
    "Sampling",
]

DEFAULT_MAX_REPLY_BYTES = 256 * 1024 * 1024
DEFAULT_MAX_AUDITS_IN_FLIGHT = 2  # per session; one per hop at most


class RouteSession:
    """``open`` -> ``step``/``generate`` -> ``close`` over every hop of one plan."""

    def __init__(
        self,
        plan: RoutePlan,
        *,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        open_timeout_s: float = 30.0,
        step_timeout_s: float = 120.0,
        auditor: StepAuditor | None = None,
        allow_private_endpoints: bool = True,
        allow_plaintext_nodes: bool = True,
        on_receipts: ReceiptsHook | None = None,
        max_audits_in_flight: int = DEFAULT_MAX_AUDITS_IN_FLIGHT,
        chain: bool = False,
        departures: Departures | None = None,
        credited_layers: Sequence[int] = (),
    ) -> None:
        """``chain``: run the route as a chain where its ticket offers one (each hop passes
        its output straight to the next, docs/wire.md#chained-hops); a star otherwise.
        ``departures``: the tracker's announcements of leaving nodes; a hop on one is
        closed at once and its step fails with ``node-left`` (services/departures.py).
        ``credited_layers``: per layer, the positions of this answer a route before it
        (failed over) already paid for; this route's replay of them earns nothing."""
        if not plan.hops:
            raise ValueError("a route plan needs at least one hop")
        self.plan = plan
        # Each hop's host is resolved once, checked (unless private ones are allowed)
        # and dialled at that address: a rebinding resolver cannot redirect a session.
        self._allow_private = allow_private_endpoints
        # Plaintext ws:// hops without a TLS pin: a direct client's choice; the tracker's
        # own sessions pass its --allow-plaintext-nodes setting (off by default).
        self._allow_plaintext = allow_plaintext_nodes
        self._max_reply = max_reply_bytes
        self._open_timeout_s = open_timeout_s
        self._step_timeout_s = step_timeout_s
        self._hops = [HopLink(hop, i) for i, hop in enumerate(plan.hops)]
        self.position = 0
        self.max_length = 0
        # prompt positions of the prefill every hop took from its prefix cache
        self.cached_tokens = 0
        self._audits = RouteAudits(
            auditor,
            plan,
            max_in_flight=max_audits_in_flight,
            step_timeout_s=step_timeout_s,
            receipt_now=self.receipt_now,
        )
        self._auditor = auditor
        self._logprobs = 0  # top log-probs the last hop owes each plain step
        self._rewind = False  # the next step's frame tells every hop to forget drafts
        self._on_receipts = on_receipts
        self._chain_wanted = chain
        self.chained = False  # opened as a chain: steps go to the first hop only
        self._departures = departures
        self._unwatch: Callable[[], None] | None = None
        self._pay = RoutePay(plan, on_receipts, credited_layers)
        self._abandoned_for: RouteFailure | None = None

    async def __aenter__(self) -> RouteSession:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.abort()

    # -- open --------------------------------------------------------------------------------

    async def open(self, max_length: int, sampling: Sampling | None = None) -> None:
        """Open every hop with the ticket; the last hop gets `sampling`. A star opens the
        hops in route order; a chain opens them all at once (each hop links to the next
        before it answers, docs/wire.md#chained-hops)."""
        self.max_length = max_length
        if self._departures is not None and self._unwatch is None:
            nodes = [hop.plan.node_id for hop in self._hops]
            self._unwatch = self._departures.watch(nodes, self._departed)
        wanted = sampling or Sampling()
        if self._auditor is not None and wanted.temperature != 0:
            # An audit replays the last hop and must get the same answer: its randomness
            # is the gateway's (gateway/sampler.py), never a generator on the node.
            raise ValueError(
                "an audited route session opens its last hop greedy; sample at the gateway "
                "from its top log-probs"
            )
        self._logprobs = wanted.logprobs
        await self._audits.set_policies(self._hops)
        chain = self._chain_wanted and self.plan.chain_offered
        if not chain:
            for hop in self._hops:
                await self._open_hop(hop, max_length, sampling, chain=False)
            return
        tasks = [
            asyncio.create_task(self._open_hop(hop, max_length, sampling, chain=True))
            for hop in self._hops
        ]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in tasks:
            task.cancel()  # the others' opens end once one hop failed
        results = await asyncio.gather(*tasks, return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        real = [f for f in failures if not isinstance(f, asyncio.CancelledError)]
        if real:
            raise real[0]
        if failures:  # cancelled from outside
            raise asyncio.CancelledError
        self.chained = True

    async def _open_hop(
        self, hop: HopLink, max_length: int, sampling: Sampling | None, *, chain: bool
    ) -> None:
        last = hop.index == len(self._hops) - 1
        message: dict[str, Any] = {
            "type": "open",
            "ticket": self.plan.signed_ticket,
            "max_length": max_length,
            "step_receipts": True,  # every reply signed: audits bind without an exchange
        }
        if last:
            message["sampling"] = (sampling or Sampling()).to_json()
        if chain:
            message["chain"] = True
        await hop.connect(
            allow_private=self._allow_private,
            max_size=self._max_reply,
            open_timeout_s=self._open_timeout_s,
            allow_plaintext=self._allow_plaintext,
        )
        if hop.departed:  # announced while it was being dialled
            raise hop.fail(NODE_LEFT, "the node announced to the tracker that it is leaving")
        await hop.send(json.dumps(message))
        opened = await hop.expect_text("opened", self._open_timeout_s)
        layers = opened.get("layers")
        want = [hop.plan.effective_start, hop.plan.end]
        if layers != want or opened.get("node_id") != hop.plan.node_id:
            raise hop.fail(
                PROTOCOL,
                f"the node opened layers {layers} as {opened.get('node_id')!r}; the route "
                f"needs layers {want} from {hop.plan.node_id}",
            )
        if chain and opened.get("chain") is not True:
            raise hop.fail(
                CHAIN_REFUSED,
                "the node did not open as a hop of a chain (an older node?); run the route "
                "as a star",
            )
        hop.layers = want
        hop.step_receipts = opened.get("step_receipts") is True
        hop.speculative_steps = opened.get("speculative_steps") is True

    def _departed(self, node_id: str) -> None:
        """The tracker heard ``node_id`` announce it leaves: close its hops now."""
        for hop in self._hops:
            if hop.plan.node_id == node_id:
                hop.depart()

    def _end_watch(self) -> None:
        unwatch, self._unwatch = self._unwatch, None
        if unwatch is not None:
            unwatch()

    # -- steps -------------------------------------------------------------------------------

    async def step(self, token_ids: Sequence[int]) -> GeneratedToken:
        """Feed `token_ids` (prefill or one decode token) through every hop."""
        result, compute, cached = await self._run(token_ids, verify=False)
        token = GeneratedToken(
            token_id=result.token_ids[0],
            top_ids=result.top_ids[0],
            top_logprobs=[float(v) for v in result.top_logprobs[0]],
            position=self.position,
            compute_ms=tuple(compute),
            cached=min(min(cached, default=0), len(token_ids) - 1),
        )
        if self.position == 0:
            self.cached_tokens = token.cached
        self.position += len(token_ids)
        return token

    async def verify(self, token_ids: Sequence[int], draft: Sequence[int]) -> list[int]:
        """Feed `token_ids` (the next tokens, ending with the `draft`) as one verify step:
        the drafts the last hop kept, then its own next token, under the session's
        sampling (docs/wire.md#speculative-steps). Only on hops that take speculative
        steps (``speculative``); the caller rewinds the positions of drafts not kept."""
        if not self.speculative:
            raise ValueError("verify steps need hops that take them (speculative_steps)")
        if (
            not draft
            or list(token_ids[-len(draft) :]) != list(draft)
            or len(draft) >= len(token_ids)
        ):
            raise ValueError("a verify step's draft is its last 1 to T - 1 token ids")
        result, _, _ = await self._run(token_ids, verify=True, draft=draft)
        answer = result.token_ids
        kept = len(answer) - 1
        if not 0 <= kept <= len(draft) or answer[:kept] != list(draft[:kept]):
            raise self._hops[-1].fail(
                PROTOCOL,
                f"a verify step of {len(draft)} drafted tokens got {answer} back: not a kept "
                "prefix of the draft and one token",
            )
        self.position += len(token_ids)
        return answer

    def rewind(self, position: int) -> None:
        """Forget the positions from `position` on (drafts the route rejected): the next
        step starts there, and its frame tells every hop to drop them first."""
        if not 0 <= position <= self.position:
            raise ValueError(f"cannot rewind to {position}; the route holds {self.position}")
        if position < self.position:
            self.position = position
            self._rewind = True

    async def _run(
        self, token_ids: Sequence[int], *, verify: bool, draft: Sequence[int] | None = None
    ) -> tuple[wire_frames.LastHopReply, list[float | None], list[int]]:
        """One step through every hop: the last hop's reply, each hop's compute ms and
        cached positions. The position is the caller's to advance."""
        if not token_ids:
            raise ValueError("a step needs at least one token id")
        self._audits.check()  # a background audit convicted a hop of this route
        count = len(token_ids)
        if self.position + count > self.max_length:
            raise ValueError(
                f"{count} positions from {self.position} pass the session's max_length "
                f"{self.max_length}"
            )
        rewind = self._rewind
        frame = wire_frames.input_ids_frame(
            [list(token_ids)], self.position, rewind=rewind, verify=verify, draft=draft
        )
        # what every hop acts on besides its tensor: a chained hop must be passed exactly this
        step = wire_frames.step_metadata(self.position, rewind=rewind, verify=verify, draft=draft)
        compute: list[float | None] = []
        cached: list[int] = []
        if self.chained:
            # The step goes to the first hop only; every hop's reply is read below, in
            # order, as it comes (each hop forwards to the next before it replies here).
            await self._hops[0].send_frame(frame)
        passed: str | None = None  # digest of what the previous hop passed on (a chain)
        # Decode and verify steps are timed per hop for the planner (not a prefill). Not
        # in a chain: there a hop's time would run from its predecessor's reply, which
        # the predecessor could delay to make its successor look slow.
        timer = self.plan.on_step if (verify or count == 1) and not self.chained else None
        for hop in self._hops:
            mark = time.monotonic()
            if self.chained:
                reply = await hop.receive(self._step_timeout_s)
            else:
                reply = await hop.exchange(frame, self._step_timeout_s)
            if timer is not None:
                timer(hop.plan, time.monotonic() - mark)
            hop.steps += 1
            hop.tokens += count
            hop.last_reply = reply
            await self._read_step_receipt(hop, reply)
            if passed is not None:
                await self._check_passed(hop, reply, passed, step)
            await self._audits.after_step(hop, frame, reply)
            last = hop.index == len(self._hops) - 1
            try:
                if last:
                    result = wire_frames.decode_last_hop(
                        reply, max_bytes=self._max_reply, batch_size=1
                    )
                    if not verify and len(result.token_ids) != 1:
                        raise wire_frames.FrameError(
                            f"a step got {len(result.token_ids)} tokens back, not one"
                        )
                    if not verify and len(result.top_ids[0]) != self._logprobs:
                        # the gateway samples from these: a shorter list would choose for it
                        raise wire_frames.FrameError(
                            f"a step got {len(result.top_ids[0])} top log-probs back, the "
                            f"session asked for {self._logprobs}"
                        )
                    compute.append(result.compute_ms)
                    cached.append(result.cached)
                else:
                    compute.append(wire_frames.compute_ms_of(reply, self._max_reply))
                    cached.append(wire_frames.cached_of(reply, self._max_reply))
                    frame = wire_frames.relay_hidden(
                        reply,
                        self.position,
                        max_bytes=self._max_reply,
                        rewind=rewind,
                        verify=verify,
                        draft=draft,
                    )
                    shape = wire_frames.hidden_shape(frame, self._max_reply)
                    if shape[:2] != (1, count):
                        raise wire_frames.FrameError(
                            f"hidden states of shape {list(shape)} for a step of {count} positions"
                        )
                    if self.chained:
                        passed = wire_frames.tensor_bytes_digest(reply, self._max_reply)
            except wire_frames.FrameError as exc:
                raise hop.fail(exc.reason, str(exc)) from exc
        self._rewind = False
        return result, compute, cached

    async def _check_passed(
        self, hop: HopLink, reply: bytes, passed: str, step: dict[str, str]
    ) -> None:
        """A chained hop must have computed on what its predecessor's reply shows, under
        this client's step keys: else an audit of it would replay other inputs than it was
        given. It shows the predecessor's signature over what it was passed (the step's
        number on the link and the digest of its tensor bytes and step keys): without a
        valid one the hop itself is at fault (an honest hop refuses such a step); with
        one over other inputs than the client's, the predecessor forged them, and its own
        signature convicts it."""
        previous = self._hops[hop.index - 1]
        try:
            said = wire_frames.passed_step_of(reply, self._max_reply)
        except wire_frames.FrameError as exc:
            raise hop.fail(exc.reason, str(exc)) from exc
        statement = chain_step_statement(
            self.plan.route_session_id,
            self.plan.epoch,
            previous.plan.node_id,
            hop.plan.node_id,
            said.seq if said.seq is not None else -1,
            said.input_sha256 or "",
        )
        if (
            said.input_sha256 is None
            or said.seq != hop.steps
            or not verify_chain_step(previous.plan.public_key, statement, said.signature)
        ):
            raise hop.fail(
                CHAIN_MISMATCH,
                f"the hop shows no signature of its predecessor over step {hop.steps} as it "
                "was passed",
            )
        expected = wire_frames.step_input_digest(step, passed)
        if said.input_sha256 == expected:
            return
        detail = (
            f"the hop signed that it passed step {hop.steps} with digest "
            f"{said.input_sha256[:16]}…; its own reply and the client's step keys {step} "
            f"give {expected[:16]}…"
        )
        if self._auditor is not None:
            evidence = {
                "kind": "chain-step-forged",
                "route_session_id": self.plan.route_session_id,
                "statement": statement,
                "signature": said.signature,
                "expected_input_sha256": expected,
                "expected_step": step,
                "passed_tensors_sha256": passed,
                "accused": previous.plan.node_id,
            }
            reason = (
                f"this node passed the next hop of a chained route a step it signed but did "
                f"not compute as asked ({detail}); its operator must fix the node and "
                "register a new identity"
            )
            await self._auditor.convict(previous.plan.node_id, reason, evidence, [])
        raise previous.fail(CHAIN_FORGED, detail)

    async def _read_step_receipt(self, hop: HopLink, reply: bytes) -> None:
        """The signed receipt a hop sends right after each reply, when it opened with
        ``step_receipts``: checked against its key, the work sent so far and that very
        reply, and kept as what binds the node to it should an audit sample the step."""
        if not hop.step_receipts:
            return
        message = await hop.expect_text("step-receipt", self._step_timeout_s)
        hop.step_verified = verified_receipt(
            self.plan,
            hop,
            message,
            steps=hop.steps,
            tokens=hop.tokens,
            last_reply=reply,
            max_reply=self._max_reply,
        )
        hop.step_receipt = hop.step_verified.signed

    @property
    def speculative(self) -> bool:
        """Every hop takes rewind and verify frames (docs/wire.md#speculative-steps)."""
        return all(hop.speculative_steps for hop in self._hops)

    async def relay(self, frame: bytes) -> bytes:
        """Send one ready-made step frame to a one-hop session and return the raw reply.

        What an audit replay uses: the same inputs another node was sent.
        """
        if len(self._hops) != 1:
            raise ValueError("relay() drives one-hop sessions only")
        hop = self._hops[0]
        reply = await hop.exchange(frame, self._step_timeout_s)
        hop.steps += 1
        hop.last_reply = reply
        try:
            hop.tokens += wire_frames.positions_of(frame, self._max_reply)
        except wire_frames.FrameError as exc:
            raise hop.fail(PROTOCOL, f"the relayed frame is unreadable: {exc}") from exc
        await self._read_step_receipt(hop, reply)
        return reply

    async def generate(
        self, prompt_ids: Sequence[int], max_new_tokens: int, *, stop_ids: Collection[int] = ()
    ) -> AsyncIterator[GeneratedToken]:
        """Prefill the prompt, then decode one token per step; yields tokens as produced."""
        feed: list[int] = list(prompt_ids)
        for produced in range(max_new_tokens):
            token = await self.step(feed)
            yield token
            if token.token_id in stop_ids or produced + 1 == max_new_tokens:
                return
            feed = [token.token_id]

    # -- close -------------------------------------------------------------------------------

    async def close(self) -> list[HopReceipt]:
        """Close every hop (in order) and return their verified receipts.

        Every hop is closed even when one fails, so no node keeps a KV cache
        for a dead session; the first failure is raised afterwards.
        """
        self._end_watch()
        receipts: list[HopReceipt] = []
        failure: RouteFailure | None = None
        for hop in self._hops:
            try:
                receipts.append(await self._close_hop(hop))
            except RouteFailure as exc:
                failure = failure or exc
            finally:
                await hop.drop()
        # The audits still running decide whether this route's hops were honest.
        await self.wait_audits()
        self._audits.check()  # no credit for a route with a convicted hop
        # nor for a hop whose audit could not finish (route_audits.py)
        # Only verified receipts earn credit; a hop that failed its close earns none.
        await self._pay.pay(receipts, self._audits.unpaid)
        if failure is not None:
            raise failure
        return receipts

    async def _close_hop(self, hop: HopLink) -> HopReceipt:
        await hop.send(json.dumps({"type": "close"}))
        reply = await hop.expect_text("receipt", self._open_timeout_s)
        return verified_receipt(
            self.plan,
            hop,
            reply,
            steps=hop.steps,
            tokens=hop.tokens,
            last_reply=hop.last_reply,
            max_reply=self._max_reply,
        )

    async def receipt_now(self, hop_index: int) -> dict[str, Any] | None:
        """Close one hop at once and return its verified signed receipt, or None.

        The binding of an inline audit of a node without step receipts: it
        convicts the hop right after the disputed step, so the receipt's
        output_sha256 binds the node to the very output the audit found wrong
        (the route ends with the quarantine anyway).
        """
        hop = self._hops[hop_index]
        try:
            return (await self._close_hop(hop)).signed
        except RouteFailure as exc:
            log.info("hop %d gave no receipt for the audit: %s", hop_index, exc)
            return None
        finally:
            await hop.drop()

    async def abandon(self, failure: RouteFailure | None = None) -> list[int]:
        """A failover: drop every connection at once (the nodes free their caches) and
        return, per layer, the positions paid once its hops' step receipts are (a replay of
        them earns nothing); ``failure`` decides who may be (route_receipts.payable_after)."""
        self._end_watch()
        for hop in self._hops:
            await hop.drop()
        self._abandoned_for = failure
        return self._pay.paid_layers([h.step_verified for h in self._hops if h.step_verified])

    async def settle_abandoned(self) -> None:
        """After ``abandon``: let the running audits finish, then pay each hop whose audits
        passed for the steps its last step receipt verified; nothing if one was convicted,
        and nothing to the hop whose fault dropped the route."""
        verified = [h.step_verified for h in self._hops if h.step_verified is not None]
        await self.wait_audits()
        try:
            self._audits.check()
        except RouteFailure:
            return
        unpaid = payable_after(self._abandoned_for, self._audits.unpaid)
        if unpaid is not None:
            await self._pay.pay(verified, unpaid)

    async def abort(self) -> None:
        """Cancel this session's audits and drop every connection without receipts
        (the nodes free the sessions)."""
        self._end_watch()
        pending = self._audits.running()
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        for hop in self._hops:
            await hop.drop()

    async def wait_audits(self) -> None:
        """Let this session's background audits finish (each bounded by the step timeout)."""
        await self._audits.wait()
