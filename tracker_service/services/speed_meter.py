"""The tracker's own measure of each node's speed: its route sessions' step times.

Every plan the route planner signs carries :meth:`SpeedMeter.timer` for its model
artifact; a route session (services/route_session.py) calls it with each hop's time
for each decode or verify step. The meter only adds it to a pending sum in memory
(the session's event loop never waits on the database) and, at most every
``flush_s``, a worker thread blends the pending steps into the stored moving mean
per node (store/node_speeds.py). Route formation reads those with its candidates
(services/candidate_cache.py) and costs each node at min(claim, measurement)
(domain/measured_speed.py).

A hop's time is the whole round trip the tracker saw: the node's compute plus its
link, which is what a user's token waits for, and nothing the node can claim.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from collections.abc import Callable

from tracker_service.domain.measured_speed import MeasuredSpeed, step_sample
from tracker_service.services.session_plan import PlannedHop, StepTimer
from tracker_service.store.db import Database
from tracker_service.store.node_speeds import TimedSteps, record_steps

log = logging.getLogger(__name__)

DEFAULT_FLUSH_S = 1.0


class SpeedMeter:
    """Pending timed steps per (node, artifact), written behind in batches."""

    def __init__(
        self,
        database: Database,
        *,
        alpha: float = 0.1,
        flush_s: float = DEFAULT_FLUSH_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._db = database
        self._alpha = alpha
        self._flush_s = flush_s
        self._clock = clock
        self._pending: dict[tuple[str, str], list[float]] = {}  # -> [Σ ms per layer, steps]
        self._lock = threading.Lock()
        self._last_flush = clock()
        self._task: asyncio.Future[object] | None = None
        self._waking = False  # a write is scheduled for when the last one is old enough
        self._writing = 0  # steps being written now
        self._loop: asyncio.AbstractEventLoop | None = None  # where wake-ups are scheduled

    def timer(self, artifact: str) -> StepTimer:
        """The step timer of one plan of this model artifact (RoutePlan.on_step)."""
        return functools.partial(self.observe, artifact)

    def observe(self, artifact: str, hop: PlannedHop, seconds: float) -> None:
        """One hop's time for one step: per layer it actually ran."""
        sample = step_sample(seconds, hop.end - hop.effective_start)
        with self._lock:
            entry = self._pending.get((hop.node_id, artifact))
            if entry is None:
                self._pending[(hop.node_id, artifact)] = [sample, 1.0]
            else:
                entry[0] += sample
                entry[1] += 1.0
        self._schedule()

    def pending(self) -> int:
        """Timed steps not written yet (a write in progress included)."""
        with self._lock:
            return self._writing + int(sum(entry[1] for entry in self._pending.values()))

    def flush(self) -> dict[tuple[str, str], MeasuredSpeed]:
        """Write the pending steps now (blocking: a worker thread or a shutdown)."""
        with self._lock:
            taken, self._pending = self._pending, {}
            self._last_flush = self._clock()
            writing = int(sum(entry[1] for entry in taken.values()))
            self._writing += writing
        if not taken:
            return {}
        batches = [
            TimedSteps(node_id, artifact, total / steps, int(steps))
            for (node_id, artifact), (total, steps) in taken.items()
        ]
        try:
            with self._db.sessions.begin() as session:
                return record_steps(session, batches, alpha=self._alpha, now=time.time())
        except Exception:
            # A measurement lost is a few steps: never a reason to fail a route.
            log.exception("writing %d nodes' measured step times failed", len(batches))
            return {}
        finally:
            with self._lock:
                self._writing -= writing

    def _schedule(self) -> None:
        """Write behind: at once when the last write is `flush_s` old, else once it is
        (one write in flight and one wake-up pending at most)."""
        if not self._pending:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # timed outside an event loop: write at once
            self.flush()
            return
        if self._loop is not loop:  # a loop that ended left nothing to wait for
            self._loop, self._waking, self._task = loop, False, None
        if self._waking or (self._task is not None and not self._task.done()):
            return
        wait = self._flush_s - (self._clock() - self._last_flush)
        if wait > 0:
            self._waking = True
            loop.call_later(wait, self._wake, loop)
            return
        self._write(loop)

    def _write(self, loop: asyncio.AbstractEventLoop) -> None:
        self._task = loop.run_in_executor(None, self.flush)
        # Steps timed while this write runs would wait for the next step: look again.
        self._task.add_done_callback(lambda _: self._schedule())

    def _wake(self, loop: asyncio.AbstractEventLoop) -> None:
        self._waking = False
        if self.pending() and (self._task is None or self._task.done()):
            self._write(loop)
