"""Debian's headless Chromium under Selenium, offline: for the status page's test and
its README screenshots (tests/tracker_service/status_screenshots.py).

Selenium Manager is told never to download a driver or a browser: the driver is
Debian's ``chromedriver``, the browser Debian's ``chromium`` (.ci/install-browser.sh).
Chromium's own background traffic (component updates, sync, QUIC probes) is turned
off; on a closed network its refused connections would otherwise fill the log.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser")
CHROMEDRIVER = "chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",  # screenshots without a scrollbar gutter
)
DESKTOP = (1280, 900)
PHONE = (390, 844)  # an iPhone 12–15's CSS viewport


def missing_browser() -> str | None:
    """Why the browser cannot run here, or None when it can."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    if not any(shutil.which(name) for name in CHROMIUM_NAMES):
        return "chromium is not installed; run .ci/install-browser.sh (Debian: chromium)"
    if shutil.which(CHROMEDRIVER) is None:
        return "chromedriver is not installed; run .ci/install-browser.sh (Debian: chromium-driver)"
    return None


@contextmanager
def chromium() -> Iterator[Any]:
    """A fresh headless Chromium (its own profile, deleted after) driven by Selenium.

    The driver keeps the page's console log (``driver.get_log("browser")``).
    """
    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager: use what is installed, fetch nothing
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = next(filter(None, map(shutil.which, CHROMIUM_NAMES)))
    driver_path = shutil.which(CHROMEDRIVER)
    assert binary is not None and driver_path is not None, missing_browser()
    with tempfile.TemporaryDirectory(prefix="meshnet-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = binary
        for flag in FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={profile}")
        options.add_argument(f"--window-size={DESKTOP[0]},{DESKTOP[1]}")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
        try:
            yield driver
        finally:
            driver.quit()


def set_viewport(driver: Any, width: int, height: int, *, mobile: bool) -> None:
    """Emulate a screen: with ``mobile`` the page's viewport meta decides its width,
    as on a phone (without it, a phone lays a page out 980 px wide and zooms out)."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {
            "width": width,
            "height": height,
            "deviceScaleFactor": 2 if mobile else 1,
            "mobile": mobile,
        },
    )


def console_problems(driver: Any) -> list[str]:
    """The page's console errors and warnings since the last call (CSP violations among them)."""
    return [
        f"{entry['level']}: {entry['message']}"
        for entry in driver.get_log("browser")
        if entry["level"] in ("SEVERE", "WARNING")
    ]
