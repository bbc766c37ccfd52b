"""The node lifecycle: load, prove, admit, serve, register, heartbeat, drain.

    identity → doctor (load the shard + bounded real forward) → admission gate
    → data plane up → register with the tracker → heartbeat ⟲ (re-register when
    refused, back off while unreachable) → drain + deregister on stop

Every step publishes a ``NodeEvent`` (``core.events``) so the tray app and the
CLI show each gate live. A node whose admission fails never registers: the
gate raises before the tracker client is ever called.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from core.admission import (
    AdmissionRequirement,
    CapabilityAdmissionError,
    CapabilityContext,
    CapabilityValidator,
    admit,
    admit_for_start,
)
from core.capability import CapabilityReport
from core.dataplane.server import DataPlaneServer
from core.doctor import DoctorOutcome, DoctorRequest, DoctorSelection, run_doctor
from core.errors import MeshnetError
from core.events import EventBus, Gate, GateState, NodeEvent, NodeState
from core.identity import NodeIdentity, b64decode
from core.runtime.sessions import SessionManager
from core.tracker_client import (
    Registration,
    ReRegisterRequired,
    TrackerClient,
    TrackerRefused,
    TrackerUnreachable,
)

log = logging.getLogger(__name__)

MAX_BACKOFF_S = 30.0


@dataclass(frozen=True)
class NodeSettings:
    tracker_url: str
    model: str | None = None  # model id or folder; None = the default model
    layers: tuple[int, int] | None = None  # None = the largest range that fits
    recipe_id: str | None = None
    device: str | None = None
    host: str = "127.0.0.1"  # where the data plane listens
    port: int = 0
    advertise_host: str | None = None  # what the tracker dials; defaults to host
    kv_budget_bytes: int | None = None
    max_frame_bytes: int = 64 * 1024 * 1024
    join_token: str | None = None
    drain_timeout_s: float = 10.0


class Node:
    def __init__(
        self,
        settings: NodeSettings,
        identity: NodeIdentity,
        *,
        bus: EventBus | None = None,
        validator: CapabilityValidator | None = None,
        doctor: Callable[[DoctorRequest], DoctorOutcome] = run_doctor,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.settings = settings
        self.identity = identity
        self.bus = bus or EventBus()
        # None: judge the report the doctor just produced in-process (a real forward).
        self._validator = validator
        self._doctor = doctor
        self._transport = transport  # tests: httpx.MockTransport for tracker error paths
        self._stop = threading.Event()
        self._heartbeats: threading.Thread | None = None
        self._server: DataPlaneServer | None = None
        self._sessions: SessionManager | None = None
        self._client: TrackerClient | None = None
        self._tracker_key: bytes | None = None
        self._outcome: DoctorOutcome | None = None
        self._report: CapabilityReport | None = None
        self._last_gate: dict[Gate, tuple[GateState, str, str | None]] = {}
        self.state = NodeState.STOPPED
        self.registration: Registration | None = None

    # -- events ------------------------------------------------------------------------

    def _set_state(self, state: NodeState, message: str, reason: str | None = None) -> None:
        self.state = state
        self.bus.publish(NodeEvent("state", message, state=state, reason=reason))

    def _gate(
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

    # -- start ---------------------------------------------------------------------------

    def start(self) -> None:
        """Run every gate in order; raise (and publish why) at the first that fails."""
        try:
            self._start()
        except CapabilityAdmissionError as exc:
            self._gate(Gate.ADMISSION, GateState.FAILED, exc.message, exc.reason)
            self._set_state(NodeState.REFUSED, exc.message, exc.reason)
            self._shutdown_quietly()
            raise
        except MeshnetError as exc:
            self._set_state(NodeState.ERROR, str(exc), exc.reason)
            self._shutdown_quietly()
            raise

    def _start(self) -> None:
        self._gate(Gate.IDENTITY, GateState.PASSED, f"node {self.identity.node_id}")
        self._set_state(NodeState.LOADING, "loading the shard and running a test forward")
        outcome = self._doctor(
            DoctorRequest(
                model=self.settings.model,
                layers=self.settings.layers,
                device=self.settings.device,
                recipe_id=self.settings.recipe_id,
            )
        )
        self._outcome, report = outcome, outcome.report
        self._gate(
            Gate.CAPABILITY,
            GateState.PASSED if report.passed else GateState.FAILED,
            _capability_sentence(report),
            None if report.passed else report.status,
            report=report.to_dict(),
        )
        self._set_state(NodeState.ADMITTING, "checking the proof covers what will be advertised")
        self._report = self._admit(outcome)
        self._gate(Gate.ADMISSION, GateState.PASSED, "the capability report covers this shard")
        self._start_data_plane(outcome)
        self._set_state(NodeState.REGISTERING, f"registering with {self.settings.tracker_url}")
        self._client = TrackerClient(
            self.settings.tracker_url,
            self.identity,
            join_token=self.settings.join_token,
            transport=self._transport,
        )
        self._register()
        self._set_state(NodeState.SERVING, "serving")
        self._heartbeats = threading.Thread(
            target=self._heartbeat_loop, name="meshnet-heartbeat", daemon=True
        )
        self._heartbeats.start()

    def _admit(self, outcome: DoctorOutcome) -> CapabilityReport:
        if outcome.shard is None or outcome.runtime_recipe is None:
            # The doctor could not even load the shard: the gate refuses on its report.
            return admit(_requirement_from_report(outcome.report), outcome.report)
        context = CapabilityContext(
            backend=outcome.shard,
            selection=DoctorSelection(
                outcome.manifest.model_id, outcome.shard.start, outcome.shard.end
            ),
            recipe=outcome.runtime_recipe,
            manifest=outcome.manifest,
            device=str(outcome.shard.device),
        )
        validator = self._validator or (lambda _ctx: outcome.report)
        return admit_for_start(context, validator)

    def _start_data_plane(self, outcome: DoctorOutcome) -> None:
        assert outcome.shard is not None and outcome.identity_block is not None
        self._set_state(NodeState.STARTING, "starting the data plane")
        shard = outcome.shard
        self._sessions = SessionManager(shard, kv_budget_bytes=self.settings.kv_budget_bytes)
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
        )
        self._server.start()
        self._gate(Gate.DATA_PLANE, GateState.PASSED, f"listening on {self.endpoint}")

    @property
    def endpoint(self) -> str:
        """The data-plane URL the tracker and route clients dial."""
        if self._server is None:
            return ""
        host = self.settings.advertise_host or self.settings.host
        return f"ws://{host}:{self._server.port}"

    def _register(self) -> None:
        assert self._client is not None and self._outcome is not None and self._report
        block = self._outcome.identity_block
        assert block is not None
        try:
            registration = self._client.register(block, self._report.to_dict(), self.endpoint)
        except TrackerRefused as exc:
            self._gate(Gate.REGISTRATION, GateState.FAILED, str(exc), exc.reason)
            raise
        except TrackerUnreachable as exc:
            self._gate(Gate.REGISTRATION, GateState.FAILED, str(exc), exc.reason)
            raise
        self._tracker_key = b64decode(registration.tracker_public_key)
        self.registration = registration
        self._gate(Gate.REGISTRATION, GateState.PASSED, f"registered as {registration.node_id}")
        self._gate(
            Gate.RECIPE,
            GateState.PASSED if registration.recipe_status == "certified" else GateState.INFO,
            f"recipe is {registration.recipe_status}: {registration.recipe_detail}",
            registration.recipe_status,
        )

    # -- serving -------------------------------------------------------------------------

    def _heartbeat_loop(self) -> None:
        assert self._client is not None
        backoff = 1.0
        interval = self.registration.heartbeat_interval_s if self.registration else 5.0
        while not self._stop.wait(interval):
            try:
                ack = self._client.heartbeat(
                    load=self._load(),
                    open_sessions=self._open_sessions(),
                    tokens_served=self._server.tokens_served if self._server else 0,
                    throughput=self._report.tokens_per_second if self._report else None,
                )
                interval, backoff = ack.heartbeat_interval_s, 1.0
                if self.state is not NodeState.SERVING:
                    self._set_state(NodeState.SERVING, "serving")
                self._poll_tracker_view()
            except ReRegisterRequired as exc:
                self._set_state(NodeState.REGISTERING, f"re-registering: {exc.detail}", exc.reason)
                interval = self._retry(self._register, backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S) if interval == backoff else 1.0
            except TrackerUnreachable as exc:
                self._set_state(NodeState.RECONNECTING, str(exc), exc.reason)
                interval, backoff = backoff, min(backoff * 2, MAX_BACKOFF_S)
            except MeshnetError as exc:
                log.warning("heartbeat failed", extra={"reason": exc.reason, "error": str(exc)})
                interval, backoff = backoff, min(backoff * 2, MAX_BACKOFF_S)

    def _retry(self, action: Callable[[], None], backoff: float) -> float:
        try:
            action()
        except MeshnetError as exc:
            self._set_state(NodeState.RECONNECTING, str(exc), exc.reason)
            return backoff
        self._set_state(NodeState.SERVING, "serving")
        return self.registration.heartbeat_interval_s if self.registration else 5.0

    def _poll_tracker_view(self) -> None:
        """Reachability and recipe status as the tracker sees them, for the status view."""
        if self._client is None:
            return
        try:
            state = self._client.state()
        except MeshnetError:
            return  # the status view keeps its last known values
        me = next(
            (n for n in state.get("nodes", []) if n.get("node_id") == self.identity.node_id), None
        )
        if me is not None:
            reach = str(me.get("reachability", "unchecked"))
            gate_state = {"reachable": GateState.PASSED, "unreachable": GateState.FAILED}.get(
                reach, GateState.PENDING
            )
            detail = str(me.get("reachability_reason") or reach)
            self._gate_if_changed(Gate.REACHABILITY, gate_state, detail, reach)
            digests = (me.get("model_artifact_digest"), me.get("runtime_recipe_digest"))
            for recipe in state.get("recipes", []):
                if (recipe.get("model_artifact_digest"), recipe.get("runtime_recipe_digest")) == (
                    digests
                ):
                    status = str(recipe.get("status"))
                    self._gate_if_changed(
                        Gate.RECIPE,
                        GateState.PASSED if status == "certified" else GateState.INFO,
                        f"recipe is {status}: {recipe.get('detail', '')}",
                        status,
                    )
        sessions = self._open_sessions()
        served = self._server.tokens_served if self._server else 0
        self._gate_if_changed(
            Gate.SESSIONS,
            GateState.INFO,
            f"{sessions} open session(s), {served} tokens served",
            str(sessions),
        )

    def _gate_if_changed(
        self, gate: Gate, gate_state: GateState, message: str, reason: str | None
    ) -> None:
        key = (gate_state, message, reason)
        if self._last_gate.get(gate) != key:
            self._last_gate[gate] = key
            self._gate(gate, gate_state, message, reason)

    def _open_sessions(self) -> int:
        return self._sessions.open_count if self._sessions else 0

    def _load(self) -> float:
        if self._sessions is None or not self.settings.kv_budget_bytes:
            return float(self._open_sessions())
        return self._sessions.reserved_bytes / self.settings.kv_budget_bytes

    # -- stop ----------------------------------------------------------------------------

    def stop(self) -> None:
        """Drain: leave routing first, let open sessions finish, then close the data plane."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._set_state(NodeState.DRAINING, "leaving routing and finishing open sessions")
        if self._client is not None and self.registration is not None:
            try:
                self._client.deregister()
            except MeshnetError as exc:
                log.info("deregister failed", extra={"error": str(exc)})
        deadline = time.monotonic() + self.settings.drain_timeout_s
        while self._open_sessions() and time.monotonic() < deadline:
            time.sleep(0.1)
        self._shutdown_quietly()
        self._set_state(NodeState.STOPPED, "stopped")

    def _shutdown_quietly(self) -> None:
        self._stop.set()
        if self._server is not None:
            try:
                self._server.stop()
            except Exception:  # shutting down: log and carry on closing the rest
                log.exception("data plane did not stop cleanly")
            self._server = None
        if self._client is not None:
            self._client.close()
            self._client = None

    def wait(self, timeout: float | None = None) -> bool:
        return self._stop.wait(timeout)


def _capability_sentence(report: CapabilityReport) -> str:
    if report.passed:
        rate = f"{report.tokens_per_second:.1f} tokens/s" if report.tokens_per_second else ""
        return (
            f"a real forward through layers {report.shard.start}–{report.shard.end} passed {rate}"
        )
    return " ".join(report.diagnostics) or f"capability check {report.status}"


def _requirement_from_report(report: CapabilityReport) -> AdmissionRequirement:
    """What the node meant to serve when the doctor could not even load it."""
    return AdmissionRequirement(
        model_id=report.model.model_id,
        shard_start=report.shard.start,
        shard_end=report.shard.end,
        recipe_id=report.recipe.recipe_id,
        recipe_version=report.recipe.recipe_version,
        backend_id=report.backend.backend_id,
        device=report.backend.device,
    )
