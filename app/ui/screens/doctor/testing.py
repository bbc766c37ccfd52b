"""The doctor wizard's test page: a real test forward (``meshnet-node doctor --json``)."""

from __future__ import annotations

import json
from typing import Any

from app.node_command import STDIN_CONTROL
from app.texts import text
from app.ui.screens.doctor.child_page import ChildPage
from app.ui.screens.doctor.state import NodeCommand, WizardState


class TestPage(ChildPage):
    shows_node_messages = False  # "computes layers 0–30 correctly": the engineer's words

    def __init__(self, state: WizardState, node_command: NodeCommand) -> None:
        super().__init__(state, node_command, text("test.title"))
        self.cancel_button.setText(text("test.cancel"))
        self.layout_.addStretch(1)

    def argv(self) -> list[str]:
        start, end = self.state.layers or (0, 1)
        return self.node_command(
            "doctor",
            "--json",
            *STDIN_CONTROL,
            "--layers",
            f"{start}:{end}",
            *self.state.node_options(),
        )

    def before_start(self) -> None:
        self.state.report = self.state.report_path = self.state.error = None
        self.state.extra["log"] = []
        self.state.extra.pop("result_message", None)
        self.status.setText(text("test.running"))

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("kind")
        if kind == "report-saved":
            path = (event.get("data") or {}).get("path")
            self.state.report_path = str(path) if path else None
        elif kind == "result" and event.get("message"):
            self.state.extra["result_message"] = str(event["message"])
        super().on_event(event)

    def on_finished(self, exit_code: int, stdout: str) -> bool:
        """Exit 0 passed, 1 not passed (both with a report), 2 could not run."""
        return self.finish_test(exit_code, stdout)

    def finish_test(self, exit_code: int, stdout: str) -> bool:
        try:
            report = json.loads(stdout) if stdout.strip() else None
        except json.JSONDecodeError:
            report = None
        if isinstance(report, dict) and exit_code in (0, 1):
            self.state.report = report
        else:
            self.state.error = self.state.extra.get("result_message") or self.last_error_sentence(
                text("test.could-not-run")
            )
        self.status.setText(text("test.finished"))
        wizard = self.wizard()
        if wizard is not None and wizard.currentPage() is self:
            wizard.next()  # nothing to decide here: show the result at once
        return True

    def on_cancelled(self) -> None:
        self.status.setText(text("test.cancelled"))
