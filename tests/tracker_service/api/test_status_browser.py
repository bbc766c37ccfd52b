"""The tracker's status page in a real headless Chromium (Debian's, via Selenium).

A real tracker process on loopback with signed simulated nodes (status_scene.py):
the page shows recipes dark and certified, models healthy and broken, and nodes;
it redraws itself while a node joins and leaves; the console stays clean; the
Content-Security-Policy is strict and the browser enforces it; it reads on a
phone. Skipped, saying why, where Chromium is missing; under CI it fails instead.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.tracker_service.browser import (
    DESKTOP,
    PHONE,
    chromium,
    console_problems,
    missing_browser,
    set_viewport,
)
from tests.tracker_service.conftest import register
from tests.tracker_service.helpers import OTHER_CONTENT, FakeNode, identity_block
from tests.tracker_service.status_scene import (
    CERTIFIED_RECIPE,
    DARK_AXES,
    DARK_RECIPE,
    Scene,
    status_scene,
    wait_for,
)
from tests.tracker_service.status_screenshots import take_screenshots

# What a reader sees, read out of the DOM (not the JSON the page fetched).
READ_PAGE = """
const text = (e) => e.innerText.replace(/\\s+/g, " ").trim();
return {
  live: text(document.getElementById("live-count")),
  models: [...document.querySelectorAll("#models article")].map((card) => ({
    card: card.className,
    recipe: text(card.querySelector("p")),
    detail: text(card.querySelector(".detail")),
  })),
  recipes: [...document.querySelectorAll("#recipes tr")].map((row) => [...row.cells].map(text)),
  nodes: [...document.querySelectorAll("#nodes tr")].map((row) => ({
    row: row.className, cells: [...row.cells].map(text),
  })),
};
"""

# Every piece of text must lie inside the viewport and inside any box that clips it.
CLIPPED_TEXT = """
const out = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  if (!node.textContent.trim() || !node.parentElement.getClientRects().length) continue;
  const range = document.createRange();
  range.selectNodeContents(node);
  for (const rect of range.getClientRects()) {
    let clip = { left: 0, right: window.innerWidth };
    for (let e = node.parentElement; e; e = e.parentElement) {
      if (getComputedStyle(e).overflowX !== "visible") {
        const box = e.getBoundingClientRect();
        clip = { left: Math.max(clip.left, box.left), right: Math.min(clip.right, box.right) };
      }
    }
    if (rect.left < clip.left - 1 || rect.right > clip.right + 1) {
      out.push(`${node.textContent.trim().slice(0, 40)} at ${rect.left}-${rect.right}`);
    }
  }
  const size = parseFloat(getComputedStyle(node.parentElement).fontSize);
  if (size < 12) out.push(`${node.textContent.trim().slice(0, 40)} in ${size}px type`);
}
return out;
"""


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scene]:
    why = missing_browser()
    if why is not None:
        if _in_ci():  # CI installs it (.ci/install-browser.sh): a missing browser is a failure
            pytest.fail(f"CI must run the status page in a browser: {why}")
        pytest.skip(why)
    with status_scene(tmp_path_factory.mktemp("status-page")) as built:
        built.wait_reachable()
        yield built


@pytest.fixture(scope="module")
def driver(scene: Scene) -> Iterator[Any]:
    with chromium() as browser:
        yield browser


def _open(driver: Any, scene: Scene, size: tuple[int, int], *, mobile: bool = False) -> None:
    set_viewport(driver, *size, mobile=mobile)
    driver.get(scene.tracker.url + "/")
    assert driver.title == "MeshNet tracker"


def _page(driver: Any) -> Any:
    return driver.execute_script(READ_PAGE)


def _model(page: Any, recipe_id: str) -> Any:
    [card] = [m for m in page["models"] if m["recipe"].startswith(f"{recipe_id} ")]
    return card


def _node(page: Any, node_id: str) -> Any:
    [row] = [n for n in page["nodes"] if n["cells"][0] == node_id[:12]]
    return row


def _redrawn(driver: Any) -> bool:
    return driver.execute_script("return Boolean(document.body.dataset.updatedAt)")


def test_status_page_sends_a_strict_csp_and_has_no_inline_script_or_style(
    client: TestClient,
) -> None:
    register(client, FakeNode(), identity_block(0, 15))
    page = client.get("/")
    assert page.status_code == 200
    policy = dict(
        directive.strip().split(" ", 1)
        for directive in page.headers["content-security-policy"].split(";")
    )
    assert policy["default-src"] == "'self'"
    for kind in ("script-src", "style-src", "connect-src", "img-src"):
        assert policy[kind] == "'self'", kind
    for kind in ("object-src", "base-uri", "frame-ancestors", "form-action"):
        assert policy[kind] == "'none'", kind
    assert "unsafe" not in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page.text, re.S)
    assert scripts == [
        (' src="/static/status.js" defer', ""),
        (' src="/static/credits.js" defer', ""),
    ]
    assert "<style" not in page.text and " style=" not in page.text
    assert client.get("/static/status.js").headers["content-type"].startswith("text/javascript")


@pytest.mark.slow
def test_page_shows_recipes_models_and_nodes_and_redraws_as_a_node_joins_and_leaves(
    scene: Scene, driver: Any
) -> None:
    _open(driver, scene, DESKTOP)
    driver.get_log("browser")  # only this page's messages count below
    page = _page(driver)
    head, tail = scene.certified
    live = scene.state()["nodes_total_live"]
    assert page["live"] == str(live)
    assert _model(page, CERTIFIED_RECIPE)["card"] == "card healthy"
    assert "recipe certified" in _model(page, CERTIFIED_RECIPE)["recipe"]
    broken = _model(page, DARK_RECIPE)
    assert (broken["card"], broken["detail"]) == (
        "card broken",
        "layers 15–30 are owned by no Shard on the route",
    )
    assert "recipe dark" in broken["recipe"]
    recipes = {row[1].split(" v1")[0]: row for row in page["recipes"]}
    assert recipes[CERTIFIED_RECIPE][0] == "certified"
    assert "certified by route session rs-status-page" in recipes[CERTIFIED_RECIPE][3]
    assert recipes[DARK_RECIPE][0] == "dark"
    for node, layers in ((head, "0–15"), (tail, "15–30"), (scene.dark, "0–15")):
        row = _node(page, node.node_id)
        assert (row["row"], row["cells"][1], row["cells"][5]) == (
            "live",
            layers,
            "live · reachable",
        )

    driver.execute_script("window.meshnetNotReloaded = true")  # gone if the page reloads
    joiner = scene.add_node(15, 30, DARK_AXES)
    wait_for(lambda: _model(_page(driver), DARK_RECIPE)["card"] == "card healthy", "the join")
    page = _page(driver)
    assert page["live"] == str(live + 1)
    assert _model(page, DARK_RECIPE)["detail"] == "2 live node(s) cover all 30 layers"
    assert _node(page, joiner.node_id)["row"] == "live"

    joiner.leave(scene.client)
    wait_for(lambda: _model(_page(driver), DARK_RECIPE)["card"] == "card broken", "the leave")
    page = _page(driver)
    assert page["live"] == str(live)
    gone = _node(page, joiner.node_id)
    assert (gone["row"], gone["cells"][5]) == ("gone", "deregistered the node stopped cleanly")
    assert driver.execute_script("return window.meshnetNotReloaded") is True
    assert driver.find_element("id", "freshness").text.startswith("Updated ")
    assert console_problems(driver) == []


@pytest.mark.slow
def test_the_browser_enforces_the_csp_and_the_console_reports_the_refusal(
    scene: Scene, driver: Any
) -> None:
    _open(driver, scene, DESKTOP)
    driver.get_log("browser")
    driver.execute_script(
        """
        const script = document.createElement("script");
        script.append("window.meshnetInlineRan = true");
        document.head.append(script);
        const style = document.createElement("style");
        style.append("main { display: none }");
        document.head.append(style);
        """
    )
    assert driver.execute_script("return window.meshnetInlineRan") is None
    assert driver.find_element("tag name", "main").is_displayed()
    refusals = console_problems(driver)
    assert all(line.startswith("SEVERE: security") for line in refusals), refusals
    said = " ".join(refusals)  # the script by Trusted Types, the style by style-src
    assert "requires 'TrustedScript'" in said and "directive 'style-src 'self''" in said


def _served_and_redrawn(driver: Any, scene: Scene) -> tuple[str, str]:
    """The page's main text as the template rendered it and as status.js redrew it."""

    def main_text(javascript: bool) -> str:
        driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": not javascript})
        _open(driver, scene, DESKTOP)
        if javascript:
            wait_for(lambda: _redrawn(driver), "the page's first refresh")
        else:
            assert not _redrawn(driver)  # the template's rendering, untouched by status.js
        return re.sub(r"\d+ s ago", "N s ago", driver.find_element("tag name", "main").text)

    # The tracker's own work (a certification attempt, a re-dial) may change the state
    # between the two loads; a real difference between the renderings never settles.
    try:
        for _attempt in range(5):
            served, redrawn = main_text(False), main_text(True)
            if redrawn == served:
                break
    finally:
        driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})
    return served, redrawn


