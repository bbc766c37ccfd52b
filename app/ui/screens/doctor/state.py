"""What the doctor wizard's pages share: the state along the way and narrow types."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from app.texts import number, text

# Builds a ``meshnet-node`` command line from its arguments (app.ui.json_child.node_argv).
NodeCommand = Callable[..., list[str]]


class Controller(Protocol):
    """What the wizard needs of app.ui.controller.NodeController."""

    @property
    def running(self) -> bool: ...
    def start(self, report_path: str | None = None) -> None: ...


@dataclass
class WizardState:
    """What the pages found and chose, shared along the way."""

    model: str | None = None
    tracker_url: str | None = None  # set: the layers page asks it which range the swarm needs
    device: str | None = None
    memory_cap_mb: int | None = None
    layers: tuple[int, int] | None = None
    hardware: dict[str, Any] | None = None
    report: dict[str, Any] | None = None
    report_path: str | None = None
    error: str | None = None  # the doctor could not run at all
    sample: bool = False  # screenshot mode: never start a child
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def layer_count(self) -> int | None:
        model = (self.hardware or {}).get("model") or {}
        count = model.get("layer_count")
        return count if isinstance(count, int) else None

    def node_options(self) -> list[str]:
        """``--model/--device/--memory-cap-mb`` as chosen so far."""
        options: list[str] = []
        if self.model:
            options += ["--model", self.model]
        if self.device:
            options += ["--device", self.device]
        if self.memory_cap_mb:
            options += ["--memory-cap-mb", str(self.memory_cap_mb)]
        return options


def gigabytes(n: Any) -> str:
    if not isinstance(n, int | float):
        return text("size.unknown")
    return text("size.gb", size=number(n / 1e9, 1))
