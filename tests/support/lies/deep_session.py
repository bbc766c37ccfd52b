"""A node that lies only deep into a session: from its ``MESHNET_TEST_LIE_AFTER``-th
step on (default 20), so a short replay never sees the lie and a replay of the whole
session takes long. Its lie needs the node's ``Lie`` (``MESHNET_TEST_LIE_RATE=1``, or
``node.server._ctx.lie`` in process), so honest nodes in the same process stay honest.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from core.dataplane.hop import HopSession

AFTER_ENV = "MESHNET_TEST_LIE_AFTER"
Reply = Callable[[Any, Any, dict[str, str]], bytes]


def wrap(original: Reply, after: int) -> Reply:
    def _reply(self: Any, result: Any, meta: dict[str, str]) -> bytes:
        if self._steps + 1 >= after:  # this reply answers step number _steps + 1
            return original(self, result, meta)
        saved, self._ctx.lie = getattr(self._ctx, "lie", None), None  # early in the session: honest
        try:
            return original(self, result, meta)
        finally:
            self._ctx.lie = saved

    return _reply


def install() -> None:
    after = int(os.environ.get(AFTER_ENV, "20"))
    HopSession._reply = wrap(HopSession._reply, after)  # type: ignore[method-assign,assignment]
