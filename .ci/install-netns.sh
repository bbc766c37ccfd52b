#!/usr/bin/env bash
# What the relay's proof needs to build its own "home router": network namespaces
# and veth pairs (iproute2) and a firewall inside the namespace (nftables).
# Idempotent; all output on stderr.
set -euo pipefail

PACKAGES=(iproute2 nftables)
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