@pytest.mark.slow
def test_script_redraws_the_same_page_the_server_rendered(scene: Scene, driver: Any) -> None:
    served, redrawn = _served_and_redrawn(driver, scene)
    assert redrawn == served
    assert console_problems(driver) == []


@pytest.mark.slow
def test_a_relayed_nodes_own_reason_is_served_and_redrawn_alike(scene: Scene, driver: Any) -> None:
    why = "the tracker could not dial this node directly (no answer <within 3 s>)"
    node = scene.add_relayed_node(15, 30, why)
    relay = f"ws{scene.tracker.url.removeprefix('http')}/relay"
    try:
        wait_for(
            lambda: any(
                n["node_id"] == node.node_id and n["reachability"] == "unreachable"
                for n in scene.state()["nodes"]
            ),
            "the tracker to dial the relayed node (no link: unreachable)",
        )
        served, redrawn = _served_and_redrawn(driver, scene)
    finally:
        node.leave(scene.client)
    assert redrawn == served
    shown = f"Serving through a relay: {why}; clients reach it through {relay}"
    assert shown in served
    assert console_problems(driver) == []


@pytest.mark.slow
@pytest.mark.parametrize(("size", "mobile"), [(PHONE, True), (DESKTOP, False)])
def test_page_fits_the_screen_with_no_clipped_text(
    scene: Scene, driver: Any, size: tuple[int, int], mobile: bool
) -> None:
    _open(driver, scene, size, mobile=mobile)
    for when in ("served", "redrawn"):
        width = driver.execute_script("return [document.documentElement.scrollWidth, innerWidth]")
        assert width == [size[0], size[0]], when  # no sideways scrolling
        assert driver.execute_script(CLIPPED_TEXT) == [], when
        wait_for(lambda: _redrawn(driver), "the page's first refresh")
    assert console_problems(driver) == []


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", header[16:24])
    return width, height


