"""`meshnet-node run` (serve a shard) and `meshnet-node login` (join a private tracker).

`run` is also the child the contributor app supervises: with ``--events json``
it speaks the protocol of app.cli.node_control (event lines out, commands in).
Start-up, pause and resume run on worker threads so the main thread always
answers ``snapshot`` and ``stop``; a stop asked mid-start cancels it.
Exit status: 0 after a stop, 2 after the node was refused or failed (the
refused or error state event is printed first).
"""

from __future__ import annotations

import argparse
import gc
import getpass
import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from app.cli import arguments
from app.cli.node_control import (
    REASON_STDIN_CLOSED,
    STDIN_ENDED,
    STDIN_ENDED_WHY,
    CommandQueue,
    EventPrinter,
    add_control_argument,
    stdin_controls,
)
from app.cli.node_identity import add_identity_arguments
from core.errors import Cancelled, MeshnetError
from core.events import NodeEvent, NodeState
from core.identity.keystore import load_or_create_identity
from core.network.join_tokens import save_join_token
from core.network.node_network import network_to_serve
from core.node import Node, NodeSettings

log = logging.getLogger(__name__)

EXIT_STOPPED = 0
EXIT_FAILED = 2
_FAILED = "__failed__"  # put on the command queue when a refused/error state is published


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = subparsers.add_parser("run", help="serve a shard of a model to the network")
    run.add_argument(
        "--tracker",
        default=None,
        type=arguments.tracker_url,
        help="tracker URL, e.g. http://127.0.0.1:8470 (default: the network this profile "
        "joined with `meshnet-node join`)",
    )
    run.add_argument("--model", default=None, help="model id or folder (default: SmolLM2-135M)")
    run.add_argument(
        "--layers",
        type=arguments.layers,
        default=None,
        metavar="A:B",
        help="serve exactly these layers (default: ask the tracker which help the swarm most)",
    )
    run.add_argument(
        "--recipe", default=None, type=arguments.recipe, help="recipe id from the catalogue"
    )
    run.add_argument("--device", default=None, help="cpu, cuda or mps (default: best found)")
    run.add_argument("--host", default="127.0.0.1", help="address the data plane listens on")
    run.add_argument(
        "--port", type=arguments.port, default=0, help="data-plane port (0: any free port)"
    )
    run.add_argument("--advertise-host", default=None, help="address the tracker should dial")
    run.add_argument(
        "--relay",
        action="store_true",
        help="serve through a relay from the start (by default only when the tracker "
        "cannot dial this computer, e.g. behind a home router)",
    )
    run.add_argument(
        "--relay-url",
        default=None,
        help="the relay to use (ws://host:port/relay; default: the one the tracker offers)",
    )
    run.add_argument(
        "--insecure-plaintext-dataplane",
        action="store_true",
        help="development only: serve ws:// without TLS (a tracker routes through this "
        "node only when started with --allow-plaintext-nodes)",
    )
    run.add_argument(
        "--kv-budget-mb", type=arguments.megabytes, default=None, help="memory for KV sessions"
    )
    run.add_argument(
        "--memory-cap-mb",
        type=arguments.megabytes,
        default=None,
        metavar="N",
        help="use at most N MB: the doctor treats free memory as min(free, N)",
    )
    run.add_argument(
        "--report",
        type=Path,
        default=None,
        metavar="PATH",
        help="reuse this fresh capability report instead of a second test forward",
    )
    run.add_argument(
        "--move-dwell-s",
        type=float,
        default=600.0,
        metavar="S",
        help="serve a range at least S seconds before a rebalancing move (default 600)",
    )
    arguments.add_ca_file_argument(run)
    run.add_argument("--events", choices=("text", "json"), default="text", help="event format")
    add_control_argument(run)
    add_identity_arguments(run)
    run.set_defaults(func=run_node)

    login = subparsers.add_parser("login", help="store a private tracker's join token")
    login.add_argument("--tracker", required=True, type=arguments.tracker_url)
    login.add_argument("--token", default=None, help="the token (asked for when omitted)")
    login.set_defaults(func=login_tracker)


