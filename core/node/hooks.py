"""The callback shapes the lifecycle hands its parts, so no part needs the lifecycle itself."""

from __future__ import annotations

from typing import Any, Protocol

from core.events import Gate, GateState


class GateFn(Protocol):
    """Publish one gate event (``Node.gate``)."""

    def __call__(
        self,
        gate: Gate,
        gate_state: GateState,
        message: str,
        reason: str | None = None,
        **data: Any,
    ) -> None: ...


class MoveFn(Protocol):
    """Serve ``layers`` instead, proven afresh; False when the node did not move."""

    def __call__(self, layers: tuple[int, int], sentence: str, /) -> bool: ...
