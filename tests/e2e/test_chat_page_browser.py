"""The chat page against real processes: a tracker and two node processes serving the
default model (tests/e2e/conftest.py's cluster), in Debian's headless Chromium.

A person picks the served model, sends a message and sees the answer grow as the
nodes compute it, stops it (and the nodes' route sessions close), sends again and
gets a whole answer; their message full of markup shows as text; the console stays
clean. Skipped, saying why, where Chromium is missing; under CI it fails instead.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium.webdriver.common.by import By

from core.dataplane.tls import pinned_client_context
from tests.e2e.chat_screenshots import SHOTS, take_screenshots
from tests.e2e.conftest import Cluster
from tests.tracker_service.browser import DESKTOP, chromium, console_problems, set_viewport
from tests.tracker_service.chat_browser import (
    INJECTED,
    last,
    models_shown,
    read_log,
    require_browser,
    send,
)
from tests.tracker_service.status_scene import wait_for

pytestmark = pytest.mark.slow

LONG_QUESTION = "Write a long story about a dragon who learns to cook. Make it very detailed."
HOSTILE = '<img src=x onerror="window.meshnetPwned = 1"> What is two plus two?'
ANSWER_S = 300.0  # a whole answer (up to the gateway's 512 tokens) on a loaded machine


@pytest.fixture(scope="module")
def driver(cluster: Cluster) -> Iterator[Any]:
    require_browser()
    with chromium() as browser:
        yield browser


def _served_model(cluster: Cluster) -> str:
    state = cluster.state()
    return str(next(r for r in state["recipes"] if r["status"] == "certified")["artifact_id"])


def _open_sessions(cluster: Cluster) -> list[int]:
    counts = []
    for node in cluster.state()["nodes"]:
        if node["live"]:
            # The data plane is https:// with a self-signed certificate (docs/wire.md#tls).
            base = node["endpoint"].replace("wss://", "https://").replace("ws://", "http://")
            reply = httpx.get(base + "/v1/health", timeout=5, verify=pinned_client_context())
            counts.append(int(reply.json()["open_sessions"]))
    return counts


def test_send_stream_stop_and_send_again_with_real_nodes(cluster: Cluster, driver: Any) -> None:
    set_viewport(driver, *DESKTOP, mobile=False)
    driver.get(cluster.url + "/chat")
    driver.get_log("browser")  # only this page's messages count below
    model = _served_model(cluster)
    wait_for(lambda: models_shown(driver) == [model], "the served model in the list", 60)
    assert not driver.find_element(By.ID, "key-field").is_displayed()  # loopback, no keys

    send(driver, LONG_QUESTION)
    # Streaming: the answer is seen partly written, then longer, before it ends.
    wait_for(lambda: len(last(driver, "assistant")["text"]) > 0, "the first words", ANSWER_S)
    first = last(driver, "assistant")
    assert first["state"] == "streaming" and first["who"] == model, first
    wait_for(lambda: len(last(driver, "assistant")["text"]) > len(first["text"]), "more words", 60)
    assert last(driver, "assistant")["state"] == "streaming"
    wait_for(lambda: sum(_open_sessions(cluster)) > 0, "the nodes to hold the route", 10)
    driver.find_element(By.ID, "stop").click()
    wait_for(lambda: last(driver, "assistant")["state"] == "stopped", "the stop", 30)
    stopped = last(driver, "assistant")
    assert stopped["note"] == "Stopped." and stopped["text"].startswith(first["text"].rstrip())
    # Stop aborts the request; the gateway ends the route on every node.
    wait_for(lambda: sum(_open_sessions(cluster)) == 0, "the nodes to close the route", 30)

    send(driver, HOSTILE)
    wait_for(lambda: last(driver, "assistant")["state"] == "done", "the second answer", ANSWER_S)
    log = read_log(driver)
    assert [m["role"] for m in log] == ["user", "assistant", "user", "assistant"]
    assert [m["state"] for m in log if m["role"] == "assistant"] == ["stopped", "done"]
    assert log[2]["text"] == HOSTILE  # shown as typed, markup and all
    assert log[3]["text"].strip(), "the second answer is empty"
    assert driver.execute_script(INJECTED) == 0
    assert driver.execute_script("return window.meshnetPwned") is None
    assert console_problems(driver) == []


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", header[16:24])
    return width, height


def test_screenshot_script_writes_an_answered_chat_at_desktop_and_phone_width(
    cluster: Cluster, driver: Any, tmp_path: Path
) -> None:
    paths = take_screenshots(driver, cluster.url, tmp_path, "Say hello.")
    assert [p.name for p in paths] == list(SHOTS)
    for path, ((width, height), mobile) in zip(paths, SHOTS.values(), strict=True):
        scale = 2 if mobile else 1
        assert _png_size(path) == (width * scale, height * scale)
    assert last(driver, "assistant")["text"].strip()
    assert console_problems(driver) == []
