"""A node: the lifecycle that owns its state, and the parts it hands narrow views to.

    lifecycle.py  Node: load, prove, admit, serve, register, heartbeat, pause, move, drain
    settings.py   NodeSettings: what the node is told to serve, where, under which limits
    status.py     NodeStatus: the latest word of every event, for the snapshot
    admission.py  what start-up reads to decide admission (a reused report, sentences)
    placement.py  which layers, and whether to move; the move itself is the lifecycle's
    serving.py    the heartbeat loop and what the tracker says of the node
    relay.py      when to serve through a relay, and the link while it does
    hooks.py      the callback shapes the parts are given instead of the lifecycle

Only ``lifecycle`` holds the node's private state. The other parts see it through
a Protocol of public members or a callback, and none of them imports
``lifecycle``, so the arrows run one way: lifecycle → parts → settings/hooks.
"""

from core.node.lifecycle import Node
from core.node.settings import NodeSettings

__all__ = ["Node", "NodeSettings"]