def run_node(args: argparse.Namespace) -> int:
    printer = EventPrinter(args.events)
    try:
        identity = load_or_create_identity(args.profile, args.identity_file)
        network = network_to_serve(args.profile, args.tracker)
    except MeshnetError as exc:
        printer(NodeEvent("state", str(exc), state=NodeState.ERROR, reason=exc.reason))
        return EXIT_FAILED
    settings = NodeSettings(
        tracker_url=network.tracker_url,
        model=args.model,
        layers=args.layers,
        recipe_id=args.recipe,
        device=args.device,
        host=args.host,
        port=args.port,
        advertise_host=args.advertise_host,
        kv_budget_bytes=args.kv_budget_mb * 1024 * 1024 if args.kv_budget_mb else None,
        join_token=network.join_token,
        tracker_key_fingerprint=network.key_fingerprint,
        tracker_ca_file=args.ca_file,
        memory_cap_mb=args.memory_cap_mb,
        report_path=args.report,
        move_dwell_s=args.move_dwell_s,
        relay=args.relay,
        relay_url=args.relay_url,
        insecure_plaintext_dataplane=args.insecure_plaintext_dataplane,
    )
    node = Node(settings, identity)
    # What the process holds before its first shard (torch, these modules) stays for its
    # life: frozen, the collector passes over it, so a pause frees the shard's memory in a
    # fraction of the time a full collection takes (docs/churn.md).
    gc.collect()
    gc.freeze()
    return supervise(node, printer, stdin_control=stdin_controls(args))


def supervise(
    node: Node, printer: Callable[[NodeEvent], None], *, stdin_control: bool = False
) -> int:
    """Start the node and obey commands until a stop (0) or a refusal or error (2).

    Commands come from stop signals always, and from stdin only with
    ``stdin_control`` (``--control stdin``); without it stdin is never read.
    """
    commands = CommandQueue()

    def on_event(event: NodeEvent) -> None:
        printer(event)
        if event.kind == "state" and event.state in (NodeState.REFUSED, NodeState.ERROR):
            commands.put(_FAILED)

    node.bus.subscribe(on_event, replay=False)
    commands.install_signals()
    if stdin_control:
        commands.read_stdin(sys.stdin)
    printer(node.snapshot_event())
    workers = [_in_background(node.start, "meshnet-start")]
    while True:
        command = commands.get(0.5)
        if command is None:
            continue
        if command == "snapshot":
            printer(node.snapshot_event())
        elif command == "pause":
            workers.append(_in_background(node.pause, "meshnet-pause"))
        elif command == "resume":
            if node.state in (NodeState.PAUSING, NodeState.PAUSED):  # resume waits for the pause
                workers.append(_in_background(node.resume, "meshnet-resume"))
        elif command in ("stop", STDIN_ENDED, _FAILED):
            why, reason = ("", None)
            if command == STDIN_ENDED:
                why, reason = STDIN_ENDED_WHY, REASON_STDIN_CLOSED
            node.stop(why, reason)
            for worker in workers:
                worker.join(60.0)
            node.stop(why, reason)  # a start that began after the first stop is stopped too
            return EXIT_FAILED if command == _FAILED else EXIT_STOPPED


def _in_background(action: Callable[[], None], name: str) -> threading.Thread:
    def run() -> None:
        try:
            action()
        except Cancelled:
            log.info("%s cancelled", name)
        except MeshnetError as exc:  # already published as a refused/error state
            log.info("%s failed: %s [%s]", name, exc, exc.reason)
        except Exception:  # published as an error state by the node; keep the details
            log.exception("%s failed unexpectedly", name)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


def login_tracker(args: argparse.Namespace) -> int:
    try:
        token = args.token or getpass.getpass("Join token: ")
    except EOFError:  # no terminal and nothing on stdin: say so, not a traceback
        print(
            "meshnet-node: no join token was given; pass --token or type it when asked "
            "[bad-config]",
            file=sys.stderr,
        )
        return 2
    if not token.strip():
        print("meshnet-node: an empty join token was given; nothing saved", file=sys.stderr)
        return 2
    save_join_token(args.tracker, token.strip())
    print(f"Saved the join token for {args.tracker} in the OS keyring.")
    return 0
