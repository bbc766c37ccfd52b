"""The node lifecycle: load, prove, admit, serve, register, heartbeat, pause, move, drain.

    identity → doctor (load the shard + bounded real forward) → admission gate
    → data plane up → register with the tracker → heartbeat ⟲ (re-register when
    refused, re-proving first when the report aged out; back off while
    unreachable) → pause (announce, hand open sessions over, free the shard within
    one step) ⟲ resume (prove again) → announce + hand over on stop

Every step publishes a ``NodeEvent`` (``core.events``) so the tray app and the
CLI show each gate live; ``NodeStatus`` keeps the latest of each for snapshots.
A node whose admission fails never registers: the gate raises before the
tracker client is ever called. A stop or pause asked during start-up sets the
cancel token, which the doctor checks at every layer and forward step and
start-up checks between steps; whatever was already set up (a registration
included) is taken down again, so nothing stays registered and no thread runs.

``Node`` is the state machine: it alone takes the lifecycle lock, holds the
cancel token and the node's state, and decides the order in which the parts
are built and taken down (start, pause, resume, stop, and a move to other
layers, which is a leave and a start on the new range). What each step builds
belongs to the part that builds it: the proof (core.node.proving), the data
plane (core.node.shard_server), the registration (core.node.registration).
Placement (core.node.placement) decides which layers and whether to move and
calls back ``_move``; the serving loop and the relay see only public members.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from core.dataplane.server import DataPlaneServer
from core.doctor.admission_gate import CapabilityValidator
from core.doctor.checkup import run_doctor
from core.doctor.placement_advice import Capacity
from core.errors import Cancelled, CapabilityAdmissionError, MeshnetError, TrackerRefused
from core.events import EventBus, Gate, GateState, NodeEvent, NodeState
from core.identity.keypair import NodeIdentity
from core.network.tracker_client import STALE_REASONS, Registration, TrackerClient
from core.node.placement import NodePlacement
from core.node.proving import Doctor, ShardProver
from core.node.registration import TrackerRegistration
from core.node.relay import NodeRelay
from core.node.serving import ServingLoop
from core.node.settings import NodeSettings
from core.node.shard_server import NodeDataPlane
from core.node.status import NodeStatus
from core.progress import STAGE_PROBE, CancelToken, Progress

log = logging.getLogger(__name__)

__all__ = ["Node", "NodeSettings"]

REASON_INTERNAL = "internal-error"
# How long a leaving node waits for the tracker to take its announcement (after the
# memory is free); past it the tracker's live window ends the registration anyway.
ANNOUNCE_WAIT_S = 5.0

# States in which nothing is loaded, registered or running.
_IDLE = (NodeState.STOPPED, NodeState.REFUSED, NodeState.ERROR, NodeState.PAUSED)


class Node:
    def __init__(
        self,
        settings: NodeSettings,
        identity: NodeIdentity,
        *,
        bus: EventBus | None = None,
        validator: CapabilityValidator | None = None,
        doctor: Doctor = run_doctor,
        transport: httpx.BaseTransport | None = None,
        capacity: Callable[[NodeSettings], Capacity] | None = None,
    ) -> None:
        self.settings = settings
        self.identity = identity
        self.bus = bus or EventBus()
        self.status = NodeStatus(settings.public_view())
        self.bus.subscribe(self.status.record)
        self._lifecycle = threading.RLock()  # start, pause, resume and stop take turns
        self._cancel = CancelToken()  # set by stop/pause to interrupt start-up
        self._stop_reason: str | None = None  # the reason code of the stop in progress
        self._stopped = threading.Event()
        self._serving: ServingLoop | None = None
        # What start-up builds, each part holding its own: built in this order, taken
        # down in reverse by _teardown.
        self._proof = ShardProver(
            settings,
            doctor=doctor,
            validator=validator,
            gate=self.gate,
            progress=self._progress,
            cancel=self._cancel,
        )
        # The tracker's key, age limit and registration outlive a restart; the client not.
        self._tracker = TrackerRegistration(settings, identity, gate=self.gate, transport=transport)
        self._plane = NodeDataPlane(
            settings, identity, tracker_public_key=lambda: self._tracker.tracker_key
        )
        # Which layers, and whether to move; the move itself is ours (_move).
        self.placement = NodePlacement(
            settings,
            identity.node_id,
            open_tracker=self._tracker.new_client,
            gate=self.gate,
            move=self._move,
            capacity=capacity,
        )
        self.state = NodeState.STOPPED
        self.relay = NodeRelay(self)  # serving through a relay when the tracker cannot dial us

    # -- events ------------------------------------------------------------------------

    def set_state(
        self,
        state: NodeState,
        message: str,
        reason: str | None = None,
        *,
        data: Mapping[str, Any] | None = None,
    ) -> None:
        self.state = state
        event = NodeEvent("state", message, state=state, reason=reason, data=dict(data or {}))
        self.bus.publish(event)

    def gate(
        self,
        gate: Gate,
        gate_state: GateState,
        message: str,
        reason: str | None = None,
        **data: Any,
    ) -> None:
        event = NodeEvent(
            "gate", message, gate=gate, gate_state=gate_state, reason=reason, data=data
        )
        self.bus.publish(event)

    def _progress(self, progress: Progress) -> None:
        self._cancel.check(progress.message.rstrip("…").lower())
        if progress.stage == STAGE_PROBE and self.state is NodeState.LOADING:
            self.set_state(NodeState.PROBING, progress.message)
        self.bus.publish(NodeEvent("progress", progress.message, data=progress.data()))

    def snapshot_event(self) -> NodeEvent:
        return self.status.snapshot_event(
            open_sessions=self.open_sessions, tokens_served=self.tokens_served
        )

    # -- start ---------------------------------------------------------------------------

    def start(self) -> None:
        """Run every gate in order; raise (and publish why) at the first that fails.

        Raises :class:`Cancelled` when stop or pause was asked meanwhile; then
        nothing is left registered, loaded or running.
        """
        with self._lifecycle:
            if self.state not in _IDLE:
                raise MeshnetError(f"the node is already {self.state.value}", reason="running")
            self._stopped.clear()
            self._start_or_fail()

    def _start_or_fail(self) -> None:
        """:meth:`_start`, publishing why it failed (and taking everything down again)."""
        with self._lifecycle:
            try:
                self._start()
            except Cancelled:
                why, reason = self._cancel.why, self._stop_reason
                self._teardown()
                said = "stopped before serving began"
                self.set_state(NodeState.STOPPED, f"{said}: {why}" if why else said, reason)
                raise
            except CapabilityAdmissionError as exc:
                self.gate(Gate.ADMISSION, GateState.FAILED, exc.message, exc.reason)
                self._fail(NodeState.REFUSED, exc.message, exc.reason)
                raise
            except MeshnetError as exc:
                self._fail(NodeState.ERROR, str(exc), exc.reason)
                raise
            except Exception as exc:
                log.exception("unexpected failure while starting")
                sentence = f"The node could not start because of an internal error: {exc}"
                self._fail(NodeState.ERROR, sentence, REASON_INTERNAL)
                raise MeshnetError(sentence, reason=REASON_INTERNAL) from exc

    def resume(self) -> None:
        """Prove the shard again on a fresh report, then register (after :meth:`pause`)."""
        self.start()

    def _fail(self, state: NodeState, message: str, reason: str | None) -> None:
        self._teardown()
        self.set_state(state, message, reason)
        self._stopped.set()

    def _start(self) -> None:
        self._cancel.check("starting")
        self.gate(Gate.IDENTITY, GateState.PASSED, f"node {self.identity.node_id}")
        self.set_state(NodeState.LOADING, "loading the shard and running a test forward")
        reuse = self._proof.report_to_reuse()
        if self.placement.layers is None and reuse is None:
            self._cancel.check("choosing layers")
            self.placement.layers = self.placement.choose()
        outcome = self._proof.examine(self.placement.layers, reuse)
        self._cancel.check("checking admission")
        self.set_state(NodeState.ADMITTING, "checking the proof covers what will be advertised")
        self._proof.admit(reused=reuse is not None)
        self._cancel.check("starting the data plane")
        self.set_state(NodeState.STARTING, "starting the data plane")
        self._plane.start(outcome)
        self.gate(Gate.DATA_PLANE, GateState.PASSED, f"listening on {self.endpoint}")
        self._cancel.check("registering")
        self.set_state(NodeState.REGISTERING, f"registering with {self.settings.tracker_url}")
        self._tracker.connect()
        self.register_fresh()
        if self.relay.after_registration():  # --relay: the link is up, register its endpoint
            self.register_fresh()
        # A stop asked while the tracker was answering: the teardown deregisters.
        self._cancel.check("registering")
        self.set_state(NodeState.SERVING, "serving")
        self.placement.serving(self._proof.report)
        self._serving = ServingLoop(self)
        self._serving.start()

    # -- proving and registering (also asked by the serving loop) -------------------------

    def reprove(self) -> None:
        """A fresh probe through the loaded shard, judged by the gate (before re-registering)."""
        self._proof.reprove()

    @property
    def report_max_age_s(self) -> float:
        """The freshness limit that binds: this node's gate's, or the tracker's if lower."""
        limit = self.settings.report_max_age_s
        if self._tracker.max_age_s is not None:
            limit = min(limit, self._tracker.max_age_s)
        return limit

    def report_is_stale(self, now: float | None = None) -> bool:
        """Is the report due to be proven again? Past half the binding limit it is, so
        a report the node sends is always well inside the tracker's limit."""
        return self._proof.is_stale(self.report_max_age_s, now)

    def register(self) -> None:
        """Register the loaded shard with its current report (start-up and re-registration)."""
        outcome, report = self._proof.outcome, self._proof.report
        assert outcome is not None and report is not None
        self._tracker.register(
            outcome,
            report,
            endpoint=self.endpoint,
            relay_reason=self.relay.reason,
            tls_pin=self._plane.signed_pin(),
        )

    def register_fresh(self) -> None:
        """:meth:`register`; when the tracker refuses the report as stale (its age limit
        is lower than this node's, or the clocks differ), prove the layers again with a
        real forward and register once more, by itself."""
        try:
            self.register()
        except TrackerRefused as exc:
            if exc.reason not in STALE_REASONS:
                raise
            log.warning("the tracker found the report stale (%s): proving again", exc.detail)
            self.reprove()
            self.register()

    # -- what the parts and the front ends read -------------------------------------------

    @property
    def endpoint(self) -> str:
        """The data-plane URL the tracker and route clients dial."""
        if self._plane.server is None:
            return ""
        if self.relay.endpoint is not None:
            return self.relay.endpoint
        return self._plane.direct_endpoint()

    @property
    def data_plane(self) -> DataPlaneServer | None:
        return self._plane.server

    @property
    def client(self) -> TrackerClient | None:
        return self._tracker.client

    @property
    def registration(self) -> Registration | None:
        return self._tracker.registration

    @property
    def open_sessions(self) -> int:
        return self._plane.open_sessions

    @property
    def tokens_served(self) -> int:
        return self._plane.tokens_served

    def load(self) -> float:
        return self._plane.load()

    @property
    def heartbeat_interval_s(self) -> float:
        registration = self._tracker.registration
        return registration.heartbeat_interval_s if registration else 5.0

    @property
    def throughput(self) -> float | None:
        report = self._proof.report
        return report.tokens_per_second if report else None

    # -- moving to other layers -------------------------------------------------------

    def suggest_move(self, layers: tuple[int, int], sentence: str, *, urgent: bool = False) -> bool:
        """The tracker suggests other layers: placement judges, and moves on its own thread."""
        return self.placement.consider(
            layers,
            sentence,
            serving=self.state is NodeState.SERVING,
            open_sessions=self.open_sessions,
            urgent=urgent,
        )

    def _move(self, layers: tuple[int, int], sentence: str) -> bool:
        """Serve `layers` instead: leave routing, reload, re-run the doctor and the gate.

        Only with no open session. If the new range cannot start (it does not
        fit, the gate refuses it) the node goes back to its old range, proven
        afresh the same way. False when it did not move.
        """
        with self._lifecycle:
            if self.state is not NodeState.SERVING or self.open_sessions:
                return False
            old = self.placement.layers
            start, end = layers
            self.gate(
                Gate.PLACEMENT,
                GateState.INFO,
                sentence or f"the tracker suggests layers {start}–{end}",
                "rebalance",
                layers=[start, end],
                source="rebalance",
            )
            self.set_state(NodeState.DRAINING, f"moving to layers {start}–{end}")
            self._leave(f"the node is moving to layers {start}–{end}", time.monotonic())
            self._teardown()
            self.placement.layers = layers
            try:
                self._start()
            except Cancelled:
                self._teardown()
                self.set_state(NodeState.STOPPED, "stopped while moving")
                self._stopped.set()
                return False
            except MeshnetError as exc:
                self._teardown()
                if old is None:
                    self._fail(NodeState.ERROR, str(exc), exc.reason)
                    return False
                self.gate(
                    Gate.PLACEMENT,
                    GateState.INFO,
                    f"could not move to layers {start}–{end} ({exc}); going back to "
                    f"layers {old[0]}–{old[1]}",
                    exc.reason,
                    layers=list(old),
                    source="rebalance",
                )
                self.placement.layers = old
                self._start_or_fail()
                return False
            return True

    # -- pause and stop ------------------------------------------------------------------

    def pause(self, sentence: str = "paused") -> None:
        """Give the machine back within one step: tell the tracker, end every open session
        with ``node-leaving`` (its client fails over at once), free the shard's memory (the
        CUDA cache too); then PAUSED, with the seconds from the pause to the memory freed."""
        asked = time.monotonic()
        self._cancel.cancel()  # a start-up in progress stops at its next check
        with self._lifecycle:
            self._cancel.reset()
            if self.state is NodeState.PAUSED:
                return
            self.set_state(NodeState.PAUSING, "handing open sessions over and freeing memory")
            timings = self._leave("the node's owner paused it", asked)
            self._teardown()
            self.set_state(NodeState.PAUSED, sentence, data=timings)

    def stop(self, why: str = "", reason: str | None = None) -> None:
        """Leave at once: tell the tracker, hand open sessions over (``node-leaving``),
        free the shard and close the data plane.

        ``why`` and ``reason`` say in the stopped state what asked for the stop
        (e.g. the end of a controlling stdin), so an operator is not left guessing.
        """
        asked = time.monotonic()
        self._stop_reason = reason
        self._cancel.cancel(why)
        stopped = f"stopped: {why}" if why else "stopped"
        with self._lifecycle:
            try:
                if self.state in _IDLE and not self._holds_anything():
                    if self.state is NodeState.PAUSED:
                        self.set_state(NodeState.STOPPED, stopped, reason)
                    return
                self.set_state(NodeState.DRAINING, "leaving routing and handing sessions over")
                timings = self._leave("the node is stopping", asked)
                self._teardown()
                self.set_state(NodeState.STOPPED, stopped, reason, data=timings)
            finally:
                self._stopped.set()
                self._cancel.reset()
                self._stop_reason = None

    def _holds_anything(self) -> bool:
        parts = (self._serving, self._plane.server, self._tracker.client, self._proof.outcome)
        return any(part is not None for part in parts)

    def _leave(self, sentence: str, asked: float) -> dict[str, float]:
        """Leave within one step; the seconds from ``asked`` until the open sessions were
        ended (``sessions_ended_s``) and until the shard's memory was given back
        (``memory_released_s``): logged, and carried by the state event that follows.

        The tracker is told first, on a thread of its own (its answer may take seconds:
        the game must not wait for it); every open session is ended with ``node-leaving``
        (a step being computed finishes, its reply finds the session gone); then the
        shard and its KV caches are dropped and collected. The heartbeats stop before
        the announcement lands, so none re-registers the node behind it.
        """
        serving, self._serving = self._serving, None
        self._cancel.cancel()  # a re-probe on the serving loop stops at its next step
        if serving is not None:
            serving.stop(wait=False)
        announce = threading.Thread(
            target=self._tracker.deregister, name="meshnet-announce-leaving", daemon=True
        )
        announce.start()
        self._plane.stop(leaving=f"{sentence}; fail over to another route")
        handed_over_s = time.monotonic() - asked
        self._proof.release()
        released_s = time.monotonic() - asked
        log.info(
            "left: sessions handed over %.3f s and the shard's memory released %.3f s after "
            "the request",
            handed_over_s,
            released_s,
        )
        if serving is not None:
            serving.stop()
        announce.join(ANNOUNCE_WAIT_S)
        self._cancel.reset()
        return {"sessions_ended_s": handed_over_s, "memory_released_s": released_s}

    def _stop_serving_loop(self) -> None:
        serving, self._serving = self._serving, None
        if serving is not None:
            self._cancel.cancel()  # a re-probe in the loop stops at its next step
            serving.stop()
            self._cancel.reset()

    def _teardown(self) -> None:
        """Take down whatever start-up built, in reverse: loop, registration, server, shard."""
        self._stop_serving_loop()
        self._tracker.deregister()
        self.relay.stop()
        self._plane.stop()
        self._tracker.close()
        self._proof.release()

    def wait(self, timeout: float | None = None) -> bool:
        """True once the node stopped (or failed to start)."""
        return self._stopped.wait(timeout)
