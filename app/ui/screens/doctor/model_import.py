"""The doctor wizard's import page: ``meshnet-node models import-default --json``."""

from __future__ import annotations

import json

from app.node_command import STDIN_CONTROL
from app.texts import text
from app.ui.screens.doctor.child_page import ChildPage
from app.ui.screens.doctor.state import NodeCommand, WizardState


class ImportPage(ChildPage):
    # A cancelled import stops at its next progress point and removes its staging
    # folder; writing the model's one big file has none, and on a busy machine it can
    # take longer than the default 8 s. Killed half-way, it would leave the folder.
    kill_after_s = 60.0

    def __init__(self, state: WizardState, node_command: NodeCommand) -> None:
        super().__init__(state, node_command, text("import.title"))
        self.cancel_button.setText(text("import.cancel"))
        self.layout_.addStretch(1)

    def argv(self) -> list[str]:
        return self.node_command("models", "import-default", "--json", *STDIN_CONTROL)

    def before_start(self) -> None:
        self.status.setText(text("import.preparing"))

    def on_finished(self, exit_code: int, stdout: str) -> bool:
        try:
            result = json.loads(stdout) if stdout.strip() else None
        except json.JSONDecodeError:
            result = None
        if exit_code != 0 or not isinstance(result, dict):
            self.status.setText(text("import.failed"))
            self.status.setToolTip(self.last_error_sentence(""))
            return False
        model = dict((self.state.hardware or {}).get("model") or {})
        model["imported"] = True
        self.state.hardware = {**(self.state.hardware or {}), "model": model}
        self.status.setText(text("import.ready"))
        return True

    def on_cancelled(self) -> None:
        self.status.setText(text("import.cancelled"))
