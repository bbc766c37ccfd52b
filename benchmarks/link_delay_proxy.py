"""Run delay proxies as one process: every listed link pays a WAN link's one-way delay.

    python benchmarks/link_delay_proxy.py --delay-ms 25 [--jitter-ms 5] \\
        --link node1=127.0.0.2:7001=127.0.0.1:7001 --link gateway=127.0.0.2:8000=127.0.0.1:8000

Each ``--link NAME=LISTEN=TARGET`` listens on LISTEN and forwards to TARGET
through tests/support/link_delay.py (each chunk held for the delay, both
directions). Prints one JSON line ``{"ready": [...]}`` once all listen, and on
SIGTERM or SIGINT one ``{"links": {NAME: {"connections": N, "bytes": B}}}``
line, so a benchmark can show its legs really crossed the links. SIGUSR1 sets
every link's delay to 0 and SIGUSR2 back to ``--delay-ms`` (each answered with
a ``{"delay_ms": X}`` line), so a benchmark can measure the same routes and
connections without the delay, interleaved with the delayed rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.link_delay import DelayProxy, LinkDelay


def host_port(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT, e.g. 127.0.0.1:7001")
    return host, int(port)


def link(text: str) -> tuple[str, tuple[str, int], tuple[str, int]]:
    parts = text.split("=")
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not NAME=LISTEN_HOST:PORT=TARGET_HOST:PORT, "
            "e.g. node1=127.0.0.2:7001=127.0.0.1:7001"
        )
    return parts[0], host_port(parts[1]), host_port(parts[2])


async def serve(args: argparse.Namespace) -> None:
    delay = LinkDelay(args.delay_ms / 1000, args.jitter_ms / 1000)
    proxies = {
        name: DelayProxy(target[0], target[1], delay, listen_host=listen[0], listen_port=listen[1])
        for name, listen, target in args.link
    }
    for proxy in proxies.values():
        await proxy.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)

    def set_link(new: LinkDelay) -> None:
        for proxy in proxies.values():
            proxy.link = new  # chunks already stamped keep their release times
        print(json.dumps({"delay_ms": new.delay_s * 1000}), flush=True)

    loop.add_signal_handler(signal.SIGUSR1, set_link, LinkDelay(0.0))
    loop.add_signal_handler(signal.SIGUSR2, set_link, delay)
    # Only now: a switch sent the moment this line is read must find its handler.
    print(json.dumps({"ready": sorted(proxies)}), flush=True)
    await stop.wait()
    stats = {
        name: {"connections": proxy.connections, "bytes": proxy.bytes_forwarded}
        for name, proxy in proxies.items()
    }
    print(json.dumps({"links": stats}), flush=True)
    for proxy in proxies.values():
        await proxy.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay-ms", type=float, required=True, help="one-way delay per leg")
    parser.add_argument("--jitter-ms", type=float, default=0.0, help="extra uniform 0..J ms")
    parser.add_argument(
        "--link", type=link, action="append", required=True, help="NAME=LISTEN=TARGET"
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        asyncio.run(serve(args))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"link_delay_proxy: {exc}") from exc


if __name__ == "__main__":
    main()
