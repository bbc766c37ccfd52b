"""The serving loop: heartbeats, re-registration, and what the tracker says of this node.

One thread per serving period (start or resume → pause or stop). Every
heartbeat reply carries the node's reachability and its recipe's status, so
the status view learns both without fetching the tracker's whole state; the
loop publishes them as gate events when they change, and a ``stats`` event
every few seconds.

When the tracker refuses a heartbeat (it restarted, or the node was silent
past the live window) the node registers again. The seed gates every
registration, so a report older than the gate's freshness limit is not
resent: a fresh probe runs through the loaded shard first and the gate judges
that one.

Freshness: the tracker says in its registration answer how old a report it
admits (``capability_max_age_s``). Once the report is half that old (or half
the node's own gate limit, if lower) the loop proves the layers again with a
real forward through the loaded shard and registers the fresh report, while
serving goes on, so a long-serving node's report never ages out. Should the
tracker still refuse a registration as ``stale`` (older trackers said
``capability-stale``), the node proves again and registers once more by itself. Every
registration made here, the relayed endpoint's included, goes through that
age check.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Protocol

from core.errors import (
    Cancelled,
    CapabilityAdmissionError,
    MeshnetError,
    ReRegisterRequired,
    TrackerRefused,
    TrackerUnreachable,
)
from core.events import KIND_STATS, EventBus, Gate, GateState, NodeEvent, NodeState
from core.network.tracker_client import STALE_REASONS, HeartbeatAck, TrackerClient
from core.node.relay import NodeRelay
from core.node.settings import NodeSettings

log = logging.getLogger(__name__)

MAX_BACKOFF_S = 30.0
# Heartbeat refusals that take this node out of routing until the tracker's operator acts:
# a hop audit caught it returning wrong outputs, or the operator banned it.
OUT_OF_ROUTING = frozenset({"quarantined", "banned"})
_REACHABILITY_GATE = {"reachable": GateState.PASSED, "unreachable": GateState.FAILED}


class Served(Protocol):
    """What the loop reads of and asks from its node: public members only
    (``core.node.lifecycle.Node`` is one)."""

    settings: NodeSettings
    bus: EventBus
    relay: NodeRelay

    @property
    def state(self) -> NodeState: ...

    @property
    def client(self) -> TrackerClient | None: ...

    @property
    def heartbeat_interval_s(self) -> float: ...

    @property
    def open_sessions(self) -> int: ...

    @property
    def tokens_served(self) -> int: ...

    @property
    def throughput(self) -> float | None: ...

    def load(self) -> float: ...

    def set_state(self, state: NodeState, message: str, reason: str | None = None) -> None: ...

    def gate(
        self,
        gate: Gate,
        gate_state: GateState,
        message: str,
        reason: str | None = None,
        **data: Any,
    ) -> None: ...

    def register(self) -> None: ...

    def register_fresh(self) -> None: ...

    def report_is_stale(self) -> bool: ...

    def reprove(self) -> None: ...

    def suggest_move(
        self, layers: tuple[int, int], sentence: str, *, urgent: bool = False
    ) -> bool: ...


class ServingLoop:
    def __init__(self, node: Served) -> None:
        self._node = node
        self._stop = threading.Event()
        self._last_gate: dict[Gate, tuple[object, ...]] = {}
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="meshnet-heartbeat", daemon=True)
        # Proving again runs beside the heartbeats: a slow forward must not make the
        # node miss its live window.
        self._refresher: threading.Thread | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout_s: float = 30.0, *, wait: bool = True) -> None:
        """Ask the loop to end and (``wait``) wait for it (an in-flight request finishes
        first)."""
        self._stop.set()
        if not wait:
            return
        here = threading.current_thread()
        for thread in (self._thread, self._refresher):
            if thread is not None and thread is not here and thread.is_alive():
                thread.join(timeout_s)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    # -- the loop ------------------------------------------------------------------------

    def _run(self) -> None:
        node = self._node
        backoff = 1.0
        interval = node.heartbeat_interval_s
        next_beat = time.monotonic() + interval
        while True:
            wake = min(next_beat - time.monotonic(), node.settings.stats_interval_s)
            if self._stop.wait(max(0.0, wake)):
                return
            if time.monotonic() >= next_beat:
                try:
                    if node.report_is_stale():
                        self._start_refresh()
                    interval, backoff = self._beat(interval, backoff)
                except Cancelled:
                    return
                except CapabilityAdmissionError as exc:
                    # The fresh report does not pass: this node may not register any more.
                    self._set_state(NodeState.REFUSED, exc.message, exc.reason)
                    return
                next_beat = time.monotonic() + interval
            self._publish_stats()

    def _beat(self, interval: float, backoff: float) -> tuple[float, float]:
        """One heartbeat; returns (next interval, next back-off)."""
        node = self._node
        client = node.client
        if client is None:
            return interval, backoff
        try:
            ack = client.heartbeat(
                load=node.load(),
                open_sessions=node.open_sessions,
                tokens_served=node.tokens_served,
                throughput=node.throughput,
            )
        except ReRegisterRequired as exc:
            return self._reregister_or_back_off(
                f"re-registering: {exc.detail}", exc.reason, backoff
            )
        except TrackerUnreachable as exc:
            # Only here, once serving, does the node keep retrying (a first registration exits).
            self._set_state(NodeState.RECONNECTING, f"{exc} The node keeps retrying.", exc.reason)
            return backoff, min(backoff * 2, MAX_BACKOFF_S)
        except TrackerRefused as exc:
            if exc.reason in STALE_REASONS:  # the report aged out at the tracker: prove again
                return self._reregister_or_back_off(
                    f"re-proving: {exc.detail}", exc.reason, backoff, reprove=True
                )
            if exc.reason in OUT_OF_ROUTING:
                # Tell the operator why routes stopped (the tray shows the sentence), and
                # keep asking slowly: only the tracker's operator can lift it.
                self._set_state(NodeState.REFUSED, exc.detail, exc.reason)
                return MAX_BACKOFF_S, MAX_BACKOFF_S
            log.warning(
                "heartbeat refused: %s",
                exc,
                extra={"reason": exc.reason, "error": str(exc)},
            )
            return backoff, min(backoff * 2, MAX_BACKOFF_S)
        except MeshnetError as exc:
            log.warning(
                "heartbeat failed: %s [%s]",
                exc,
                exc.reason,
                extra={"reason": exc.reason, "error": str(exc)},
            )
            return backoff, min(backoff * 2, MAX_BACKOFF_S)
        if node.state is not NodeState.SERVING:
            self._set_state(NodeState.SERVING, "serving")
        self.apply_view(ack)
        return ack.heartbeat_interval_s, 1.0

    def _reregister_or_back_off(
        self, sentence: str, reason: str, backoff: float, *, reprove: bool = False
    ) -> tuple[float, float]:
        if self._stop.is_set():  # the node is leaving: its announcement must stand
            return backoff, backoff
        self._set_state(NodeState.REGISTERING, sentence, reason)
        try:
            self.reregister(reprove=reprove)
        except (Cancelled, CapabilityAdmissionError):
            raise
        except MeshnetError as failed:
            self._set_state(NodeState.RECONNECTING, str(failed), failed.reason)
            return backoff, min(backoff * 2, MAX_BACKOFF_S)
        self._set_state(NodeState.SERVING, "serving")
        return self._node.heartbeat_interval_s, 1.0

    def _register_relayed(self) -> None:
        """The relay link is up: tell the tracker to reach this node through it (with a
        report young enough for the tracker: the age is checked first, as everywhere)."""
        try:
            self.reregister()
        except (Cancelled, CapabilityAdmissionError):
            raise
        except MeshnetError as exc:  # the next heartbeat's refusal re-registers again
            log.warning("registering the relayed endpoint failed", extra={"error": str(exc)})

    def _start_refresh(self) -> None:
        """Prove the layers again on a thread of its own, unless that is under way."""
        if self._refresher is not None and self._refresher.is_alive():
            return
        self._refresher = threading.Thread(
            target=self._refresh_report, name="meshnet-reprove", daemon=True
        )
        self._refresher.start()

    def _refresh_report(self) -> None:
        """Prove the layers again before the report ages out, and register the fresh one.

        Serving and heartbeats go on meanwhile (the state stays what it is); a
        registration the tracker cannot take now is tried again at the next beat.
        A fresh report that does not pass ends serving, as at re-registration.
        """
        log.info("the capability report is due: proving the layers again")
        try:
            self._node.reprove()
            if not self._stop.is_set():
                self._node.register_fresh()
        except Cancelled:
            return
        except CapabilityAdmissionError as exc:
            self._set_state(NodeState.REFUSED, exc.message, exc.reason)
            self._stop.set()  # this node may not register any more: the heartbeats end
        except MeshnetError as exc:
            log.warning("refreshing the capability report failed: %s [%s]", exc, exc.reason)
        except Exception:  # a bug must not pass silently, nor end serving
            log.exception("refreshing the capability report failed unexpectedly")

    def reregister(self, *, reprove: bool = False) -> None:
        """Register again; prove the shard afresh first when the report is due (or
        ``reprove``: the tracker said it aged out)."""
        node = self._node
        if reprove or node.report_is_stale():
            self._set_state(
                NodeState.PROBING, "the capability report is too old: running a new test forward"
            )
            node.reprove()
            self._set_state(NodeState.REGISTERING, "re-registering with a fresh report")
        node.register_fresh()

    def _set_state(self, state: NodeState, message: str, reason: str | None = None) -> None:
        if not self._stop.is_set():  # a pause or stop in progress owns the state now
            self._node.set_state(state, message, reason)

    # -- what the tracker says -----------------------------------------------------------

    def apply_view(self, ack: HeartbeatAck) -> None:
        """Reachability and recipe status from the heartbeat reply, as gate events;
        a suggested move is handed to the node, whose placement decides."""
        if self._node.relay.consider(ack):
            self._register_relayed()
            return
        if ack.reachability is not None:
            reach = ack.reachability
            relay = self._node.relay
            said = ack.reachability_reason or reach
            relayed: dict[str, object] = {}
            if relay.link is not None:  # say so, and why, instead of the bare verdict
                said = relay.sentence(said)
                relayed = {"relay": relay.link.relay_url, "relay_why": relay.why}
            self._gate_if_changed(
                Gate.REACHABILITY,
                _REACHABILITY_GATE.get(reach, GateState.PENDING),
                said,
                reach,
                reachability=reach,
                **relayed,
            )
        if ack.recipe_status is not None:
            status = ack.recipe_status
            self._gate_if_changed(
                Gate.RECIPE,
                GateState.PASSED if status == "certified" else GateState.INFO,
                f"recipe is {status}: {ack.recipe_detail}",
                status,
                status=status,
                detail=ack.recipe_detail,
            )
        node = self._node
        if ack.suggested_layers is not None and not self._stop.is_set():
            node.suggest_move(ack.suggested_layers, ack.suggestion, urgent=ack.suggestion_urgent)
        sessions, served = node.open_sessions, node.tokens_served
        self._gate_if_changed(
            Gate.SESSIONS,
            GateState.INFO,
            f"{sessions} open session(s), {served} tokens served",
            None,
            open_sessions=sessions,
            tokens_served=served,
        )

    def _gate_if_changed(
        self,
        gate: Gate,
        gate_state: GateState,
        message: str,
        reason: str | None,
        **data: object,
    ) -> None:
        key = (gate_state, message, reason, tuple(sorted(data.items())))
        if self._last_gate.get(gate) != key and not self._stop.is_set():
            self._last_gate[gate] = key
            self._node.gate(gate, gate_state, message, reason, **data)

    def _publish_stats(self) -> None:
        node = self._node
        if self._stop.is_set() or node.state is not NodeState.SERVING:
            return
        sessions, served = node.open_sessions, node.tokens_served
        uptime = time.monotonic() - self._started
        node.bus.publish(
            NodeEvent(
                KIND_STATS,
                f"{sessions} open session(s), {served} tokens served",
                data={"open_sessions": sessions, "tokens_served": served, "uptime_s": uptime},
            )
        )
