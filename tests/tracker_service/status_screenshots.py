"""The README's pictures of the tracker's status page, taken by the browser its test uses.

    python -m tests.tracker_service.status_screenshots [OUT_DIR]   # default assets/screenshots

Starts the scene of status_scene.py (a real tracker on loopback, signed simulated
nodes: one model healthy on a certified recipe, one broken on a dark recipe, and a
node that joined and left), opens the page in headless Chromium and writes
tracker-status-desktop.png and tracker-status-phone.png, each the whole page.
"""

from __future__ import annotations

import argparse
import base64
import logging
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.tracker_service.browser import DESKTOP, PHONE, chromium, missing_browser, set_viewport
from tests.tracker_service.status_scene import DARK_AXES, status_scene

log = logging.getLogger(__name__)
REPO = Path(__file__).resolve().parents[2]
SHOTS = {"tracker-status-desktop.png": (DESKTOP, False), "tracker-status-phone.png": (PHONE, True)}


def full_page_png(driver: Any, width: int, height: int, *, mobile: bool) -> bytes:
    """The whole page at this viewport width, not only what fits on one screen."""
    set_viewport(driver, width, height, mobile=mobile)
    page_height = int(driver.execute_script("return document.documentElement.scrollHeight"))
    set_viewport(driver, width, max(height, page_height), mobile=mobile)
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
    set_viewport(driver, width, height, mobile=mobile)
    return base64.b64decode(shot["data"])


def take_screenshots(driver: Any, url: str, out_dir: Path) -> list[Path]:
    """Load the page once per screen size and write each whole page as a PNG."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, ((width, height), mobile) in SHOTS.items():
        set_viewport(driver, width, height, mobile=mobile)
        driver.get(url)
        path = out_dir / name
        path.write_bytes(full_page_png(driver, width, height, mobile=mobile))
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", type=Path, default=REPO / "assets" / "screenshots")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
    why = missing_browser()
    if why is not None:
        print(f"cannot take screenshots: {why}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as home, status_scene(Path(home), refresh_s=5) as scene:
        # A node that came and went: the nodes table shows it greyed, deregistered.
        scene.add_node(15, 30, DARK_AXES).leave(scene.client)
        scene.wait_reachable()
        with chromium() as driver:
            for path in take_screenshots(driver, scene.tracker.url + "/", args.out_dir):
                log.info("wrote %s", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
