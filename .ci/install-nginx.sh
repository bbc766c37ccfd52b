#!/usr/bin/env bash
# Debian's nginx for the hosted tracker's proof (tests/e2e/test_hosted_tracker.py runs
# installers/tracker/nginx-meshnet-tracker.conf in a private nginx; the system's own
# nginx service is not started). Idempotent; all output on stderr.
set -euo pipefail

if ! dpkg-query -W -f='${Status}' nginx 2>/dev/null | grep -q "install ok installed"; then
    echo "installing nginx from Debian packages..." >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update >&2
    # policy-rc.d may forbid starting the service; the test runs its own nginx anyway.
    apt-get install -y --no-install-recommends nginx >&2
fi
