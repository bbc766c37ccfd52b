"""When a node serves through a relay, and the link it holds while it does.

A node serves directly while the tracker can dial it. When the tracker's
verdict is "unreachable" (a home router drops inbound connections), or the
node was started with ``--relay``, it opens an outbound link to the relay the
tracker offered at registration (or ``--relay-url``), then registers again
with the relay endpoint: the tracker and route clients reach it through the
relay from then on. The link reconnects by itself (core/dataplane/relay_link.py);
this module only decides, and says why in the reachability gate. It sees the
node through ``RelayHost``, a handful of public members, never the lifecycle.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from typing import TYPE_CHECKING, Any, Protocol

from core.dataplane.relay_link import CONNECTED, RelayLink
from core.events import Gate, GateState
from core.identity.keypair import NodeIdentity
from core.network.tracker_client import HeartbeatAck, Registration
from core.node.settings import NodeSettings

if TYPE_CHECKING:  # the server imports the runtime (torch); only its type is needed here
    from core.dataplane.server import DataPlaneServer

log = logging.getLogger(__name__)

CONNECT_WAIT_S = 15.0
WHY_FLAG = "the node was started with --relay"


def offered_relay(raw: Any) -> str | None:
    """The relay URL in a registration reply, if the tracker offered one."""
    relay = raw.get("relay") if isinstance(raw, dict) else None
    url = relay.get("url") if isinstance(relay, dict) else None
    return url if isinstance(url, str) and url.startswith(("ws://", "wss://")) else None


class RelayHost(Protocol):
    """What the relay reads of its node (``core.node.lifecycle.Node`` is one)."""

    @property
    def settings(self) -> NodeSettings: ...

    @property
    def identity(self) -> NodeIdentity: ...

    @property
    def registration(self) -> Registration | None: ...

    @property
    def data_plane(self) -> DataPlaneServer | None: ...

    def gate(
        self,
        gate: Gate,
        gate_state: GateState,
        message: str,
        reason: str | None = None,
        **data: Any,
    ) -> None: ...


class NodeRelay:
    def __init__(self, node: RelayHost) -> None:
        self._node = node
        self.link: RelayLink | None = None
        self.why = ""
        self.link_state = ""
        self.link_sentence = ""
        self._task: concurrent.futures.Future[None] | None = None
        self._said_no_relay = False

    @property
    def reason(self) -> str | None:
        """Why, for the registration of the relayed endpoint (the tracker shows it)."""
        return None if self.link is None else self.why

    @property
    def endpoint(self) -> str | None:
        """The relayed endpoint while a link is held (what the node registers)."""
        return None if self.link is None else self.link.endpoint

    def relay_url(self) -> str | None:
        node = self._node
        if node.settings.relay_url:
            return node.settings.relay_url
        return None if node.registration is None else offered_relay(dict(node.registration.raw))

    # -- deciding ------------------------------------------------------------------------

    def after_registration(self) -> bool:
        """With ``--relay``: open the link now. True when the node must register again."""
        if not self._node.settings.relay or self.link is not None:
            return False
        return self.start(WHY_FLAG)

    def consider(self, ack: HeartbeatAck) -> bool:
        """An 'unreachable' verdict on a direct endpoint: go through the relay.
        True when the node must register again (with the relayed endpoint)."""
        if self.link is not None or ack.reachability != "unreachable":
            return False
        why = ack.reachability_reason or "the tracker could not dial this node"
        return self.start(f"the tracker could not dial this node directly ({why})")

    def start(self, why: str) -> bool:
        node, server = self._node, self._node.data_plane
        url = self.relay_url()
        if url is None:
            if not self._said_no_relay:  # once, not every heartbeat
                log.warning("no relay offered: the node stays unreachable (%s)", why)
                self._said_no_relay = True
            return False
        if server is None or server.loop is None:
            return False
        link = RelayLink(
            url,
            node_id=node.identity.node_id,
            public_key=node.identity.public_key_raw,
            sign=node.identity.sign,
            serve=server.serve_relayed,
            answer_get=server.answer_relayed_get,
            max_message_bytes=2 * node.settings.max_frame_bytes,
            on_state=self._on_link_state,
            tunnel=None if server.tls is None else server.open_tunnel,
        )
        self.link, self.why = link, why
        self._task = asyncio.run_coroutine_threadsafe(link.run_forever(), server.loop)
        waited = asyncio.run_coroutine_threadsafe(
            asyncio.wait_for(link.connected.wait(), CONNECT_WAIT_S), server.loop
        )
        try:
            waited.result(CONNECT_WAIT_S + 1.0)
        except (TimeoutError, concurrent.futures.TimeoutError):
            log.warning("the relay at %s did not accept a link yet; still trying", url)
        log.info("serving through the relay at %s: %s", url, why)
        return True

    def stop(self) -> None:
        task, self._task, self.link = self._task, None, None
        if task is not None:
            task.cancel()
            try:
                task.result(10.0)
            except (concurrent.futures.CancelledError, concurrent.futures.TimeoutError):
                pass
            except Exception:
                log.exception("the relay link did not stop cleanly")

    # -- saying so -----------------------------------------------------------------------

    def sentence(self, tracker_says: str) -> str:
        """The reachability gate's message while relayed: that, why, and the link's state."""
        assert self.link is not None
        link = "" if self.link_state == CONNECTED else f"; link {self.link_sentence}"
        return (
            f"Serving through a relay ({self.link.relay_url}) because {self.why}{link}. "
            f"The tracker: {tracker_says}"
        )

    def _on_link_state(self, state: str, sentence: str) -> None:
        self.link_state, self.link_sentence = state, sentence
        link = self.link
        if link is None:
            return
        self._node.gate(
            Gate.REACHABILITY,
            GateState.INFO if state == CONNECTED else GateState.FAILED,
            f"Serving through a relay ({link.relay_url}) because {self.why}: {sentence}",
            f"relay-{state}",
            relay=link.relay_url,
            relay_state=state,
            relay_why=self.why,
        )
