"""`meshnet-node run` (serve a shard) and `meshnet-node login` (join a private tracker)."""

from __future__ import annotations

import argparse
import getpass
import json
import signal
import sys
import threading
from typing import Any

from app.cli.node_identity import add_identity_arguments
from core.doctor import parse_layers
from core.events import NodeEvent
from core.join_tokens import load_join_token, save_join_token
from core.keystore import load_or_create_identity
from core.node import Node, NodeSettings


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = subparsers.add_parser("run", help="serve a shard of a model to the network")
    run.add_argument("--tracker", required=True, help="tracker URL, e.g. http://127.0.0.1:8470")
    run.add_argument("--model", default=None, help="model id or folder (default: SmolLM2-135M)")
    run.add_argument("--layers", type=parse_layers, default=None, metavar="A:B")
    run.add_argument("--recipe", default=None, help="recipe id from the catalogue")
    run.add_argument("--device", default=None, help="cpu, cuda or mps (default: best found)")
    run.add_argument("--host", default="127.0.0.1", help="address the data plane listens on")
    run.add_argument("--port", type=int, default=0, help="data-plane port (0: any free port)")
    run.add_argument("--advertise-host", default=None, help="address the tracker should dial")
    run.add_argument("--kv-budget-mb", type=int, default=None, help="memory for KV sessions")
    run.add_argument("--events", choices=("text", "json"), default="text", help="event format")
    add_identity_arguments(run)
    run.set_defaults(func=run_node)

    login = subparsers.add_parser("login", help="store a private tracker's join token")
    login.add_argument("--tracker", required=True)
    login.add_argument("--token", default=None, help="the token (asked for when omitted)")
    login.set_defaults(func=login_tracker)


def _printer(style: str) -> Any:
    def show(event: NodeEvent) -> None:
        if style == "json":
            record = {
                "kind": event.kind,
                "message": event.message,
                "state": event.state.value if event.state else None,
                "gate": event.gate.value if event.gate else None,
                "gate_state": event.gate_state.value if event.gate_state else None,
                "reason": event.reason,
                "at": event.at,
            }
            print(json.dumps(record), flush=True)
        elif event.kind == "state":
            print(f"[{event.state}] {event.message}", flush=True)
        elif event.kind == "gate":
            print(f"  {event.gate}: {event.gate_state} — {event.message}", flush=True)

    return show


def run_node(args: argparse.Namespace) -> int:
    identity = load_or_create_identity(args.profile, args.identity_file)
    settings = NodeSettings(
        tracker_url=args.tracker,
        model=args.model,
        layers=args.layers,
        recipe_id=args.recipe,
        device=args.device,
        host=args.host,
        port=args.port,
        advertise_host=args.advertise_host,
        kv_budget_bytes=args.kv_budget_mb * 1024 * 1024 if args.kv_budget_mb else None,
        join_token=load_join_token(args.tracker),
    )
    node = Node(settings, identity)
    node.bus.subscribe(_printer(args.events))
    stop = threading.Event()

    def request_stop(_signum: int, _frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    node.start()  # raises (exit 2 with the sentence) when a gate refuses
    try:
        while not stop.wait(0.5):
            pass
    finally:
        node.stop()
    return 0


def login_tracker(args: argparse.Namespace) -> int:
    token = args.token or getpass.getpass("Join token: ")
    if not token.strip():
        print("meshnet-node: an empty join token was given; nothing saved", file=sys.stderr)
        return 2
    save_join_token(args.tracker, token.strip())
    print(f"Saved the join token for {args.tracker} in the OS keyring.")
    return 0
