"""Helpers shared by the hardening tests: the CLI in-process, bundle copies, and small
hostile servers on 127.0.0.1 (a slow-drip HTTP server, a blackholed port, a redirect
loop). Nothing here mocks opsmate: the servers speak real TCP to the real clients."""

from __future__ import annotations

import contextlib
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from opsmate.cli import main

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "src" / "opsmate" / "data" / "demo"
POOL = DEMO / "01-pool-exhaustion"
OPSMATE = REPO / ".venv" / "bin" / "opsmate"


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``opsmate ARGV`` in this process: (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def copy_bundle(tmp_path: Path, src: Path = POOL, name: str = "bundle") -> Path:
    """A writable copy of a demo bundle."""
    dst = tmp_path / name
    shutil.copytree(src, dst)
    return dst


def assert_no_traceback(text: str) -> None:
    assert "Traceback" not in text, text[-2000:]


# -- hostile servers ------------------------------------------------------------------
class _DripHandler(BaseHTTPRequestHandler):
    """Answers 200 with headers, then one byte of body every ``drip_s`` seconds, forever
    (until the client goes away): no single read ever times out."""

    protocol_version = "HTTP/1.1"
    drip_s = 0.5

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        with contextlib.suppress(OSError):
            for _ in range(100000):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(self.drip_s)

    do_POST = do_GET


@contextlib.contextmanager
def _serve(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A loopback HTTP server with ``handler`` in a daemon thread; yields its base URL."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def drip_server() -> contextlib.AbstractContextManager[str]:
    """A slow-drip HTTP server; yields its base URL."""
    return _serve(_DripHandler)


@contextlib.contextmanager
def blackhole_port() -> Iterator[int]:
    """A loopback port that accepts TCP connections and never says a word (and never
    reads): the behaviour of a firewall that swallows packets after the handshake."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                conn, _ = sock.accept()
                held.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(sock.getsockname()[1])
    finally:
        stop.set()
        thread.join(1)
        for conn in held:
            conn.close()
        sock.close()


class _RedirectHandler(BaseHTTPRequestHandler):
    """Every request is redirected to itself (HTTP 302): a redirect loop."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _loop(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.send_response(302)
        self.send_header("Location", self.path)
        self.send_header("X-Elastic-Product", "Elasticsearch")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_HEAD = _loop


def redirect_loop_server() -> contextlib.AbstractContextManager[str]:
    """A server that redirects every request to itself; yields its base URL."""
    return _serve(_RedirectHandler)


@contextlib.contextmanager
def syn_blackhole_port() -> Iterator[int]:
    """A loopback port where ``connect`` itself hangs: a listener with a zero backlog that
    never accepts, its queue filled, so the kernel drops further SYNs (a blackholed
    address, as a firewall that drops packets makes it)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(0)
    port = int(sock.getsockname()[1])
    fillers = []
    for _ in range(3):
        filler = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        filler.settimeout(0.3)
        with contextlib.suppress(OSError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    try:
        yield port
    finally:
        for filler in fillers:
            filler.close()
        sock.close()
