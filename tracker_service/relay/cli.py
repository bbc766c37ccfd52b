"""``meshnet-tracker relay``: run a relay as its own process."""

from __future__ import annotations

import argparse
import logging
from typing import Any

MIB = 1024 * 1024


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
        "relay", help="run a relay for nodes the tracker cannot dial (behind home routers)"
    )
    relay.add_argument("--host", default="127.0.0.1", help="address to listen on")
    relay.add_argument("--port", type=int, default=8766)
    relay.add_argument(
        "--node-mbit-per-s",
        type=float,
        default=0.0,
        help="cap each node's traffic through this relay (megabits/s, both ways; 0: no cap)",
    )
    relay.add_argument("--max-streams-per-node", type=int, default=1024)
    relay.add_argument(
        "--max-links-per-address",
        type=int,
        default=64,
        help="links (relayed nodes) one source address may hold (0: no cap)",
    )
    relay.add_argument(
        "--max-message-mib", type=int, default=64, help="largest message carried (MiB)"
    )
    relay.add_argument("--log-level", default="info")
    relay.set_defaults(func=cmd_relay)
