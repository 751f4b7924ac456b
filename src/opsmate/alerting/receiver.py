"""The Alertmanager webhook receiver behind ``opsmate watch``: HTTP in, a bounded queue out.

A :class:`WebhookReceiver` listens (stdlib ``ThreadingHTTPServer``) and, for each POST:

- refuses a missing / wrong bearer token (401) when a token is set, a body that is not
  ``application/json`` (415: a cross-site ``text/plain`` form post is never read), a body
  without a length (411) or above the size limit (413), a body that is not a version 4
  webhook or holds hostile values (400, the message names the key and the reason);
- answers 503 with ``Retry-After`` while ``can_accept`` gives a reason (the reports
  folder cannot be written): a notification is never acknowledged and then lost;
- logs a ``resolved`` notification and answers 200: nothing is investigated;
- answers 200 without queueing a firing group already queued or being investigated
  (same ``groupKey``), or one investigated within ``dedupe_seconds`` with the same
  alerts (fingerprints and start times): no duplicate work;
- queues anything else for the workers (200), or answers 503 with ``Retry-After`` when
  the queue is full, so Alertmanager retries later.

``workers`` threads call ``handle(message)`` for each queued group. :meth:`drain` stops
accepting, lets the queued and running investigations finish and returns. ``GET
/-/healthy`` answers 200. Counters (``stats``) say what happened, for logs and tests.
``routes`` adds GET paths (``/metrics``): path -> a function giving (content type, body).

Against slow or piled-up clients: each request (headers and body, or the wait for the next
request on a kept-alive connection) has ``request_seconds`` of wall-clock time, after
which its connection is shut; at most ``max_connections`` connections are served at once,
more are answered 503 and closed at once. ``host`` may be an IPv6 address (``::1``).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import queue
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opsmate.alerting.webhook import WebhookMessage, parse_webhook_bytes
from opsmate.errors import OpsmateError

Handler = Callable[[WebhookMessage], None]
Log = Callable[[str], None]
Route = Callable[[], tuple[str, bytes]]


def content_key(msg: WebhookMessage) -> str:
    """The group key and its firing alerts (fingerprint or labels, start time), hashed."""
    parts = sorted(
        f"{a.fingerprint or json.dumps(a.labels, sort_keys=True)}@{a.starts_at}" for a in msg.firing
    )
    raw = msg.group_key + "\n" + "\n".join(parts)
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


_BUSY_BODY = b'{"status": "too many connections"}'
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY)
)


class _Server(ThreadingHTTPServer):
    """A threaded HTTP server with a cap on connections served at once and a reaper that
    shuts connections whose request ran past its wall-clock deadline."""

    request_queue_size = 128  # a burst of notifications waits in the backlog, not refused
    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        *,
        max_connections: int,
    ) -> None:
        if ":" in address[0]:  # an IPv6 address ("::1", "::")
            self.address_family = socket.AF_INET6
        self._slots = threading.BoundedSemaphore(max_connections)
        self.refused_busy = 0
        self._deadlines: dict[socket.socket, float] = {}
        self._deadline_lock = threading.Lock()
        self._reaping = threading.Event()
        super().__init__(address, handler)
        threading.Thread(target=self._reap, name="opsmate-watch-reaper", daemon=True).start()

    # a cap on connections: one thread each, never more than max_connections
    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.refused_busy += 1
            with contextlib.suppress(OSError):
                request.settimeout(0.5)
                request.sendall(_BUSY)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.forget(request)
            self._slots.release()

    # wall-clock deadlines per request
    def watch(self, conn: socket.socket, seconds: float) -> None:
        with self._deadline_lock:
            self._deadlines[conn] = time.monotonic() + seconds

    def forget(self, conn: socket.socket) -> None:
        with self._deadline_lock:
            self._deadlines.pop(conn, None)

    def _reap(self) -> None:
        while not self._reaping.wait(0.2):
            now = time.monotonic()
            with self._deadline_lock:
                late = [c for c, t in self._deadlines.items() if t <= now]
                for c in late:
                    self._deadlines.pop(c, None)
            for conn in late:  # a blocked read on it returns at once
                with contextlib.suppress(OSError, ValueError):
                    conn.shutdown(socket.SHUT_RDWR)

    def server_close(self) -> None:
        self._reaping.set()
        super().server_close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (or was cut off at its deadline) is not a traceback."""
        return


