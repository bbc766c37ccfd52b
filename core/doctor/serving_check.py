"""The doctor's last step: can this installation serve, not only compute?

A passed test forward once meant little when the node child then died importing
its data plane (a websockets too old for ``core.dataplane.plain_http``). So
before the doctor says "Passed" it imports the node's data plane and starts
the data plane on the loaded shard once, on loopback, with a throwaway identity
and certificate, dials it, and stops it. Any failure becomes a sentence and the
reason code ``serving-failed``, never a traceback.
"""

from __future__ import annotations

import logging
import socket
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

REASON_SERVING_FAILED = "serving-failed"
START_TIMEOUT_S = 30.0
DIAL_TIMEOUT_S = 5.0
# a tiny budget: the check opens no session, it only proves the server comes up
CHECK_KV_BUDGET_BYTES = 1 << 20
CHECK_FRAME_BYTES = 1 << 20


def serving_problem(shard: Any, identity_block: dict[str, Any], model_dir: Path) -> str | None:
    """None when the data plane started and listened on loopback; else why not."""
    server = None
    try:
        # the data plane `meshnet-node run` serves with, every module of it
        from core.dataplane.server import DataPlaneServer
        from core.dataplane.tls import generate_certificate
        from core.identity.keypair import NodeIdentity
        from core.runtime.sessions import SessionManager

        identity = NodeIdentity.generate()  # throwaway: this server is never advertised
        server = DataPlaneServer(
            SessionManager(shard, kv_budget_bytes=CHECK_KV_BUDGET_BYTES),
            node_id=identity.node_id,
            public_key=identity.public_key_raw,
            sign=identity.sign,
            tracker_public_key=lambda: None,
            fingerprint=dict(identity_block["fingerprint"]),
            shard_range=(shard.start, shard.end),
            max_frame_bytes=CHECK_FRAME_BYTES,
            host="127.0.0.1",
            port=0,
            tokenizer_path=model_dir / "tokenizer.json",
            tls=generate_certificate(identity.node_id),
        )
        server.start(START_TIMEOUT_S)
        with socket.create_connection(("127.0.0.1", server.port), timeout=DIAL_TIMEOUT_S):
            pass
        log.info("serving check: the data plane listened on 127.0.0.1:%d", server.port)
        return None
    except Exception as exc:  # any failure here is the verdict, not a crash
        log.exception("serving check failed")
        return (
            "The test computed correctly, but this computer cannot serve yet: part of "
            f"MeshNet failed to start ({type(exc).__name__}: {exc}). Update or reinstall "
            "MeshNet, then test again."
        )
    finally:
        if server is not None:
            try:
                server.stop()
            except Exception:  # the verdict stands; a stuck stop is only logged
                log.exception("serving check: the data plane did not stop cleanly")
