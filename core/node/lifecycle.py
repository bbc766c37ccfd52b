"""The node lifecycle: load, prove, admit, serve, register, heartbeat, pause, drain.

    identity → doctor (load the shard + bounded real forward) → admission gate
    → data plane up → register with the tracker → heartbeat ⟲ (re-register when
    refused, re-proving first when the report aged out; back off while
    unreachable) → pause (leave routing, free the shard) ⟲ resume (prove again)
    → drain + deregister on stop

Every step publishes a ``NodeEvent`` (``core.events``) so the tray app and the
CLI show each gate live; ``NodeStatus`` keeps the latest of each for snapshots.
A node whose admission fails never registers: the gate raises before the
tracker client is ever called. A stop or pause asked during start-up sets the
cancel token, which the doctor checks at every layer and forward step and
start-up checks between steps; whatever was already set up (a registration
included) is taken down again, so nothing stays registered and no thread runs.

This class alone holds the node's state. Its parts get narrow views: placement
(core.node.placement) decides which layers and whether to move and calls back
``_move``; the serving loop and the relay see only public members.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

import httpx

from core.admission import (
    REASON_NOT_PASSED,
    CapabilityAdmissionError,
    CapabilityContext,
    CapabilityValidator,
    admit,
)
from core.capability import CapabilityReport
from core.dataplane.server import DataPlaneServer
from core.dataplane.tls import generate_certificate, sign_pin
from core.doctor import (
    DoctorOutcome,
    DoctorRequest,
    DoctorSelection,
    run_doctor,
    validate_loaded_backend,
)
from core.errors import MeshnetError
from core.events import EventBus, Gate, GateState, NodeEvent, NodeState
from core.identity import NodeIdentity, b64decode
from core.node.admission import (
    advertised_requirement,
    capability_sentence,
    check_reused_digests,
    load_reused_report,
)
from core.node.placement import NodePlacement
from core.node.relay import NodeRelay
from core.node.serving import ServingLoop
from core.node.settings import NodeSettings
from core.node.status import NodeStatus
from core.placement import Capacity
from core.progress import STAGE_PROBE, Cancelled, CancelToken, Progress
from core.runtime.kv_budget import default_kv_budget_bytes
from core.runtime.sessions import SessionManager
from core.tracker_client import (
    STALE_REASONS,
    Registration,
    TrackerClient,
    TrackerRefused,
    TrackerUnreachable,
)

log = logging.getLogger(__name__)

__all__ = ["Node", "NodeSettings"]

REASON_INTERNAL = "internal-error"
# A report is proven again once it is this fraction of the binding age limit old.
REPROVE_AT_FRACTION = 0.5


class Doctor(Protocol):
    def __call__(
        self,
        request: DoctorRequest,
        progress: Callable[[Progress], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> DoctorOutcome: ...


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
        # None: judge the report the doctor just produced in-process (a real forward).
        self._validator = validator
        self._doctor = doctor
        self._transport = transport  # tests: httpx.MockTransport for tracker error paths
        self._lifecycle = threading.RLock()  # start, pause, resume and stop take turns
        self._cancel = CancelToken()  # set by stop/pause to interrupt start-up
        self._stop_reason: str | None = None  # the reason code of the stop in progress
        self._stopped = threading.Event()
        self._serving: ServingLoop | None = None
        self._server: DataPlaneServer | None = None
        self._sessions: SessionManager | None = None
        self._client: TrackerClient | None = None
        self._tracker_key: bytes | None = None
        self._outcome: DoctorOutcome | None = None
        self._report: CapabilityReport | None = None
        self._reused_report_once = False
        # Which layers, and whether to move; the move itself is ours (_move).
        self.placement = NodePlacement(
            settings,
            identity.node_id,
            open_tracker=self._tracker_client,
            gate=self.gate,
            move=self._move,
            capacity=capacity,
        )
        self.state = NodeState.STOPPED
        self.registration: Registration | None = None
        # The tracker's report age limit from its last registration answer (kept across
        # re-registrations; None until a tracker said it).
        self._tracker_max_age_s: float | None = None
        self.relay = NodeRelay(self)  # serving through a relay when the tracker cannot dial us

    # -- events ------------------------------------------------------------------------

    def set_state(self, state: NodeState, message: str, reason: str | None = None) -> None:
        self.state = state
        self.bus.publish(NodeEvent("state", message, state=state, reason=reason))

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
        reuse = self._report_to_reuse()
        if self.placement.layers is None and reuse is None:
            self._cancel.check("choosing layers")
            self.placement.layers = self.placement.choose()
        outcome = self._doctor(
            DoctorRequest(
                model=self.settings.model,
                layers=self.placement.layers,
                device=self.settings.device,
                recipe_id=self.settings.recipe_id,
                memory_cap_bytes=_mb(self.settings.memory_cap_mb),
                reuse_report=reuse,
                save=reuse is None,
            ),
            progress=self._progress,
            cancel=self._cancel,
        )
        self._outcome, report = outcome, outcome.report
        self.gate(
            Gate.CAPABILITY,
            GateState.PASSED if report.passed else GateState.FAILED,
            capability_sentence(report),
            None if report.passed else (outcome.reason or report.status),
            report=report.to_dict(),
        )
        self._cancel.check("checking admission")
        self.set_state(NodeState.ADMITTING, "checking the proof covers what will be advertised")
        self._report = self._admit(outcome, reused=reuse is not None)
        self.gate(Gate.ADMISSION, GateState.PASSED, "the capability report covers this shard")
        self._cancel.check("starting the data plane")
        self._start_data_plane(outcome)
        self._cancel.check("registering")
        self.set_state(NodeState.REGISTERING, f"registering with {self.settings.tracker_url}")
        self._client = self._tracker_client()
        self.register_fresh()
        if self.relay.after_registration():  # --relay: the link is up, register its endpoint
            self.register_fresh()
        # A stop asked while the tracker was answering: the teardown deregisters.
        self._cancel.check("registering")
        self.set_state(NodeState.SERVING, "serving")
        self.placement.serving(self._report)
        self._serving = ServingLoop(self)
        self._serving.start()

    def _tracker_client(self) -> TrackerClient:
        return TrackerClient(
            self.settings.tracker_url,
            self.identity,
            join_token=self.settings.join_token,
            key_fingerprint=self.settings.tracker_key_fingerprint,
            transport=self._transport,
            ca_file=self.settings.tracker_ca_file,
        )

    def _report_to_reuse(self) -> CapabilityReport | None:
        """The saved report of ``--report``, on the first start only (resume proves afresh)."""
        path = self.settings.report_path
        if path is None or self._reused_report_once:
            return None
        self._reused_report_once = True
        return load_reused_report(path)

    def _admit(self, outcome: DoctorOutcome, *, reused: bool = False) -> CapabilityReport:
        report = outcome.report
        if outcome.shard is None or outcome.runtime_recipe is None:
            # The doctor could not even load the shard: refuse with its reason and sentence.
            raise CapabilityAdmissionError(
                outcome.reason or REASON_NOT_PASSED,
                " ".join(report.diagnostics) or f"capability check {report.status}",
            )
        context = self._context(outcome)
        if reused:
            check_reused_digests(report, outcome)
            validator: CapabilityValidator = lambda _ctx: report  # noqa: E731
        else:
            validator = self._validator or (lambda _ctx: report)
        try:
            fresh = validator(context)
        except (CapabilityAdmissionError, Cancelled):
            raise
        except MeshnetError as exc:  # a validator that cannot run refuses (fail closed)
            raise CapabilityAdmissionError(
                REASON_NOT_PASSED, f"capability validation could not run: {exc}"
            ) from exc
        if not reused and not fresh.passed and outcome.reason and self._validator is None:
            raise CapabilityAdmissionError(outcome.reason, capability_sentence(fresh))
        return admit(advertised_requirement(self.settings, outcome, context.device), fresh)

    def _context(self, outcome: DoctorOutcome) -> CapabilityContext:
        assert outcome.shard is not None and outcome.runtime_recipe is not None
        return CapabilityContext(
            backend=outcome.shard,
            selection=DoctorSelection(
                outcome.manifest.model_id, outcome.shard.start, outcome.shard.end
            ),
            recipe=outcome.runtime_recipe,
            manifest=outcome.manifest,
            device=str(outcome.shard.device),
        )

    def reprove(self) -> None:
        """A fresh probe through the loaded shard, judged by the gate (before re-registering)."""
        outcome = self._outcome
        assert outcome is not None
        context = self._context(outcome)
        if self._validator is not None:
            report = self._validator(context)
        else:
            report = validate_loaded_backend(
                context.backend,
                context.selection,
                context.recipe,
                context.manifest,
                progress=self._progress,
            ).report
        self.gate(
            Gate.CAPABILITY,
            GateState.PASSED if report.passed else GateState.FAILED,
            capability_sentence(report),
            None if report.passed else report.status,
            report=report.to_dict(),
        )
        self._report = admit(advertised_requirement(self.settings, outcome, context.device), report)
        self.gate(Gate.ADMISSION, GateState.PASSED, "a fresh capability report covers this shard")

    @property
    def report_max_age_s(self) -> float:
        """The freshness limit that binds: this node's gate's, or the tracker's if lower."""
        limit = self.settings.report_max_age_s
        if self._tracker_max_age_s is not None:
            limit = min(limit, self._tracker_max_age_s)
        return limit

    def report_is_stale(self, now: float | None = None) -> bool:
        """Is the report due to be proven again? Past half the binding limit it is, so
        a report the node sends is always well inside the tracker's limit."""
        if self._report is None:
            return True
        age = (time.time() if now is None else now) - self._report.validated_at
        return age >= self.report_max_age_s * REPROVE_AT_FRACTION

    def _start_data_plane(self, outcome: DoctorOutcome) -> None:
        assert outcome.shard is not None and outcome.identity_block is not None
        self.set_state(NodeState.STARTING, "starting the data plane")
        shard = outcome.shard
        # No budget from the owner: a share of the memory free now, never unbounded.
        budget = self.settings.kv_budget_bytes or default_kv_budget_bytes(shard.device)
        self._sessions = SessionManager(shard, kv_budget_bytes=budget)
        fingerprint = dict(outcome.identity_block["fingerprint"])
        self._server = DataPlaneServer(
            self._sessions,
            node_id=self.identity.node_id,
            public_key=self.identity.public_key_raw,
            sign=self.identity.sign,
            tracker_public_key=lambda: self._tracker_key,
            fingerprint=fingerprint,
            shard_range=(shard.start, shard.end),
            max_frame_bytes=self.settings.max_frame_bytes,
            host=self.settings.host,
            port=self.settings.port,
            tokenizer_path=outcome.model_dir / "tokenizer.json",
            # A fresh key pair per start: a restart rotates the certificate, and the new
            # pin reaches the tracker with the registration that follows.
            tls=None
            if self.settings.insecure_plaintext_dataplane
            else generate_certificate(self.identity.node_id),
        )
        self._server.start()
        self.gate(Gate.DATA_PLANE, GateState.PASSED, f"listening on {self.endpoint}")

    @property
    def endpoint(self) -> str:
        """The data-plane URL the tracker and route clients dial."""
        if self._server is None:
            return ""
        if self.relay.endpoint is not None:
            return self.relay.endpoint
        host = self.settings.advertise_host or self.settings.host
        return f"{self._server.scheme}://{host}:{self._server.port}"

    @property
    def data_plane(self) -> DataPlaneServer | None:
        return self._server

    def _signed_pin(self) -> tuple[str, bytes] | None:
        """The data plane certificate's pin and the identity's signature over it."""
        certificate = None if self._server is None else self._server.tls
        if certificate is None:
            return None
        node_id = self.identity.node_id
        return certificate.pin, sign_pin(certificate.pin, node_id, self.identity.sign)

    @property
    def client(self) -> TrackerClient | None:
        return self._client

    def register(self) -> None:
        """Register the loaded shard with its current report (start-up and re-registration)."""
        assert self._client is not None and self._outcome is not None and self._report
        block = self._outcome.identity_block
        assert block is not None
        try:
            registration = self._client.register(
                block,
                self._report.to_dict(),
                self.endpoint,
                self.relay.reason,
                # What the shard runs on now, never read from the report it is checked against.
                device_class=self._outcome.shard.device.type if self._outcome.shard else None,
                tls_pin=self._signed_pin(),
            )
        except (TrackerRefused, TrackerUnreachable) as exc:
            self.gate(Gate.REGISTRATION, GateState.FAILED, str(exc), exc.reason)
            raise
        self._tracker_key = b64decode(registration.tracker_public_key)
        self.registration = registration
        if registration.capability_max_age_s is not None:
            self._tracker_max_age_s = registration.capability_max_age_s
        fingerprint = block["fingerprint"]
        self.gate(
            Gate.REGISTRATION,
            GateState.PASSED,
            f"registered as {registration.node_id}",
            node_id=registration.node_id,
            tracker_url=self.settings.tracker_url,
            endpoint=self.endpoint,
            model_id=self._outcome.manifest.model_id,
            shard=[self._report.shard.start, self._report.shard.end],
            recipe_id=self._report.recipe.recipe_id,
            recipe_version=self._report.recipe.recipe_version,
            model_artifact_digest=fingerprint["model_artifact_digest"],
            runtime_recipe_digest=fingerprint["runtime_recipe_digest"],
        )
        status = registration.recipe_status
        self.gate(
            Gate.RECIPE,
            GateState.PASSED if status == "certified" else GateState.INFO,
            f"recipe is {status}: {registration.recipe_detail}",
            status,
            status=status,
            detail=registration.recipe_detail,
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

    @property
    def open_sessions(self) -> int:
        return self._sessions.open_count if self._sessions else 0

    @property
    def tokens_served(self) -> int:
        return self._server.tokens_served if self._server else 0

    def load(self) -> float:
        if self._sessions is None or not self._sessions.kv_budget_bytes:
            return float(self.open_sessions)
        return self._sessions.reserved_bytes / self._sessions.kv_budget_bytes

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
            self._leave_routing_and_drain()
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
        """Leave routing, finish open sessions, free the shard's memory; then PAUSED."""
        self._cancel.cancel()  # a start-up in progress stops at its next check
        with self._lifecycle:
            self._cancel.reset()
            if self.state is NodeState.PAUSED:
                return
            self.set_state(NodeState.PAUSING, "leaving routing and freeing memory")
            self._leave_routing_and_drain()
            self._teardown()
            self.set_state(NodeState.PAUSED, sentence)

    def stop(self, why: str = "", reason: str | None = None) -> None:
        """Drain: leave routing first, let open sessions finish, then close the data plane.

        ``why`` and ``reason`` say in the stopped state what asked for the stop
        (e.g. the end of a controlling stdin), so an operator is not left guessing.
        """
        self._stop_reason = reason
        self._cancel.cancel(why)
        stopped = f"stopped: {why}" if why else "stopped"
        with self._lifecycle:
            try:
                if self.state in _IDLE and not self._holds_anything():
                    if self.state is NodeState.PAUSED:
                        self.set_state(NodeState.STOPPED, stopped, reason)
                    return
                self.set_state(NodeState.DRAINING, "leaving routing and finishing open sessions")
                self._leave_routing_and_drain()
                self._teardown()
                self.set_state(NodeState.STOPPED, stopped, reason)
            finally:
                self._stopped.set()
                self._cancel.reset()
                self._stop_reason = None

    def _holds_anything(self) -> bool:
        return any(
            part is not None for part in (self._serving, self._server, self._client, self._outcome)
        )

    def _leave_routing_and_drain(self) -> None:
        self._stop_serving_loop()
        self._deregister()
        deadline = time.monotonic() + self.settings.drain_timeout_s
        while self.open_sessions and time.monotonic() < deadline:
            time.sleep(0.1)

    def _stop_serving_loop(self) -> None:
        serving, self._serving = self._serving, None
        if serving is not None:
            self._cancel.cancel()  # a re-probe in the loop stops at its next step
            serving.stop()
            self._cancel.reset()

    def _deregister(self) -> None:
        if self._client is not None and self.registration is not None:
            try:
                self._client.deregister()
            except MeshnetError as exc:
                log.info("deregister failed", extra={"error": str(exc)})
        self.registration = None

    def _teardown(self) -> None:
        """Take down whatever start-up built, in reverse: loop, registration, server, shard."""
        self._stop_serving_loop()
        self._deregister()
        self.relay.stop()
        if self._server is not None:
            try:
                self._server.stop()
            except Exception:  # shutting down: log and carry on closing the rest
                log.exception("data plane did not stop cleanly")
            self._server = None
        self._sessions = None
        if self._client is not None:
            self._client.close()
            self._client = None
        outcome, self._outcome = self._outcome, None
        if outcome is not None:
            outcome.release()
        self._report = None

    def wait(self, timeout: float | None = None) -> bool:
        """True once the node stopped (or failed to start)."""
        return self._stopped.wait(timeout)

    # -- used by the serving loop --------------------------------------------------------

    @property
    def heartbeat_interval_s(self) -> float:
        return self.registration.heartbeat_interval_s if self.registration else 5.0

    @property
    def throughput(self) -> float | None:
        return self._report.tokens_per_second if self._report else None


def _mb(value: int | None) -> int | None:
    return None if value is None else int(value) * 1024 * 1024
