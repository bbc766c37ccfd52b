"""The README's pictures of the tracker's chat page, taken by the browser its tests use.

    python -m tests.e2e.chat_screenshots [OUT_DIR]   # default assets/screenshots

Starts a real tracker and two real node processes on the default model (layers
0–15 and 15–30, as tests/e2e/conftest.py), waits for the recipe to be certified,
opens /chat in headless Chromium, asks one question at temperature 0, lets the
answer stream to its end and writes chat-desktop.png and chat-phone.png.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from selenium.webdriver.common.by import By

from tests.tracker_service.browser import DESKTOP, PHONE, chromium, missing_browser, set_viewport
from tests.tracker_service.chat_browser import last, models_shown, send
from tests.tracker_service.status_screenshots import full_page_png

log = logging.getLogger(__name__)
REPO = Path(__file__).resolve().parents[2]
QUESTION = "What is the capital of France? Answer in two sentences."
SHOTS = {"chat-desktop.png": (DESKTOP, False), "chat-phone.png": (PHONE, True)}


def until(check: Any, what: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.2)


def converse(
    driver: Any, url: str, question: str, temperature: str | None, timeout_s: float = 300.0
) -> None:
    """Open the chat page, ask `question` of the first model (at `temperature`, typed into
    its field; None: the page's default) and wait for the whole answer."""
    driver.get(url + "/chat")
    until(lambda: any(models_shown(driver)), "the model list", 60)
    if temperature is not None:
        field = driver.find_element(By.ID, "temperature")
        field.clear()
        field.send_keys(temperature)
    send(driver, question)
    until(lambda: last(driver, "assistant")["state"] == "done", "the answer", timeout_s)


def take_screenshots(
    driver: Any, url: str, out_dir: Path, question: str = QUESTION, temperature: str | None = "0"
) -> list[Path]:
    """Each screen size: the page with one question answered, as a PNG. Temperature 0 by
    default: the same answer at both sizes, the model's most likely one."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, ((width, height), mobile) in SHOTS.items():
        set_viewport(driver, width, height, mobile=mobile)
        converse(driver, url, question, temperature)
        driver.execute_script("document.activeElement.blur()")  # no focus ring in the picture
        path = out_dir / name
        path.write_bytes(full_page_png(driver, width, height, mobile=mobile))
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", type=Path, default=REPO / "assets" / "screenshots")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    why = missing_browser()
    if why is not None:
        print(f"cannot take screenshots: {why}", file=sys.stderr)
        return 2
    from app.demo.processes import start_node, start_tracker
    from core.models.default_model import ensure_default_model

    model_dir = ensure_default_model(REPO / ".meshnet" / "test-cache" / "models")
    with tempfile.TemporaryDirectory() as home:
        workdir = Path(home)
        tracker, url = start_tracker(workdir, lambda name, line: None, heartbeat_s=1.0)
        children = [tracker]
        try:
            for index, layers in enumerate([(0, 15), (15, 30)], start=1):
                children.append(
                    start_node(index, workdir, url, model_dir, layers, lambda name, line: None)
                )
            until(
                lambda: any(
                    r["status"] == "certified"
                    for r in httpx.get(url + "/api/v1/state", timeout=5).json()["recipes"]
                ),
                "the recipe to be certified",
                300,
            )
            with chromium() as driver:
                for path in take_screenshots(driver, url, args.out_dir):
                    log.info("wrote %s", path)
        finally:
            for child in reversed(children):
                child.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
