"""Contributors go first: credited and free clients on a saturated network of real processes.

A tracker (gateway capped at ``--slots`` generations at once, free share 1 in
4) and two node processes of the default model (layers 0–15 and 15–30) on
loopback. Both nodes are linked to the account ``bob`` with the ``credited``
API key; warm-up chats with another key (free) earn the account credit
first. The free key's requests come from another address (``X-Forwarded-For``
from loopback, which the tracker trusts as it trusts its proxy): an unlinked key
from the nodes' own address would be their own traffic and earn nothing.
Then ``--clients`` credited and as many free clients each stream
greedy chats back to back for ``--duration`` seconds, all at once, so
requests queue at the gateway the whole time (a request started in the window
is waited for and counted). Reported per class: requests completed, time to first token
(p50, p90), tokens/s per request; the LAST line is ``ratio: X``, X = free p50
time to first token / credited p50 (the target is X >= 2, with every free
request completed).

    python benchmarks/priority_under_load.py [--clients 3] [--duration 90] [--slots 1]
        [--max-tokens 8] [--warmup 6]
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.demo.processes import (  # noqa: E402
    Child,
    child_env,
    free_port,
    start_node,
    wait_until_ready,
)
from core.identity.keystore import key_store  # noqa: E402
from core.models.default_model import ensure_default_model  # noqa: E402
from tracker_service.domain.credit_rules import LINK_DOMAIN, AccountClaim  # noqa: E402
from tracker_service.domain.wire import domain_message  # noqa: E402
from tracker_service.store.hashed_secrets import hash_secret  # noqa: E402

QUESTION = "Name three colours."
STRANGER_ADDRESS = "198.51.100.7"  # where the free clients are, as the proxy reports it


def wait(predicate: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    sys.exit(f"timed out waiting for {what}")


def keys_add(workdir: Path, label: str) -> str:
    db = f"sqlite:///{workdir / 'tracker.db'}"
    out = subprocess.run(
        [sys.executable, "-m", "tracker_service.cli", "keys", "add", "--label", label, "--db", db],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return out.stdout.strip().splitlines()[-1]


def link(url: str, workdir: Path, indexes: list[int], api_key: str) -> None:
    identities = [
        key_store(identity_file=workdir / f"node-{i}" / "identity.key").load() for i in indexes
    ]
    ids = tuple(sorted(i.node_id for i in identities if i is not None))
    claim = AccountClaim("bob", "Bob", "", ids, int(time.time()), hash_secret(api_key))
    message = domain_message(LINK_DOMAIN, claim.statement())
    signatures = {
        i.node_id: base64.b64encode(i.sign(message)).decode() for i in identities if i is not None
    }
    reply = httpx.post(
        url + "/api/v1/credits/accounts",
        json={"account": "bob", "display_name": "Bob", "team": "", "signed_at": claim.signed_at,
              "api_key_sha256": claim.api_key_sha256, "signatures": signatures},
        headers={"Authorization": f"Bearer {api_key}"},
        timeout=30, trust_env=False,
    )  # fmt: skip
    reply.raise_for_status()


def stream(
    url: str, model: str, key: str, max_tokens: int, from_address: str | None = None
) -> tuple[float, float, int] | None:
    """(time to first token, tokens/s after it, tokens), or None when it failed."""
    started = time.perf_counter()
    first = None
    tokens = 0
    body = {
        "model": model,
        "messages": [{"role": "user", "content": QUESTION}],
        "temperature": 0,
        "max_tokens": max_tokens,
        "stream": True,
    }
    headers = {"Authorization": f"Bearer {key}"}
    if from_address:
        headers["X-Forwarded-For"] = from_address
    try:
        with httpx.stream(
            "POST", url + "/v1/chat/completions", json=body, headers=headers,
            timeout=600, trust_env=False,
        ) as reply:  # fmt: skip
            if reply.status_code != 200:
                return None
            for line in reply.iter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                chunk = json.loads(line[6:])
                if chunk.get("choices") and chunk["choices"][0]["delta"].get("content"):
                    tokens += 1
                    first = first or time.perf_counter()
    except httpx.HTTPError:
        return None
    if first is None:
        return None
    ended = time.perf_counter()
    return first - started, tokens / max(ended - first, 1e-6), tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=3)
    parser.add_argument("--duration", type=float, default=90.0)
    parser.add_argument("--slots", type=int, default=1)
    parser.add_argument("--max-tokens", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=6)
    args = parser.parse_args()
    model_dir = ensure_default_model(REPO / ".meshnet" / "test-cache" / "models")
    with tempfile.TemporaryDirectory() as folder:
        workdir = Path(folder)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = child_env(
            MESHNET_TRACKER_DATA_DIR=str(workdir / "tracker"),
            MESHNET_TRACKER_HEARTBEAT_INTERVAL_S="1.0",
            MESHNET_TRACKER_AUDIT_RATE="0",
            MESHNET_TRACKER_AUDIT_PROBATION_RATE="0",
            MESHNET_TRACKER_GATEWAY_MAX_CONCURRENT=str(args.slots),
            MESHNET_TRACKER_GATEWAY_FREE_SHARE="4",
            MESHNET_TRACKER_GATEWAY_REQUESTS_PER_MINUTE="100000",
        )
        argv = [
            sys.executable, "-m", "tracker_service.cli", "serve", "--port", str(port),
            "--db", f"sqlite:///{workdir / 'tracker.db'}", "--allow-private-endpoints",
            "--trust-first-model-source",  # the benchmark runs every node of its network
        ]  # fmt: skip
        children: list[Child] = []

        def ignore(_name: str, _line: object) -> None:
            return None

        try:
            tracker = Child("tracker", argv, env, workdir / "tracker.log", ignore)
            children.append(tracker)
            wait_until_ready(url + "/api/v1/state", tracker)
            for index, layers in ((1, (0, 15)), (2, (15, 30))):
                children.append(start_node(index, workdir, url, model_dir, layers, ignore))

            def state() -> dict[str, Any]:
                return dict(httpx.get(url + "/api/v1/state", timeout=10, trust_env=False).json())

            wait(
                lambda: (
                    any(r["status"] == "certified" for r in state()["recipes"])
                    and sum(n["reachability"] == "reachable" for n in state()["nodes"]) == 2
                ),
                600,
                "two reachable nodes and a certified recipe",
            )
            model = next(r for r in state()["recipes"] if r["status"] == "certified")["artifact_id"]
            free_key = keys_add(workdir, "free")
            credited_key = keys_add(workdir, "credited")
            link(url, workdir, [1, 2], credited_key)
            time.sleep(2.5)
            for _ in range(args.warmup):
                stream(url, model, free_key, args.max_tokens, STRANGER_ADDRESS)
            bob = httpx.get(url + "/api/v1/credits/bob", timeout=10, trust_env=False).json()
            print(f"account bob earned {bob['total']:.3f} credit in {args.warmup} warm-up chats")
            time.sleep(2.5)  # the ledger's cache of linked keys

            results: dict[str, list[tuple[float, float, int] | None]] = {"credited": [], "free": []}
            lock = threading.Lock()

            def client(klass: str, key: str) -> None:
                address = STRANGER_ADDRESS if klass == "free" else None
                while time.perf_counter() < end:
                    outcome = stream(url, model, key, args.max_tokens, address)
                    with lock:
                        results[klass].append(outcome)

            threads = [
                threading.Thread(target=client, args=(klass, key))
                for _ in range(args.clients)
                for klass, key in (("credited", credited_key), ("free", free_key))
            ]
            started = time.perf_counter()
            end = started + args.duration
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            print(
                f"{len(threads)} clients for {args.duration:.0f} s, {args.slots} slot(s); "
                f"{time.perf_counter() - started:.1f} s until the last answer"
            )
            p50 = {}
            for klass, outcomes in results.items():
                done = [o for o in outcomes if o is not None]
                ttft = sorted(o[0] for o in done)
                rate = [o[1] for o in done]
                p50[klass] = statistics.median(ttft) if ttft else float("nan")
                p90 = ttft[min(len(ttft) - 1, int(0.9 * len(ttft)))] if ttft else float("nan")
                print(
                    f"{klass}: {len(done)}/{len(outcomes)} completed; time to first token "
                    f"p50 {p50[klass]:.2f} s, p90 {p90:.2f} s; "
                    f"{statistics.median(rate) if rate else float('nan'):.1f} tokens/s"
                )
            bob = httpx.get(url + "/api/v1/credits/bob", timeout=10, trust_env=False).json()
            print(f"account bob: {bob['total']:.3f} earned in all")
        finally:
            for child in reversed(children):
                child.stop()
    print(f"ratio: {p50['free'] / p50['credited']:.2f}")


if __name__ == "__main__":
    main()
