"""A real node of the tiny Llama in a process of its own, with its own torch thread count.

    python -m tests.tracker_service.node_process MODEL_DIR START END THREADS SEED_HEX

Audit tests need honest nodes that differ the way strangers' machines do: a
different ``torch.set_num_threads`` reorders float sums inside matmuls, so two
honest nodes' hidden states are close, not equal. In-process servers share one
thread setting; separate processes do not. The process prints one JSON line
(``endpoint``, ``threads``) once serving, then reads the tracker's base64
public key from stdin (what it verifies tickets with) and serves until stdin
closes or it is terminated.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import torch
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tests.tracker_service.real_nodes import start_real_node


def main(argv: list[str]) -> int:
    model_dir, start, end, threads, seed_hex = argv
    torch.set_num_threads(int(threads))
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(seed_hex))
    node = start_real_node(Path(model_dir), int(start), int(end), key=key)
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
