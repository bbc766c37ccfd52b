"""``meshnet-tracker relay``: run a relay as its own process."""

from __future__ import annotations

import argparse
import logging
from typing import Any

MIB = 1024 * 1024
LOG_LEVELS = ("critical", "error", "warning", "info", "debug")
DESCRIPTION = (
    "Run a relay as its own process. A node the tracker cannot dial (behind a home "
    "router) holds one outgoing link to the relay, and clients reach the node through "
    "it. Give the tracker its address with `meshnet-tracker serve --relay-url ws://HOST:PORT/relay`."
)


def cmd_relay(args: argparse.Namespace) -> int:
    import uvicorn

    from tracker_service.relay.app import create_relay_app
    from tracker_service.relay.hub import RelaySettings

    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s %(message)s")
    settings = RelaySettings(
        node_bytes_per_s=args.node_mbit_per_s * MIB / 8,
        max_streams_per_node=args.max_streams_per_node,
        max_links_per_address=args.max_links_per_address,
    )
    common: dict[str, Any] = {"host": args.host, "port": args.port, "log_level": args.log_level}
    uvicorn.run(create_relay_app(settings), ws_max_size=args.max_message_mib * MIB, **common)
    return 0


def add_relay_command(commands: Any) -> None:
    relay = commands.add_parser(
        "relay",
        help="run a relay for nodes the tracker cannot dial (behind home routers)",
        description=DESCRIPTION,
        # Every option shows its default; no option's help repeats it by hand.
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    relay.add_argument("--host", default="127.0.0.1", help="address to listen on")
    relay.add_argument("--port", type=int, default=8766, help="port to listen on")
    relay.add_argument(
        "--node-mbit-per-s",
        type=float,
        default=100.0,
        help="cap each node's traffic through this relay (megabits/s, both ways; 0: no cap)",
    )
    relay.add_argument(
        "--max-streams-per-node",
        type=int,
        default=1024,
        help="client connections one relayed node may carry at once",
    )
    relay.add_argument(
        "--max-links-per-address",
        type=int,
        default=64,
        help="links (relayed nodes) one source address may hold (0: no cap)",
    )
    relay.add_argument(
        "--max-message-mib", type=int, default=64, help="largest message carried (MiB)"
    )
    relay.add_argument(
        "--log-level",
        default="info",
        type=str.lower,
        choices=LOG_LEVELS,
        help="how much the relay logs",
    )
    relay.set_defaults(func=cmd_relay)
