"""A stand-in download server on loopback that honours (or ignores) HTTP Range:
the GPU runtime's tests (tests/app/test_gpu_runtime.py, tests/app/ui/test_gpu_box.py)."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Served:
    body: bytes
    honour_range: bool = True
    ranges: list[str | None] = field(default_factory=list)
    sent: int = 0


def handler(served: Served) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            wanted = self.headers.get("Range")
            served.ranges.append(wanted)
            start = 0
            if wanted and served.honour_range:
                start = int(wanted.removeprefix("bytes=").split("-")[0])
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(served.body) - 1}/*")
            else:
                self.send_response(200)
            chunk = served.body[start:]
            self.send_header("Content-Length", str(len(chunk)))
            self.end_headers()
            try:
                for at in range(0, len(chunk), 1 << 16):
                    self.wfile.write(chunk[at : at + (1 << 16)])
                    served.sent += len(chunk[at : at + (1 << 16)])
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client cancelled

        def log_message(self, *args: object) -> None:
            pass

    return Handler


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hangs up mid-download (a Cancel) is what these tests do."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


@contextlib.contextmanager
def serving(body: bytes, name: str) -> Iterator[tuple[Served, str]]:
    """Serves ``body`` at ``http://127.0.0.1:<port>/<name>`` until the block ends."""
    served = Served(body)
    httpd = _Server(("127.0.0.1", 0), handler(served))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield served, f"http://127.0.0.1:{httpd.server_address[1]}/{name}"
    finally:
        httpd.shutdown()
        httpd.server_close()
