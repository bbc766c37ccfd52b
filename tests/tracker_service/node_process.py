"""A real node in a process of its own, with its own torch thread count.

    python -m tests.tracker_service.node_process MODEL_DIR START END THREADS SEED_HEX

Audit tests need honest nodes that differ the way strangers' machines do: a
different ``torch.set_num_threads`` reorders float sums inside matmuls, so two
honest nodes' hidden states are close, not equal. In-process servers share one
thread setting; separate processes do not. The model is the tiny Llama or any
local folder (the default model for the audit benchmark); the process prints
one JSON line (``endpoint``, ``threads``) once serving, then reads the
tracker's base64 public key from stdin (what it verifies tickets with) and
serves until stdin closes. ``MESHNET_TEST_LIE_RATE`` in its environment makes it
a liar (tests/support/lies/rate.py); ``MESHNET_TEST_LIE_MODULE`` makes it one of the
test-side liars of ``tests/support/lies``.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tests.support.lies import install_from_env
from tests.tracker_service.helpers import FakeNode
from tests.tracker_service.real_nodes import identity_for, start_real_node

REPO = Path(__file__).resolve().parents[2]


def layer_count_of(model_dir: Path) -> int:
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    return int(config["num_hidden_layers"])


@dataclass
class NodeProcess:
    """A node in its own process; the test signs its registration with the same key."""

    process: subprocess.Popen[str]
    key: Ed25519PrivateKey
    endpoint: str
    threads: int
    start: int
    identity: dict[str, Any]

    @property
    def fake(self) -> FakeNode:
        return FakeNode(key=self.key, endpoint=self.endpoint)

    @property
    def node_id(self) -> str:
        return self.fake.node_id

    @property
    def fingerprint(self) -> tuple[str, str]:
        claim = self.identity["fingerprint"]
        return claim["model_artifact_digest"], claim["runtime_recipe_digest"]

    def trust(self, tracker_public_key_b64: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(tracker_public_key_b64 + "\n")
        self.process.stdin.flush()

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)


def start_node_process(
    model_dir: Path, start: int, end: int, threads: int, **env: str
) -> NodeProcess:
    """Start one node process and wait until it serves (``env`` adds to its environment)."""
    return restart_node_process(model_dir, start, end, threads, Ed25519PrivateKey.generate(), env)


def restart_node_process(
    model_dir: Path,
    start: int,
    end: int,
    threads: int,
    key: Ed25519PrivateKey,
    env: dict[str, str] | None = None,
) -> NodeProcess:
    """A node process with this identity (a node that restarts, as after a move)."""
    seed = key.private_bytes_raw().hex()
    child_env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS=str(threads), **(env or {}))
    argv = [sys.executable, "-m", "tests.tracker_service.node_process", str(model_dir)]
    process = subprocess.Popen(
        [*argv, str(start), str(end), str(threads), seed],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=child_env,
        cwd=REPO,
    )
    assert process.stdout is not None
    ready = json.loads(process.stdout.readline() or "{}")
    if "endpoint" not in ready:
        raise RuntimeError(f"the node process exited with {process.poll()} before serving")
    identity = identity_for(model_dir, start, end, layer_count_of(model_dir))
    return NodeProcess(process, key, ready["endpoint"], int(ready["threads"]), start, identity)


def main(argv: list[str]) -> int:
    model_dir, start, end, threads, seed_hex = argv
    torch.set_num_threads(int(threads))
    install_from_env()  # a test-side liar, when the test asked for one (tests/support/lies)
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(seed_hex))
    folder = Path(model_dir)
    identity = identity_for(folder, int(start), int(end), layer_count_of(folder))
    node = start_real_node(folder, int(start), int(end), key=key, identity=identity)
    ready = {"endpoint": node.endpoint, "threads": torch.get_num_threads()}
    sys.stdout.write(json.dumps(ready) + "\n")
    sys.stdout.flush()
    try:
        tracker_key = sys.stdin.readline().strip()
        node.tracker_key[0] = base64.b64decode(tracker_key)
        sys.stdin.read()  # serve until the test closes our stdin
    finally:
        node.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
