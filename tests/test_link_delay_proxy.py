"""The WAN benchmarks' delay proxy: every leg pays the delay, bytes and order are kept.

No upper bounds on time anywhere (this machine is shared and slow): only "at
least the delay", which load can never break.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import socket
from collections.abc import Awaitable, Callable

import pytest

from tests.support.link_delay import DelayProxy, LinkDelay

DELAY_S = 0.05
SLACK_S = 0.002  # the event loop may fire a timer up to its clock resolution early

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while chunk := await reader.read(65536):
        writer.write(chunk)
        await writer.drain()
    writer.close()


async def digest_after_eof(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Reads until the client half-closes, then answers with what it read."""
    data = await reader.read()
    writer.write(hashlib.sha256(data).hexdigest().encode() + b" " + str(len(data)).encode())
    await writer.drain()
    writer.close()


async def hang_up(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.close()


def through_proxy(
    handler: Handler, link: LinkDelay, body: Callable[[DelayProxy], Awaitable[None]]
) -> None:
    async def run() -> None:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        port = int(server.sockets[0].getsockname()[1])
        async with server, DelayProxy("127.0.0.1", port, link, seed=7) as proxy:
            await body(proxy)

    asyncio.run(run())


def test_each_leg_pays_the_delay_and_bytes_come_back_identical() -> None:
    async def body(proxy: DelayProxy) -> None:
        loop = asyncio.get_running_loop()
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.listen_port)
        began = loop.time()
        writer.write(b"hello")
        assert await reader.readexactly(5) == b"hello"
        # Handshake (one round trip) before the first byte, then there and back.
        assert loop.time() - began >= 4 * DELAY_S - SLACK_S
        for message in (b"a" * 10, os.urandom(1000)):
            began = loop.time()
            writer.write(message)
            assert await reader.readexactly(len(message)) == message
            assert loop.time() - began >= 2 * DELAY_S - SLACK_S  # to the target and back
        writer.close()
        await writer.wait_closed()
        assert proxy.connections == 1
        assert proxy.bytes_forwarded == 2 * (5 + 10 + 1000)  # each message there and back

    through_proxy(echo, LinkDelay(DELAY_S), body)


def test_jitter_never_reorders_a_direction() -> None:
    async def body(proxy: DelayProxy) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.listen_port)
        pieces = [f"<{i:04d}>".encode() for i in range(150)]
        for piece in pieces:
            writer.write(piece)
            await writer.drain()
            await asyncio.sleep(0.001)  # separate chunks, each with its own jittered delay
        expected = b"".join(pieces)
        assert await reader.readexactly(len(expected)) == expected
        writer.close()

    # Jitter far larger than the gap between chunks: released by their own stamps they'd shuffle.
    through_proxy(echo, LinkDelay(0.005, jitter_s=0.05), body)


def test_large_transfer_is_byte_identical_both_ways() -> None:
    payload = os.urandom(6 * 1024 * 1024)  # far more than the queue's window of chunks

    async def body(proxy: DelayProxy) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.listen_port)

        async def send() -> None:
            writer.write(payload)
            await writer.drain()
            writer.write_eof()

        sending = asyncio.create_task(send())
        received = await reader.read()  # the echo, up to the server's close
        await sending
        assert hashlib.sha256(received).digest() == hashlib.sha256(payload).digest()
        assert len(received) == len(payload)
        writer.close()

    through_proxy(echo, LinkDelay(0.01, jitter_s=0.005), body)


def test_half_close_reaches_the_target_and_its_answer_still_comes_back() -> None:
    payload = os.urandom(200_000)

    async def body(proxy: DelayProxy) -> None:
        loop = asyncio.get_running_loop()
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.listen_port)
        writer.write(payload)
        await writer.drain()
        writer.write_eof()  # our side is done; the answer must still arrive
        sent_eof = loop.time()
        answer = await reader.read()
        # The FIN crosses the link, then the answer comes back across it.
        assert loop.time() - sent_eof >= 2 * DELAY_S - SLACK_S
        digest, length = answer.split()
        assert digest.decode() == hashlib.sha256(payload).hexdigest()
        assert int(length) == len(payload)
        assert reader.at_eof()
        writer.close()

    through_proxy(digest_after_eof, LinkDelay(DELAY_S), body)


def test_a_target_that_hangs_up_closes_the_client_side() -> None:
    async def body(proxy: DelayProxy) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.listen_port)
        assert await reader.read() == b""
        writer.close()

    through_proxy(hang_up, LinkDelay(0.01), body)


def test_an_unreachable_target_closes_the_client_side() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead_port = int(probe.getsockname()[1])  # nothing listens once the probe closes

    async def run() -> None:
        async with DelayProxy("127.0.0.1", dead_port, LinkDelay(0.01)) as proxy:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.listen_port)
            assert await reader.read() == b""
            writer.close()

    asyncio.run(run())


def test_a_negative_delay_is_refused_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match="one-way delay"):
        LinkDelay(-0.01)


def test_the_proxy_process_switches_its_delay_and_reports_what_crossed() -> None:
    """benchmarks/link_delay_proxy.py: ready line, SIGUSR1/SIGUSR2 switches, stats at SIGTERM."""
    import json
    import signal
    import subprocess
    import sys
    import threading
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "benchmarks" / "link_delay_proxy.py"
    with socket.socket() as upstream, socket.socket() as probe:
        upstream.bind(("127.0.0.1", 0))
        upstream.listen()
        probe.bind(("127.0.0.1", 0))
        listen_port = int(probe.getsockname()[1])
        probe.close()
        target = f"127.0.0.1:{upstream.getsockname()[1]}"
        child = subprocess.Popen(
            [sys.executable, str(script), "--delay-ms", "20",
             "--link", f"up=127.0.0.1:{listen_port}={target}"],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert child.stdout is not None
        try:
            assert json.loads(child.stdout.readline()) == {"ready": ["up"]}
            child.send_signal(signal.SIGUSR1)
            assert json.loads(child.stdout.readline()) == {"delay_ms": 0.0}
            child.send_signal(signal.SIGUSR2)
            assert json.loads(child.stdout.readline()) == {"delay_ms": 20.0}

            def serve_one() -> None:
                conn, _ = upstream.accept()
                with conn:
                    conn.sendall(conn.recv(100))

            server = threading.Thread(target=serve_one)
            server.start()
            with socket.create_connection(("127.0.0.1", listen_port)) as client:
                client.sendall(b"ping")
                assert client.recv(100) == b"ping"
            server.join(timeout=30)
            child.send_signal(signal.SIGTERM)
            stats = json.loads(child.stdout.readline())
            assert stats == {"links": {"up": {"connections": 1, "bytes": 8}}}
            assert child.wait(timeout=30) == 0
        finally:
            if child.poll() is None:
                child.kill()
