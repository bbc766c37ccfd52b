"""The hosted tracker of docs/operators.md as real processes: Debian's nginx running the
repository's site file (installers/tracker/nginx-meshnet-tracker.conf) with only its
ports and certificate paths substituted, tracker replicas started with the systemd
unit's ExecStart and the example env file, and the relay with its unit's ExecStart."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.support.tracker_serve import REPO, free_port

TRACKER_FILES = REPO / "installers" / "tracker"
SITE = TRACKER_FILES / "nginx-meshnet-tracker.conf"
UNIT = TRACKER_FILES / "meshnet-tracker.service"
RELAY_UNIT = TRACKER_FILES / "meshnet-relay.service"
ENV_FILE = TRACKER_FILES / "meshnet-tracker.env"
INSTALLED_COMMAND = "/opt/meshnet/venv/bin/meshnet-tracker"


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if Path(p).is_file()), None
    )


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def substituted(text: str, replacements: Mapping[str, str]) -> str:
    """``text`` with each key replaced; a key the file no longer holds fails loudly, so
    the test cannot drift into running a configuration the guide does not show."""
    for old, new in replacements.items():
        assert old in text, f"{SITE.name} no longer contains {old!r}"
        text = text.replace(old, new)
    return text


def exec_start(unit: Path) -> list[str]:
    """The unit's ExecStart, with the installed command run from this checkout."""
    [line] = [ln for ln in unit.read_text().splitlines() if ln.startswith("ExecStart=")]
    argv = shlex.split(line.removeprefix("ExecStart="))
    assert argv[0] == INSTALLED_COMMAND, argv
    return [sys.executable, "-m", "tracker_service.cli", *argv[1:]]


def env_file(path: Path) -> dict[str, str]:
    """KEY=VALUE lines as systemd's EnvironmentFile= reads this file."""
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            value = value.strip()
            if len(value) > 1 and value[0] == value[-1] == '"':
                value = value[1:-1]
            values[key.strip()] = value
    return values


class Process:
    def __init__(self, name: str, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.name, self.log = name, log
        with log.open("ab") as out:
            self.popen = subprocess.Popen(
                argv, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT
            )

    def alive(self) -> bool:
        return self.popen.poll() is None

    def wait_http(self, url: str, timeout_s: float = 90.0, **kw: object) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            assert self.alive(), f"{self.name} exited: {self.log.read_text()[-3000:]}"
            try:
                httpx.get(url, timeout=2, **kw)  # type: ignore[arg-type]
                return
            except httpx.HTTPError:
                assert time.monotonic() < deadline, f"{self.name} never answered at {url}"
                time.sleep(0.2)

    def kill9(self) -> None:
        self.popen.send_signal(signal.SIGKILL)
        self.popen.wait(10)

    def stop(self) -> None:
        if self.alive():
            self.popen.terminate()
            try:
                self.popen.wait(15)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)


@dataclass
class Ports:
    https: int
    http: int
    replicas: tuple[int, int]
    relay: int

    @classmethod
    def free(cls) -> Ports:
        return cls(free_port(), free_port(), (free_port(), free_port()), free_port())


def render_nginx(folder: Path, ports: Ports, cert: Path, key: Path) -> Path:
    """The main nginx.conf of a private nginx (its own pid, logs and temp folders)
    that includes the repository's site with the test's values."""
    site = substituted(
        SITE.read_text(),
        {
            "127.0.0.1:8765": f"127.0.0.1:{ports.replicas[0]}",
            "127.0.0.1:8767": f"127.0.0.1:{ports.replicas[1]}",
            "127.0.0.1:8766": f"127.0.0.1:{ports.relay}",
            "listen 443 ssl;": f"listen 127.0.0.1:{ports.https} ssl;",
            "listen [::]:443 ssl;": "",  # a test machine may have no IPv6
            "listen 80;": f"listen 127.0.0.1:{ports.http};",
            "listen [::]:80;": "",
            "/etc/letsencrypt/live/tracker.example.org/fullchain.pem": str(cert),
            "/etc/letsencrypt/live/tracker.example.org/privkey.pem": str(key),
        },
    )
    (folder / "site.conf").write_text(site)
    temp = {name: folder / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
    for path in temp.values():
        path.mkdir(exist_ok=True)
    # As root nginx's workers would drop to nobody, who cannot enter pytest's folders.
    user = "user root;\n" if os.geteuid() == 0 else ""
    main = folder / "nginx.conf"
    main.write_text(
        f"{user}worker_processes 1;\npid {folder / 'nginx.pid'};\n"
        f"error_log {folder / 'error.log'} info;\n"
        "events { worker_connections 512; }\n"
        "http {\n"
        f"    access_log {folder / 'access.log'};\n"
        f"    client_body_temp_path {temp['body']};\n    proxy_temp_path {temp['proxy']};\n"
        f"    fastcgi_temp_path {temp['fastcgi']};\n    uwsgi_temp_path {temp['uwsgi']};\n"
        f"    scgi_temp_path {temp['scgi']};\n"
        f"    include {folder / 'site.conf'};\n"
        "}\n"
    )
    return main


def start_nginx(nginx: str, folder: Path, main: Path) -> Process:
    check = subprocess.run(
        [nginx, "-t", "-p", str(folder), "-c", str(main)], capture_output=True, text=True
    )
    assert check.returncode == 0, f"nginx -t refused the site: {check.stderr}"
    return Process(
        "nginx",
        [nginx, "-p", str(folder), "-c", str(main), "-g", "daemon off;"],
        dict(os.environ),
        folder / "nginx.out",
    )


def replica_env(
    home: Path, port: int, db_url: str, public_url: str, signing_key: str
) -> dict[str, str]:
    """The example env file, with this replica's port, database, key and public URL."""
    values = env_file(ENV_FILE)
    values.update(
        {
            "MESHNET_TRACKER_PORT": str(port),
            "MESHNET_TRACKER_DATA_DIR": str(home / "tracker"),
            "MESHNET_TRACKER_DB": db_url,
            "MESHNET_TRACKER_SIGNING_KEY": signing_key,
            "MESHNET_TRACKER_PUBLIC_URL": public_url,
            "MESHNET_TRACKER_RELAY_URLS": public_url.replace("https://", "wss://") + "/relay",
            # The test's nodes listen on loopback, and beat fast so the test is short.
            "MESHNET_TRACKER_ALLOW_PRIVATE_ENDPOINTS": "true",
            "MESHNET_TRACKER_HEARTBEAT_INTERVAL_S": "1.0",
            # Its two nodes, one a range, are the test's own: they serve unchecked.
            "MESHNET_TRACKER_TRUST_LONE_RANGES": "true",
        }
    )
    return {**os.environ, **values, "MESHNET_HOME": str(home), "PYTHONPATH": str(REPO)}


def start_relay(folder: Path, port: int) -> Process:
    argv = exec_start(RELAY_UNIT)
    assert "8766" in argv, argv
    argv[argv.index("8766")] = str(port)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return Process("relay", argv, env, folder / "relay.log")
