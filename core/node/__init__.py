"""A node: the lifecycle that drives it, and the parts it hands narrow views to.

    lifecycle.py     Node: the state machine (start, pause, resume, move, stop) and the
                     order in which it builds and takes down the parts below
    proving.py       the doctor's real forward, the admission gate, proving again
    shard_server.py  the sessions and the data-plane server, its TLS certificate and pin
    registration.py  the tracker client, the registration, what the tracker said
    settings.py      NodeSettings: what the node is told to serve, where, under which limits
    status.py        NodeStatus: the latest word of every event, for the snapshot
    admission.py     what proving reads to decide admission (a reused report, sentences)
    placement.py     which layers, and whether to move; the move itself is the lifecycle's
    serving.py       the heartbeat loop and what the tracker says of the node
    relay.py         when to serve through a relay, and the link while it does
    hooks.py         the callback shapes the parts are given instead of the lifecycle

Only ``lifecycle`` holds the lifecycle lock, the cancel token and the node's
state; each part it builds holds what it built (the prover the loaded shard
and the report, the data plane its server, the registration its client). The
parts see the node through a Protocol of public members or a callback, and
none of them imports ``lifecycle``, so the arrows run one way:
lifecycle → parts → settings/hooks.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.node.lifecycle import Node
    from core.node.settings import NodeSettings

__all__ = ["Node", "NodeSettings"]

# Loaded on first use, so importing a light part (``core.node.status``, which
# the GUI may read) does not load the lifecycle and, through the doctor, torch.
_LAZY = {"Node": "core.node.lifecycle", "NodeSettings": "core.node.settings"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'core.node' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