@pytest.mark.slow
def test_screenshot_script_writes_the_whole_page_at_desktop_and_phone_width(
    scene: Scene, driver: Any, tmp_path: Path
) -> None:
    desktop, phone = take_screenshots(driver, scene.tracker.url + "/", tmp_path)
    assert desktop.name == "tracker-status-desktop.png" and phone.name.endswith("phone.png")
    width, height = _png_size(desktop)
    assert width == DESKTOP[0] and height >= DESKTOP[1]
    width, height = _png_size(phone)
    assert width == 2 * PHONE[0] and height > 2 * PHONE[1]  # retina, and longer than a screen


@pytest.mark.slow
def test_a_failed_refresh_says_so_and_the_next_one_recovers(scene: Scene, driver: Any) -> None:
    _open(driver, scene, DESKTOP)
    freshness = driver.find_element("id", "freshness")
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/api/v1/state*"]})
    try:
        wait_for(lambda: freshness.text.startswith("Cannot reach the tracker"), "the failure")
        assert "stale" in freshness.get_attribute("class")
        assert driver.find_element("id", "models").text  # the last state stays on screen
    finally:
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    wait_for(lambda: freshness.text.startswith("Updated "), "the recovery")
    assert "stale" not in freshness.get_attribute("class")
    driver.get_log("browser")  # the blocked fetches were logged as errors, as they should be


@pytest.mark.slow
def test_markup_in_a_nodes_identity_shows_as_text_served_and_redrawn(
    scene: Scene, driver: Any
) -> None:
    # A stranger's node chooses its artifact and recipe names; the tracker stores them as given.
    artifact = '<img src=x onerror="window.meshnetPwned = 1">'
    recipe = "</td><script>window.meshnetPwned = 2</script>"
    # Other weights: a new ledger row, so the names show in Models and Recipes too.
    names = {"artifact_id": artifact, "content_digest": OTHER_CONTENT}
    node = scene.add_node(0, 30, {"recipe_id": recipe}, names)
    injected = "return document.querySelectorAll('main img, main script').length"
    try:
        for javascript in (False, True):
            driver.execute_cdp_cmd(
                "Emulation.setScriptExecutionDisabled", {"value": not javascript}
            )
            _open(driver, scene, DESKTOP)
            if javascript:
                wait_for(lambda: _redrawn(driver), "the page's first refresh")
            text = driver.find_element("tag name", "main").text
            for shown in (f"{artifact} healthy", f"{recipe} v1 · 30 layers", f"dark {recipe} v1"):
                assert shown in text, (javascript, shown)
            assert driver.execute_script(injected) == 0
            assert driver.execute_script("return window.meshnetPwned") is None
    finally:
        driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})
        node.leave(scene.client)
    assert console_problems(driver) == []
