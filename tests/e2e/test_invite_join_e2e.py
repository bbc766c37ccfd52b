"""A headless contributor joins with an invite: real processes on loopback.

The operator makes an invite on a private tracker (`meshnet-tracker invite create --json`),
the contributor runs `meshnet-node join LINK` and then `meshnet-node run` without
--tracker, and the node serves the real default model on the joined network.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from app.demo.processes import Child, child_env, start_tracker

pytestmark = pytest.mark.slow


def _run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_join_with_an_invite_then_run_without_tracker_serves_on_the_network(
    default_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines: list[tuple[str, object]] = []
    monkeypatch.setenv("MESHNET_TRACKER_PRIVATE", "true")  # joining needs the invite's token
    monkeypatch.setenv("MESHNET_TRACKER_NETWORK_NAME", "Loopback Llamas")
    monkeypatch.setenv("MESHNET_TRACKER_NETWORK_OPERATOR", "Test Operator")
    tracker, url = start_tracker(tmp_path, lambda name, line: lines.append((name, line)))
    children = [tracker]
    try:
        operator_env = child_env(MESHNET_TRACKER_DATA_DIR=str(tmp_path / "tracker"))
        db = f"sqlite:///{tmp_path / 'tracker.db'}"
        created = _run(
            ["tracker_service.cli.commands", "invite", "create", "--db", db, "--tracker-url", url,
             "--label", "e2e", "--json"],
            operator_env,
        )  # fmt: skip
        assert created.returncode == 0, created.stderr
        invite = json.loads(created.stdout)
        page = httpx.get(invite["page"], timeout=10)
        assert page.status_code == 200 and "Loopback Llamas" in page.text

        home = tmp_path / "node-home"
        node_env = child_env(MESHNET_HOME=str(home))
        identity = ["--identity-file", str(home / "identity.key")]
        fingerprint = parse_qs(urlsplit(invite["link"]).query)["key"][0]
        forged = invite["link"].replace(fingerprint, "0" * 32)  # another tracker's key
        refused = _run(["app.cli.node", "join", forged, *identity], node_env)
        assert refused.returncode == 2 and "[tracker-key-mismatch]" in refused.stderr
        joined = _run(["app.cli.node", "join", invite["link"], *identity], node_env)
        assert joined.returncode == 0, joined.stderr
        assert "Joined Loopback Llamas, run by Test Operator" in joined.stdout
        assert "meshnet-node run" in joined.stdout
        saved = json.loads((home / "networks" / "default.json").read_text(encoding="utf-8"))
        assert saved["tracker_url"] == url and saved["join_token"].startswith("mnj_")

        argv = [
            sys.executable, "-m", "app.cli.node", "run",
            "--model", str(default_model_dir), "--device", "cpu", *identity,
            "--events", "json",
        ]  # fmt: skip
        node = Child(
            "node",
            argv,
            node_env,
            tmp_path / "node.log",
            lambda name, line: lines.append((name, line)),
        )
        children.append(node)
        deadline = time.monotonic() + 300.0
        serving = False
        while time.monotonic() < deadline and not serving:
            assert node.exited is None, f"the node exited with {node.exited}: {lines[-10:]}"
            serving = any(
                name == "node" and isinstance(line, dict) and line.get("state") == "serving"
                for name, line in list(lines)
            )
            time.sleep(0.5)
        assert serving, f"the node never served; last lines: {lines[-10:]}"
        state = httpx.get(url + "/api/v1/state", timeout=10).json()
        assert [n["live"] for n in state["nodes"]] == [True]
    finally:
        for child in reversed(children):
            child.stop()
