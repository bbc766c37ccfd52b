"""The node's step schedule: decode steps of all sessions batched, prefill in chunks.

Every hop session hands its step to one ``StepBatcher`` per server. One worker
task runs the schedule, on the node's own clock:

* whenever it is free it takes *every* decode step (one position) that has
  arrived meanwhile and runs them as one batched forward
  (``core.runtime.batch.step_batch``): a lone session's step starts the moment
  it arrives (no batching delay); steps arriving while a forward runs wait for
  it and then share the next one, so the batch grows with the load;
* a prefill (more than one position) is cut into chunks of ``prefill_chunk``
  positions, and between two chunks all waiting decode steps run, so a new
  session's long prompt stalls the running sessions by at most one chunk;
* each step gets its own result or its own error; a step whose client went
  away (its future cancelled) is dropped before it is computed.

Company is awaited only when it is known to be coming, never by a lone session
(nobody else is mid-decode) nor while a prefill waits. A session is
*mid-decode* here while it is open and was answered in one of the last
``RECENT_BATCHES`` decode batches; a decode batch waits for the mid-decode
sessions of its shard that have no step queued yet, at most:

* ``merge_wait`` times the longest of the last few batches' compute times at
  the route's head (the session's steps are token ids). This is where groups
  merge: when a route's sessions drift into two groups (say 6 + 2, one at each
  node, so each node runs two forwards per token), the group at the head waits
  for the other one's whole trip through the rest of the route, and from then
  on they run as one batch;
* ``straggler_wait`` times the last batch's compute time at any other node:
  enough for the late members of a batch that left the previous node together,
  and short, since the missing ones may be held at the head waiting for the
  very group queued here. The long wait is at the head only: when every node
  waits briefly for every group (as a rule that expected the members of the
  node's last one or two batches did), each group waits at each node for the
  other one, which is at the other node, so both idle every round and nothing
  merges; one node waiting long breaks that symmetry.

A session that closes, aborts or leaves stops being waited for at once (the hop
wakes the schedule when it releases a session); one that goes quiet while open
costs each of the next ``RECENT_BATCHES`` batches at most the bound, then is no
longer expected. Sessions behind different heads (other routes) that meet at a
later node are not merged there: they may cost that node a short straggler wait
per batch.

A decode batch runs on the event loop itself, as a lone decode step did
before batching: a thread hand-off costs more than a small forward on a busy
CPU, and frames that arrive meanwhile wait in the sockets and then form the
next batch. A prefill chunk runs in a worker thread (torch releases the GIL) so
the loop keeps receiving frames through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch

from core.errors import MeshnetError
from core.runtime.batch import step_batch
from core.runtime.sessions import StepResult

if TYPE_CHECKING:
    from core.runtime.sessions import InferenceSession

logger = logging.getLogger(__name__)

PREFILL_CHUNK = 64  # positions per prefill chunk: the longest stall a decode sees
MAX_BATCH = 32  # decode rows per forward
RECENT_BATCHES = 4  # a session answered in one of these last batches is mid-decode
STRAGGLER_WAIT = 0.5  # x the last batch's compute time, off the route's head
# x the longest recent compute time, at the head: another group's trip through the
# rest of the route (the next node's straggler wait, its forward, the transfers)
MERGE_WAIT = 3.0


def _layers_of(session: InferenceSession) -> tuple[int, int, int]:
    """Sessions batch together only over the same layers of the same shard (an audit
    replay may stop inside the shard)."""
    return id(session.shard), session.start_layer, session.end_layer


@dataclass
class _Decode:
    session: InferenceSession
    inputs: torch.Tensor
    future: asyncio.Future[StepResult]


@dataclass
class _Prefill:
    session: InferenceSession
    inputs: torch.Tensor
    future: asyncio.Future[StepResult]
    start: int  # the session's position when the prefill was submitted
    verify: bool = False  # a speculative step: the last shard's token after each position
    draft: list[int] | None = None  # its drafted tokens, when the last shard keeps some
    done: int = 0
    hidden: list[torch.Tensor] = field(default_factory=list)


@dataclass
class _Member:
    """A session answered in a decode batch here, and the number of that batch."""

    session: InferenceSession
    batch: int


@dataclass
class BatchStats:
    """What the schedule did: the benchmark and tests read it."""

    forwards: int = 0  # batched decode forwards
    rows: int = 0  # decode steps they computed
    largest: int = 0
    prefill_chunks: int = 0
    order: deque[str] = field(default_factory=lambda: deque(maxlen=256))  # "D3", "P"


class StepBatcher:
    def __init__(
        self,
        prefill_chunk: int = PREFILL_CHUNK,
        max_batch: int = MAX_BATCH,
        straggler_wait: float = STRAGGLER_WAIT,
        merge_wait: float = MERGE_WAIT,
    ) -> None:
        self.prefill_chunk = prefill_chunk
        self.max_batch = max_batch
        self.straggler_wait = straggler_wait
        self.merge_wait = merge_wait
        self.stats = BatchStats()
        self._decodes: list[_Decode] = []
        self._prefills: deque[_Prefill] = deque()
        self._wake: asyncio.Event | None = None
        self._worker: asyncio.Task[None] | None = None
        self._members: dict[int, _Member] = {}  # by id() of the session: mid-decode ones
        self._batches = 0  # decode batches run so far
        self._computes: deque[float] = deque(maxlen=RECENT_BATCHES)  # their seconds

    async def submit(
        self,
        session: InferenceSession,
        inputs: torch.Tensor,
        *,
        verify: bool = False,
        draft: list[int] | None = None,
    ) -> StepResult:
        """Compute one step of one session; raises the session's MeshnetError.

        `verify` (speculative decoding): the step runs alone, as a prefill does, and the
        last shard answers its greedy token after every position."""
        loop = asyncio.get_running_loop()
        if self._worker is None or self._worker.done():
            self._wake = asyncio.Event()
            self._worker = loop.create_task(self._run())
        future: asyncio.Future[StepResult] = loop.create_future()
        if verify or (inputs.dim() >= 2 and inputs.shape[1] > 1):
            session.check(inputs)  # the whole prompt, before any chunk moves the session
            self._prefills.append(
                _Prefill(
                    session, inputs, future, start=session.position, verify=verify, draft=draft
                )
            )
        else:
            self._decodes.append(_Decode(session, inputs, future))
        assert self._wake is not None
        self._wake.set()
        return await future

    def wake(self) -> None:
        """A session was released: a batch waiting for it stops waiting."""
        if self._wake is not None:
            self._wake.set()

    async def stop(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
            self._worker = None
        for job in self._decodes:
            job.future.cancel()
        for prefill in self._prefills:
            prefill.future.cancel()
        self._decodes.clear()
        self._prefills.clear()

    async def _run(self) -> None:
        assert self._wake is not None
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._decodes or self._prefills:
                try:
                    await self._gather_company()
                    self._decode_all()
                    await self._prefill_one_chunk()
                except asyncio.CancelledError:
                    raise
                except Exception:  # never let the schedule die: the node keeps serving
                    logger.exception("the step schedule failed a round")

    async def _gather_company(self) -> None:
        """Wait, bounded and only for sessions known to be mid-decode, for their steps."""
        if not self._decodes or self._prefills or len(self._decodes) >= self.max_batch:
            return
        missing, bound = self._expected()
        if not missing:
            return
        assert self._wake is not None
        deadline = time.perf_counter() + bound
        while missing and (left := deadline - time.perf_counter()) > 0:
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), left)
            if self._prefills:  # a new prompt: its first chunk goes now
                return
            queued = {id(d.session) for d in self._decodes}
            missing = [s for s in missing if id(s) not in queued and not s.closed]

    def _expected(self) -> tuple[list[InferenceSession], float]:
        """The mid-decode sessions that could join the queued steps, and how long to wait."""
        queued = {id(d.session) for d in self._decodes}
        keys = {_layers_of(d.session) for d in self._decodes}
        head = any(d.session.takes_tokens for d in self._decodes)
        missing = [
            m.session
            for k, m in self._members.items()
            if k not in queued and not m.session.closed and _layers_of(m.session) in keys
        ]
        if head:
            return missing, self.merge_wait * max(self._computes, default=0.0)
        return missing, self.straggler_wait * (self._computes[-1] if self._computes else 0.0)

    def _answered(self, batch: list[_Decode], seconds: float) -> None:
        """Record a decode batch; forget the sessions no longer mid-decode."""
        self._batches += 1
        self._computes.append(seconds)
        for d in batch:
            self._members[id(d.session)] = _Member(d.session, self._batches)
        oldest = self._batches - RECENT_BATCHES
        self._members = {
            k: m for k, m in self._members.items() if m.batch > oldest and not m.session.closed
        }

    def _decode_all(self) -> None:
        pending = [d for d in self._decodes if not d.future.done()]
        self._decodes = []
        groups: dict[tuple[int, int, int], list[_Decode]] = {}
        for d in pending:
            groups.setdefault(_layers_of(d.session), []).append(d)
        for group in groups.values():
            for at in range(0, len(group), self.max_batch):
                batch = [d for d in group[at : at + self.max_batch] if not d.future.done()]
                if not batch:
                    continue
                began = time.perf_counter()
                try:
                    outcomes = step_batch([d.session for d in batch], [d.inputs for d in batch])
                except MeshnetError as exc:  # malformed batch: each member alone
                    logger.info("batch refused (%s); stepping alone", exc)
                    outcomes = []
                    for d in batch:
                        outcomes += step_batch([d.session], [d.inputs])
                self._answered(batch, time.perf_counter() - began)
                self.stats.forwards += 1
                self.stats.rows += len(batch)
                self.stats.largest = max(self.stats.largest, len(batch))
                self.stats.order.append(f"D{len(batch)}")
                for d, outcome in zip(batch, outcomes, strict=True):
                    if d.future.done():
                        continue
                    if isinstance(outcome, MeshnetError):
                        d.future.set_exception(outcome)
                    else:
                        d.future.set_result(outcome)

    async def _prefill_one_chunk(self) -> None:
        while self._prefills and self._prefills[0].future.done():
            self._prefills.popleft()  # its client went away
        if not self._prefills:
            return
        job = self._prefills[0]
        total = int(job.inputs.shape[1])
        # a verify step is one forward: its last shard keeps drafts from all its positions
        n = total - job.done if job.verify else min(self.prefill_chunk, total - job.done)
        chunk = job.inputs.narrow(1, job.done, n)
        try:
            result = await asyncio.to_thread(
                job.session.step, chunk, verify=job.verify, draft=job.draft
            )
        except MeshnetError as exc:
            self._prefills.popleft()
            with contextlib.suppress(MeshnetError):  # a failed prompt leaves no half of it
                job.session.rewind(job.start)
            if not job.future.done():
                job.future.set_exception(exc)
            return
        self.stats.prefill_chunks += 1
        self.stats.order.append("P")
        job.done += n
        if result.hidden is not None:
            job.hidden.append(result.hidden)
        if job.done < total:
            return
        self._prefills.popleft()
        if job.hidden:
            result = StepResult(hidden=torch.cat(job.hidden, dim=1))
        if not job.future.done():
            job.future.set_result(result)
