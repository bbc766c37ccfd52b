#!/usr/bin/env bash
# A real X server with a real system tray for the app's one desktop test:
# Debian's Xvfb and trayer, the xcb libraries Qt's "xcb" platform plugin loads
# (it names any missing one when it fails), desktop-file-validate for the
# autostart and menu entries (its dpkg trigger also registers the .deb's meshnet://
# handler), and xdg-mime, which the installers' proof asks for that handler.
# Idempotent; all output on stderr.
set -euo pipefail

PACKAGES=(xvfb trayer xdotool x11-utils libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 desktop-file-utils xdg-utils)
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
