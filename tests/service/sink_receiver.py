"""Local HTTP receivers for the sink tests (real servers on 127.0.0.1).

:class:`Receiver` records every POST (path, headers, JSON body) and answers each path
with the next status of its script (then 200): a Slack incoming webhook answers
``200 ok``, a generic webhook whatever its script says. ``Retry-After`` is sent with
429/503 when ``retry_after`` is set. :class:`Hanging` accepts connections and never
answers until it is closed (then the connections are reset), like a stuck receiver.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class Receiver:
    def __init__(self, script: dict[str, list[int]] | None = None, retry_after: str = "") -> None:
        self.script = {k: list(v) for k, v in (script or {}).items()}
        self.retry_after = retry_after
        self.got: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        fixture = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with fixture.lock:
                    steps = fixture.script.get(self.path, [])
                    status = steps.pop(0) if steps else 200
                    fixture.got.append(
                        {
                            "path": self.path,
                            "status": status,
                            "headers": {k.lower(): v for k, v in self.headers.items()},
                            "body": json.loads(raw) if raw else None,
                        }
                    )
                answer = b"ok" if status == 200 else b"no"
                self.send_response(status)
                if status in (429, 503) and fixture.retry_after:
                    self.send_header("Retry-After", fixture.retry_after)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                with contextlib.suppress(OSError):
                    self.wfile.write(answer)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def posts(self, path: str) -> list[dict[str, Any]]:
        with self.lock:
            return [g for g in self.got if g["path"] == path]

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class Hanging:
    """Accepts and holds connections; answers nothing until closed."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        self.sock.settimeout(0.05)
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.held.append(conn)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        for conn in self.held:
            with contextlib.suppress(OSError):
                conn.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                )
                conn.close()
        self.sock.close()

    def __exit__(self, *exc: object) -> None:
        self.close()
