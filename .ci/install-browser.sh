#!/usr/bin/env bash
# Debian's Chromium and its driver for the tracker status page's browser test
# (tests/tracker_service/api/test_status_browser.py, driven by Selenium with this
# chromedriver: Selenium Manager downloads nothing). Idempotent; all output on stderr.
set -euo pipefail

PACKAGES=(chromium chromium-driver)
missing=()
for pkg in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "installing ${missing[*]} from Debian packages..." >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update >&2
    apt-get install -y --no-install-recommends "${missing[@]}" >&2
fi
