"""What the tests read from a node process's JSON event lines."""

from __future__ import annotations

REGISTERED = "registered as "


def registered_node_id(line: object) -> str | None:
    """The node id a registration event names ("registered as <id>"), else None."""
    if not isinstance(line, dict) or line.get("gate") != "registration":
        return None
    message = str(line.get("message", ""))
    return message.removeprefix(REGISTERED).strip() if message.startswith(REGISTERED) else None