@dataclass
class ReceiverStats:
    """What the receiver did (thread-safe increments under the receiver's lock)."""

    received: int = 0
    queued: int = 0
    duplicates: int = 0
    resolved: int = 0
    rejected_full: int = 0
    rejected_bad: int = 0
    unauthorized: int = 0
    unwritable: int = 0  # refused with 503: the reports could not be written
    timed_out: int = 0  # requests whose headers or body came too slowly
    handled: int = 0
    failed: int = 0
    in_flight: set[str] = field(default_factory=set)


class WebhookReceiver:
    """Receive webhooks on ``host:port``; investigate each firing group once (module doc)."""

    def __init__(
        self,
        host: str,
        port: int,
        handle: Handler,
        *,
        token: str | None = None,
        max_body_bytes: int = 1 << 20,
        queue_size: int = 16,
        workers: int = 2,
        dedupe_seconds: float = 600.0,
        log: Log | None = None,
        routes: dict[str, Route] | None = None,
        can_accept: Callable[[], str | None] | None = None,
        request_seconds: float = 10.0,
        max_connections: int = 64,
        on_resolved: Handler | None = None,
    ) -> None:
        self.handle = handle
        # None when reports can be written now, else why not (then 503: Alertmanager retries)
        self.can_accept = can_accept
        self.request_seconds = request_seconds
        self.routes = dict(routes or {})
        self.on_resolved = on_resolved  # told of each resolved notification (must not block)
        self.token = token
        self.max_body_bytes = max_body_bytes
        self.dedupe_seconds = dedupe_seconds
        self.log: Log = log or (lambda _msg: None)
        self.stats = ReceiverStats()
        self._queue: queue.Queue[WebhookMessage | None] = queue.Queue(maxsize=queue_size)
        self._lock = threading.Lock()
        self._done: dict[str, float] = {}  # content key -> when its investigation ended
        self._accepting = True
        self._workers = [
            threading.Thread(target=self._work, name=f"opsmate-watch-{i}", daemon=True)
            for i in range(workers)
        ]
        self._httpd = _Server((host, port), self._handler_class(), max_connections=max_connections)
        self._serve_thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="opsmate-watch-http",
            daemon=True,
        )

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._httpd.server_address[:2]
        return str(host), int(port)

    @property
    def queue_depth(self) -> int:
        """Firing groups waiting for a worker."""
        return self._queue.qsize()

    def start(self) -> None:
        for w in self._workers:
            w.start()
        self._serve_thread.start()

    # -- admission ----------------------------------------------------------------------
    def admit(self, msg: WebhookMessage) -> tuple[int, dict[str, Any]]:
        """Decide what to do with a parsed notification: (HTTP status, JSON answer)."""
        if self.on_resolved is not None and (msg.status == "resolved" or not msg.firing):
            self.on_resolved(msg)
        with self._lock:
            self.stats.received += 1
            if msg.status == "resolved" or not msg.firing:
                self.stats.resolved += 1
                self.log(f"resolved: {msg.alertname} ({len(msg.alerts)} alerts), not investigated")
                return 200, {"status": "resolved", "investigated": False}
            if not self._accepting:
                self.stats.rejected_full += 1
                return 503, {"status": "shutting down"}
        why = self.can_accept() if self.can_accept is not None else None
        if why:
            with self._lock:
                self.stats.unwritable += 1
            self.log(f"refused {msg.alertname} with 503 (Alertmanager retries): {why}")
            return 503, {"status": "cannot write reports", "error": why}
        with self._lock:
            now = time.monotonic()
            self._done = {k: t for k, t in self._done.items() if now - t < self.dedupe_seconds}
            key = content_key(msg)
            if msg.group_key in self.stats.in_flight or key in self._done:
                self.stats.duplicates += 1
                return 200, {"status": "duplicate", "investigated": False}
            try:
                self._queue.put_nowait(msg)
            except queue.Full:
                self.stats.rejected_full += 1
                self.log(f"queue full: {msg.alertname} refused with 503 (Alertmanager retries)")
                return 503, {"status": "queue full"}
            self.stats.in_flight.add(msg.group_key)
            self.stats.queued += 1
        self.log(f"queued: {msg.alertname} ({len(msg.firing)} firing alerts)")
        return 200, {"status": "queued", "investigated": True}

    def _work(self) -> None:
        while True:
            msg = self._queue.get()
            if msg is None:
                self._queue.task_done()
                return
            ok = False
            try:
                self.handle(msg)
                ok = True
            except Exception as exc:  # one failed investigation never stops the receiver
                text = exc.message if isinstance(exc, OpsmateError) else repr(exc)
                self.log(f"investigation of {msg.alertname} failed: {text}")
            finally:
                with self._lock:
                    self.stats.in_flight.discard(msg.group_key)
                    if ok:
                        self.stats.handled += 1
                        self._done[content_key(msg)] = time.monotonic()
                    else:
                        self.stats.failed += 1
                self._queue.task_done()

    # -- shutdown -----------------------------------------------------------------------
    def drain(self) -> None:
        """Stop accepting; wait for queued and running investigations; stop the server."""
        with self._lock:
            self._accepting = False
        self._httpd.shutdown()
        self._httpd.server_close()
        for _ in self._workers:
            self._queue.put(None)  # after every queued group: they all run first
        for w in self._workers:
            w.join()

    # -- HTTP ---------------------------------------------------------------------------
    def _authorized(self, header: str | None) -> bool:
        if not self.token:
            return True
        expected = f"Bearer {self.token}".encode()
        return hmac.compare_digest((header or "").encode(), expected)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = "opsmate-watch"
            sys_version = ""

            def log_message(self, format: str, *args: Any) -> None:
                return

            def handle_one_request(self) -> None:
                """One request, read within ``request_seconds`` of wall-clock time (the
                wait for it on a kept-alive connection included): a client that sends
                its headers or body a byte at a time has its connection shut."""
                server = receiver._httpd
                server.watch(self.connection, receiver.request_seconds)
                try:
                    super().handle_one_request()
                finally:
                    server.forget(self.connection)

            def _answer(self, status: int, body: dict[str, Any], **headers: str) -> None:
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in headers.items():
                    self.send_header(k.replace("_", "-"), v)
                self.end_headers()
                with contextlib.suppress(OSError):
                    self.wfile.write(raw)

            def do_GET(self) -> None:
                route = receiver.routes.get(self.path.split("?", 1)[0])
                if self.path in ("/-/healthy", "/-/ready"):
                    self._answer(200, {"status": "ok"})
                elif route is not None:
                    content_type, raw = route()
                    self.send_response(200)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    with contextlib.suppress(OSError):
                        self.wfile.write(raw)
                else:
                    self._answer(404, {"error": "POST Alertmanager webhooks here"})

            def do_POST(self) -> None:
                if not receiver._authorized(self.headers.get("Authorization")):
                    with receiver._lock:
                        receiver.stats.unauthorized += 1
                    self.close_connection = True
                    self._answer(401, {"error": "missing or wrong bearer token"})
                    return
                kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
                if kind != "application/json":  # no cross-site form post is ever read
                    with receiver._lock:
                        receiver.stats.rejected_bad += 1
                    self.close_connection = True
                    got = kind[:60] or "none"
                    self._answer(
                        415, {"error": f"Content-Type must be application/json, not {got}"}
                    )
                    return
                length = self.headers.get("Content-Length")
                if length is None or not length.isdigit():
                    self.close_connection = True
                    self._answer(411, {"error": "Content-Length required"})
                    return
                if int(length) > receiver.max_body_bytes:
                    self.close_connection = True  # the body is not read
                    self._answer(413, {"error": f"body above {receiver.max_body_bytes} bytes"})
                    return
                try:
                    raw = self.rfile.read(int(length))
                except OSError:
                    raw = b""
                if len(raw) < int(length):  # the body came too slowly: its connection was shut
                    with receiver._lock:
                        receiver.stats.timed_out += 1
                    self.close_connection = True
                    return
                try:
                    msg = parse_webhook_bytes(raw, where="webhook body")
                except OpsmateError as exc:
                    with receiver._lock:
                        receiver.stats.rejected_bad += 1
                    receiver.log(f"rejected a webhook: {exc.message}")
                    self._answer(400, {"error": exc.message})
                    return
                status, body = receiver.admit(msg)
                extra = {"Retry_After": "5"} if status == 503 else {}
                self._answer(status, body, **extra)

        return Handler
