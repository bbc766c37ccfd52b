"""What the chat page's browser tests share: the skip rule, reading the conversation
out of the DOM, sending a message as a person does, and a stand-in gateway.

The stand-in replaces the page's ``fetch`` for ``/v1/models`` and
``/v1/chat/completions`` before the page's own scripts run (Chrome DevTools'
``Page.addScriptToEvaluateOnNewDocument``), so a test chooses what a "model"
answers: markup, a stream that never ends, an error. Everything after the
``fetch`` (the server-sent-event reader, the markdown renderer, the DOM) is the
page's own code. The tests with real nodes (tests/e2e/test_chat_page_browser.py)
use the real gateway.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.tracker_service.browser import missing_browser


def require_browser() -> None:
    """Skip, saying why, where Chromium is missing; under CI fail instead (as the status
    page's test does)."""
    why = missing_browser()
    if why is None:
        return
    if os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
        pytest.fail(f"CI must run the chat page in a browser: {why}")
    pytest.skip(why)


# The conversation as a reader sees it: one entry per message, in order.
READ_LOG = """
return [...document.querySelectorAll("#log article")].map((a) => ({
  role: a.classList.contains("user") ? "user" : "assistant",
  who: a.querySelector(".who").textContent,
  text: a.querySelector(".text").textContent,
  state: a.dataset.state || "",
  note: a.querySelector(".meta").hidden ? "" : a.querySelector(".meta").textContent,
  unsent: a.classList.contains("unsent"),
}));
"""

# Elements an answer or a message could smuggle in; none may ever appear.
INJECTED = "return document.querySelectorAll('#log img, #log script, #log iframe, #log svg').length"


def read_log(driver: Any) -> list[dict[str, Any]]:
    return list(driver.execute_script(READ_LOG))


def last(driver: Any, role: str) -> dict[str, Any]:
    return [m for m in read_log(driver) if m["role"] == role][-1]


def models_shown(driver: Any) -> list[str]:
    return list(
        driver.execute_script(
            "return [...document.querySelectorAll('#model option')].map((o) => o.value)"
        )
    )


def send(driver: Any, text: str) -> None:
    """Type into the message box and press Enter, as a person does."""
    box = driver.find_element(By.ID, "prompt")
    box.clear()
    box.send_keys(text)
    box.send_keys(Keys.ENTER)


FAKE_GATEWAY = (Path(__file__).parent / "chat_fake_gateway.js").read_text()


@contextmanager
def fake_gateway(
    driver: Any,
    *,
    models: tuple[str, ...] = ("tests/stand-in",),
    pieces: tuple[str, ...] = (),
    forever: bool = False,
    silent: bool = False,
    finish: str = "stop",
    status: int = 200,
    error: dict[str, Any] | None = None,
) -> Iterator[None]:
    """Pages loaded inside this block talk to a stand-in gateway that answers ``pieces``;
    ``forever``: then goes on (a word every 50 ms, none if ``silent``) until aborted."""
    config = {
        "models": list(models),
        "pieces": list(pieces),
        "forever": forever,
        "silent": silent,
        "finish": finish,
        "status": status,
        "error": error,
    }
    added = driver.execute_cdp_cmd(
        "Page.addScriptToEvaluateOnNewDocument",
        {"source": f"window.meshnetFakeConfig = {json.dumps(config)};\n{FAKE_GATEWAY}"},
    )
    try:
        yield
    finally:
        driver.execute_cdp_cmd(
            "Page.removeScriptToEvaluateOnNewDocument", {"identifier": added["identifier"]}
        )
