"""Child processes of the demo: the tracker and the nodes, started and stopped cleanly."""

from __future__ import annotations

import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx

from core.errors import MeshnetError

Line = Callable[[str, dict[str, object] | str], None]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Child:
    """One child process whose output lines are handed to ``on_line`` as they arrive."""

    def __init__(
        self, name: str, argv: Sequence[str], env: dict[str, str], log_path: Path, on_line: Line
    ) -> None:
        self.name = name
        self._log = log_path.open("w", encoding="utf-8")
        self.process = subprocess.Popen(
            list(argv),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            # Own process group: the terminal's Ctrl-C reaches the demo, which stops us in order.
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, args=(on_line,), daemon=True)
        self._reader.start()

    def _read(self, on_line: Line) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self._log.write(raw)
            self._log.flush()
            line = raw.rstrip("\n")
            try:
                parsed = json.loads(line)
            except ValueError:
                parsed = None
            on_line(self.name, parsed if isinstance(parsed, dict) else line)

    @property
    def exited(self) -> int | None:
        return self.process.poll()

    def stop(self, timeout_s: float = 15.0) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self._reader.join(timeout=2)
        self._log.close()


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def start_tracker(
    workdir: Path, on_line: Line, *, heartbeat_s: float = 2.0, trust_lone_ranges: bool = True
) -> tuple[Child, str]:
    """`trust_lone_ranges`: False runs the public default (a range one node holds
    serves no one until another can replay it)."""
    port = free_port()
    env = child_env(
        MESHNET_TRACKER_DATA_DIR=str(workdir / "tracker"),
        MESHNET_TRACKER_HEARTBEAT_INTERVAL_S=str(heartbeat_s),
    )
    db = f"sqlite:///{workdir / 'tracker.db'}"
    argv = [sys.executable, "-m", "tracker_service.cli", "serve", "--port", str(port), "--db", db]
    argv.append("--allow-private-endpoints")  # the demo's nodes listen on loopback
    # One person's network: the weights the demo certifies first serve under their name
    # (a public tracker allows its sources with `meshnet-tracker models allow`).
    argv.append("--trust-first-model-source")
    # ... and its nodes are all the demo's: each range one of them holds serves.
    if trust_lone_ranges:
        argv.append("--trust-lone-ranges")
    child = Child("tracker", argv, env, workdir / "tracker.log", on_line)
    url = f"http://127.0.0.1:{port}"
    wait_until_ready(url + "/api/v1/state", child)
    return child, url


def node_arguments(
    index: int,
    workdir: Path,
    tracker_url: str,
    model_dir: Path,
    layers: tuple[int, int] | None,
    extra: Sequence[str] = (),
    *,
    recipe_id: str | None = None,
) -> list[str]:
    """``meshnet-node``'s arguments (after the program) for node ``index`` of a network."""
    home = workdir / f"node-{index}"
    arguments = [
        "run",
        "--tracker", tracker_url,
        "--model", str(model_dir),
        *(["--layers", f"{layers[0]}:{layers[1]}"] if layers else []),
        # The demo's nodes keep their keys in its own folder: it runs on headless
        # machines with no OS keyring, and must not touch a real node's identity.
        "--identity-file", str(home / "identity.key"),
        "--events", "json",
        *extra,
    ]  # fmt: skip
    if recipe_id is not None:
        arguments += ["--recipe", recipe_id]
    return arguments


def start_node(
    index: int,
    workdir: Path,
    tracker_url: str,
    model_dir: Path,
    layers: tuple[int, int] | None,
    on_line: Line,
    extra: Sequence[str] = (),
    *,
    recipe_id: str | None = None,
) -> Child:
    """A node child; with ``layers=None`` it asks the tracker which layers to serve."""
    env = child_env(MESHNET_HOME=str(workdir / f"node-{index}"))
    arguments = node_arguments(
        index, workdir, tracker_url, model_dir, layers, extra, recipe_id=recipe_id
    )
    argv = [sys.executable, "-m", "app.cli.node", *arguments]
    return Child(f"node {index}", argv, env, workdir / f"node-{index}.log", on_line)


def wait_until_ready(url: str, child: Child, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if child.exited is not None:
            raise MeshnetError(f"the {child.name} exited early (status {child.exited})")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise MeshnetError(f"the {child.name} did not answer at {url} within {timeout_s:.0f}s")


def split_layers(layer_count: int, parts: int) -> list[tuple[int, int]]:
    """Contiguous, nearly equal ranges that tile [0, layer_count)."""
    if not 1 <= parts <= layer_count:
        raise MeshnetError(f"cannot split {layer_count} layers into {parts} nodes")
    bounds = [round(i * layer_count / parts) for i in range(parts + 1)]
    return list(itertools.pairwise(bounds))
